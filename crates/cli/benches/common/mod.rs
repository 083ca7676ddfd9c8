//! Shared by the benches that spawn portcullis: a command in a throw-away
//! home, with nothing of the machine's environment leaking in.

use std::path::Path;
use std::process::{Command, Stdio};

/// `program` with `root/home` as its home (XDG directories inside it),
/// `root/data` as portcullis' data directory, no managed configuration,
/// run from `root/home/proj`; stdout and stderr piped.
pub fn isolated(program: &Path, root: &Path) -> Command {
    let home = root.join("home");
    let mut c = Command::new(program);
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("PORTCULLIS_DATA_DIR", root.join("data"))
        .env("PORTCULLIS_MANAGED_CONFIG", root.join("managed.toml"))
        .current_dir(home.join("proj"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}
