//! Finding and reading the configuration layers (the only place the binary
//! reads configuration files). Parsing and merging belong to the policy crate.
//!
//! Layers, lowest first: Claude Code settings (when `import_claude_settings =
//! true`), user (`$XDG_CONFIG_HOME/portcullis/config.toml`), project
//! (`.portcullis.toml` at the project root, only when the project is listed in
//! `trusted_projects` of the user or managed layer), `--config FILE` (or
//! `PORTCULLIS_CONFIG`), managed (`/etc/portcullis/config.toml`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use portcullis_paths::Environment;
use portcullis_policy::{Layer, LayerKind, Policy};

/// Where the managed layer lives; `PORTCULLIS_MANAGED_CONFIG` overrides it (tests).
fn managed_path() -> PathBuf {
    std::env::var_os("PORTCULLIS_MANAGED_CONFIG")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/portcullis/config.toml"))
}

fn read_layer(kind: LayerKind, path: &Path) -> Result<Option<Layer>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && kind != LayerKind::Explicit => {
            return Ok(None);
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let name = path.display().to_string();
    let layer = if path.extension().is_some_and(|x| x == "json") {
        Layer::from_claude_settings(&name, &text)?
    } else {
        Layer::from_toml(kind, &name, &text)?
    };
    Ok(Some(layer))
}

/// The project root of a directory: the nearest ancestor holding `.git`, else the directory.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// Loads every layer that applies to a call made in `cwd` and merges them.
pub fn load(explicit: Option<&Path>, cwd: &Path, env: &Environment) -> Result<Policy> {
    let mut layers = Vec::new();
    let user_file = Path::new(&env.config_dir).join("config.toml");
    if let Some(l) = read_layer(LayerKind::User, &user_file)? {
        layers.push(l);
    }
    // Absolute, so that the policy can keep the agent from writing it.
    let explicit = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("PORTCULLIS_CONFIG").map(PathBuf::from))
        .map(|p| {
            std::fs::canonicalize(&p)
                .or_else(|_| std::path::absolute(&p))
                .unwrap_or(p)
        });
    if let Some(path) = &explicit {
        layers.extend(read_layer(LayerKind::Explicit, path)?);
    }
    if let Some(l) = read_layer(LayerKind::Managed, &managed_path())? {
        layers.push(l);
    }
    let root = project_root(cwd);
    let trusted = layers
        .iter()
        .filter(|l| matches!(l.kind, LayerKind::User | LayerKind::Managed))
        .any(|l| {
            l.trusted_projects.iter().any(|p| {
                let p = p.replacen('~', &env.home, usize::from(p.starts_with('~')));
                Path::new(&p) == root
            })
        });
    if trusted && let Some(l) = read_layer(LayerKind::Project, &root.join(".portcullis.toml"))? {
        layers.push(l);
    }
    if Policy::wants_claude_settings(&layers) {
        for file in [
            Path::new(&env.home).join(".claude/settings.json"),
            root.join(".claude/settings.json"),
        ] {
            if let Some(l) = read_layer(LayerKind::ClaudeSettings, &file)? {
                layers.push(l);
            }
        }
    }
    Ok(Policy::from_layers(layers))
}
