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
use serde::{Deserialize, Serialize};

/// Where the managed layer lives; `PORTCULLIS_MANAGED_CONFIG` overrides it (tests).
fn managed_path() -> PathBuf {
    std::env::var_os("PORTCULLIS_MANAGED_CONFIG")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/portcullis/config.toml"))
}

/// One configuration file as read: its text, or the error reading it gave
/// (a missing file is an error only where the file is required).
#[derive(Clone, Debug, Serialize, Deserialize)]
enum FileText {
    Text(String),
    Missing(String),
    Unreadable(String),
}

impl FileText {
    fn read(path: &Path) -> FileText {
        match std::fs::read_to_string(path) {
            Ok(t) => FileText::Text(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => FileText::Missing(e.to_string()),
            Err(e) => FileText::Unreadable(e.to_string()),
        }
    }
}

/// Every file a call's configuration may be built from, read in one go: the
/// files of every layer that could apply, whether or not it does (which
/// depends on their contents). The hook reads them and either builds the
/// policy itself or hands them to the daemon, which builds it the same way
/// ([`Sources::build`]): one answer whichever does it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Sources {
    user: PathBuf,
    explicit: Option<PathBuf>,
    managed: PathBuf,
    root: PathBuf,
    home: String,
    files: Vec<(PathBuf, FileText)>,
}

impl Sources {
    /// Reads the candidate files for a call made in `cwd`.
    pub fn read(explicit: Option<&Path>, cwd: &Path, env: &Environment) -> Sources {
        let user = Path::new(&env.config_dir).join("config.toml");
        // Absolute, so that the policy can keep the agent from writing it.
        let explicit = explicit
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("PORTCULLIS_CONFIG").map(PathBuf::from))
            .map(|p| {
                std::fs::canonicalize(&p)
                    .or_else(|_| std::path::absolute(&p))
                    .unwrap_or(p)
            });
        let managed = managed_path();
        let root = project_root(cwd);
        let mut paths = vec![user.clone()];
        paths.extend(explicit.clone());
        paths.push(managed.clone());
        paths.push(root.join(".portcullis.toml"));
        paths.push(Path::new(&env.home).join(".claude/settings.json"));
        paths.push(root.join(".claude/settings.json"));
        let files = paths
            .into_iter()
            .map(|p| {
                let text = FileText::read(&p);
                (p, text)
            })
            .collect();
        Sources {
            user,
            explicit,
            managed,
            root,
            home: env.home.clone(),
            files,
        }
    }

    fn layer(&self, kind: LayerKind, path: &Path) -> Result<Option<Layer>> {
        let reading = || format!("reading {}", path.display());
        let text = match self.files.iter().find(|(p, _)| p == path).map(|(_, t)| t) {
            Some(FileText::Text(t)) => t,
            Some(FileText::Missing(_)) | None if kind != LayerKind::Explicit => return Ok(None),
            Some(FileText::Missing(e) | FileText::Unreadable(e)) => {
                return Err(anyhow::anyhow!("{e}")).with_context(reading);
            }
            None => return Err(anyhow::anyhow!("the file was not read")).with_context(reading),
        };
        let name = path.display().to_string();
        let layer = if path.extension().is_some_and(|x| x == "json") {
            Layer::from_claude_settings(&name, text)?
        } else {
            Layer::from_toml(kind, &name, text)?
        };
        Ok(Some(layer))
    }

    /// Merges every layer that applies.
    pub fn build(&self) -> Result<Policy> {
        let mut layers = Vec::new();
        layers.extend(self.layer(LayerKind::User, &self.user)?);
        if let Some(path) = &self.explicit {
            layers.extend(self.layer(LayerKind::Explicit, path)?);
        }
        layers.extend(self.layer(LayerKind::Managed, &self.managed)?);
        let trusted = layers
            .iter()
            .filter(|l| matches!(l.kind, LayerKind::User | LayerKind::Managed))
            .any(|l| {
                portcullis_policy::trusts_project(&l.trusted_projects, &self.home, &self.root)
            });
        if trusted {
            layers.extend(self.layer(LayerKind::Project, &self.root.join(".portcullis.toml"))?);
        }
        if Policy::wants_claude_settings(&layers) {
            for file in [
                Path::new(&self.home).join(".claude/settings.json"),
                self.root.join(".claude/settings.json"),
            ] {
                layers.extend(self.layer(LayerKind::ClaudeSettings, &file)?);
            }
        }
        Ok(Policy::from_layers(layers))
    }
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
    Sources::read(explicit, cwd, env).build()
}
