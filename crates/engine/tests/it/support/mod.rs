//! Shared by the engine's tests and bench: an engine over a throw-away
//! tree — `ROOT/home` the home, `ROOT/data` the store — judging under one
//! configuration layer.

use std::path::Path;

use portcullis_engine::Engine;
use portcullis_paths::{Environment, FsPaths, Scopes};
use portcullis_policy::{Layer, LayerKind, Policy};
use portcullis_store::Store;

/// The environment of a tree: its home and portcullis' directories in it.
pub fn environment(root: &Path) -> Environment {
    Environment {
        home: root.join("home").to_string_lossy().into(),
        config_dir: root
            .join("home/.config/portcullis")
            .to_string_lossy()
            .into(),
        data_dir: root.join("data").to_string_lossy().into(),
    }
}

/// An engine over the tree at `root` (its `data` directory must exist),
/// judging under `config` (one user layer).
pub fn engine(root: &Path, config: &str) -> Engine<FsPaths> {
    let layer = Layer::from_toml(LayerKind::User, "test.toml", config).expect("config parses");
    let policy = Policy::from_layers(vec![layer]);
    let facts = FsPaths::new(&Scopes::of(&policy.workspace), &environment(root));
    let store = Store::open(&root.join("data")).expect("open the store");
    Engine::new(store, policy, facts)
}
