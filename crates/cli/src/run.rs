//! `portcullis run [--config FILE] [--cwd DIR] [--network off|on] -- PROGRAM ARGS…`:
//! runs a program confined by the kernel to what the policy allows a shell
//! call in that workspace (`portcullis-confine` does the confining).
//!
//! - reads: everything outside the home directory, and in it its
//!   dot-entries, tool directories, the workspace and read roots (not other
//!   projects or documents); never the secret paths found on disk (the
//!   `paths` tables) nor portcullis' data directory;
//! - writes: the workspace roots and a private temporary directory (`TMPDIR`),
//!   except the protected paths found inside them; a new name in the
//!   workspace is judged by the same table when it is created (a new
//!   `.vscode/tasks.json`, a `.git` where there was none, a rename or symlink
//!   onto one: refused with `EACCES`);
//! - network: off unless `--network on`; the port of `[server] addr`
//!   (portcullis' approval server) is unreachable either way; with
//!   `--read-only` the workspace is not writable either;
//! - `--reveal PATH`: a secret file left readable (one the call was allowed
//!   to read); `--write PATH`: a file outside the workspace made writable
//!   (one the call was allowed to write); `--session ID` (with its token):
//!   the session's standing read and write grants on paths, the same way;
//! - environment: the caller's, without the variables the policy calls secret
//!   and without portcullis' session token.
//!
//! If the kernel cannot confine, it refuses and says what is missing; it never
//! runs the program unconfined.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use portcullis_confine::{Command, Guard, NameGuard, Network, NewName, Profile};
use portcullis_paths::{Environment, FsPaths, Scopes};

use crate::config_files;

#[derive(clap::Args)]
pub struct RunArgs {
    /// A configuration file, layered above the user's (also `PORTCULLIS_CONFIG`).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The working directory of the program (default: the current directory).
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// Whether the program may use the network: off (a network namespace of
    /// its own, loopback only) or on (the host's network).
    #[arg(long, value_enum, default_value = "off")]
    network: NetworkArg,
    /// Nothing writable but the private temporary directory: the workspace
    /// is read-only too.
    #[arg(long)]
    read_only: bool,
    /// Git's own data in the workspace's repositories (objects, refs, the
    /// index, their lock files) writable, so `git commit` works; the rest
    /// of `.git` (config, hooks, info …) stays read-only and cannot be
    /// created (`[confine] git_writes`).
    #[arg(long, conflicts_with = "read_only")]
    git_writes: bool,
    /// A file (or directory) the program may read after all — a secret, or a
    /// place outside the readable ones — because the call was allowed to read
    /// it (a grant, a person); repeatable. Exactly that: the rest of a hidden
    /// directory stays hidden.
    #[arg(long, value_name = "PATH")]
    reveal: Vec<PathBuf>,
    /// A file outside the workspace the program may write after all,
    /// because the call was allowed to write it (a grant, a person);
    /// repeatable. Exactly that file: not its directory. A file that does not
    /// exist yet is created empty first (the kernel can only name what
    /// exists) and removed again if the program leaves it empty. Never a
    /// protected path.
    #[arg(long = "write", value_name = "PATH")]
    write_also: Vec<PathBuf>,
    /// A portcullis session whose standing grants join the profile: the
    /// files and folders it may read are readable, the files it may write
    /// writable (session- and device-scoped grants; a `once` grant is for
    /// one call). Needs the session's token (`--token`, or
    /// `PORTCULLIS_SESSION_TOKEN`).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// The token that proves `--session`.
    #[arg(long, value_name = "TOKEN", requires = "session")]
    token: Option<String>,
    /// Print the confinement profile (JSON) instead of running anything.
    #[arg(long)]
    print_profile: bool,
    /// The program and its arguments, after `--`.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<OsString>,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum NetworkArg {
    Off,
    On,
}

/// Variables naming sockets of programs that act for the user (an ssh or gpg
/// agent signs with the user's keys): the sockets are hidden.
const AGENT_SOCKETS: &[&str] = &["SSH_AUTH_SOCK", "GPG_AGENT_INFO"];

/// Variables never passed to a confined program, whatever the policy says:
/// the proof of a portcullis session would let it act as the agent.
const NEVER_PASSED: &[&str] = &["PORTCULLIS_SESSION_TOKEN"];

/// The exit status when portcullis refuses to run the program (as `env`
/// and `timeout` use 125 for their own failures).
const REFUSED: u8 = 125;

pub fn main(args: &RunArgs) -> ExitCode {
    run(args).unwrap_or_else(|err| {
        eprintln!("portcullis: error: {err:#}");
        ExitCode::from(REFUSED)
    })
}

fn run(args: &RunArgs) -> Result<ExitCode> {
    let cwd = match &args.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("finding the current directory")?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .with_context(|| format!("--cwd {}: no such directory", cwd.display()))?;
    let Some(cwd_text) = cwd.to_str() else {
        bail!("the working directory {} is not UTF-8", cwd.display());
    };
    let env = Environment::from_process();
    let policy = config_files::load(args.config.as_deref(), &cwd, &env)?;
    let paths = Arc::new(FsPaths::new(&Scopes::of(&policy.workspace), &env));
    let mut found = paths
        .confinement_with(cwd_text, args.git_writes)
        .context("finding what to confine")?;
    let mut reveal: Vec<String> = Vec::new();
    for p in &args.reveal {
        let canonical = std::fs::canonicalize(p)
            .with_context(|| format!("--reveal {}: no such file or directory", p.display()))?;
        reveal.push(canonical.to_string_lossy().into_owned());
    }
    // The user's agents' sockets wherever the environment says they are (the
    // tables cover their usual places): they act for the user unconfined.
    for var in AGENT_SOCKETS {
        if let Some(sock) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            let path = PathBuf::from(sock);
            if path.is_absolute() && path.exists() {
                found.hidden.push(path.to_string_lossy().into_owned());
            }
        }
    }
    let mut writable = if args.read_only {
        Vec::new()
    } else {
        found.writable.clone()
    };
    let mut write_also = args.write_also.clone();
    if let Some(session) = &args.session {
        let (read, write) = session_grants(args, session, &policy, &env)?;
        reveal.extend(read);
        write_also.extend(write);
    }
    let mut made = Vec::new();
    for p in &write_also {
        let (path, created) = writable_file(&paths, p, cwd_text)?;
        if let Some(c) = created {
            made.push(c);
        }
        // Visible too, wherever it is.
        push_new(&mut reveal, path.clone());
        push_new(&mut writable, path);
    }
    found.reveal(&reveal);
    let profile = Profile {
        writable: writable.iter().map(PathBuf::from).collect(),
        read_only: found.read_only.iter().map(PathBuf::from).collect(),
        writable_again: found.writable_again.iter().map(PathBuf::from).collect(),
        pinned: found.pinned.iter().map(PathBuf::from).collect(),
        hidden: found.hidden.iter().map(PathBuf::from).collect(),
        readable: found.readable.iter().map(PathBuf::from).collect(),
        network: match args.network {
            NetworkArg::Off => Network::Off,
            NetworkArg::On => Network::On,
        },
        guard: Some(Guard(Arc::new(ProtectedNames {
            paths: Arc::clone(&paths),
            git_writes: args.git_writes,
        }))),
        // portcullis' approval server: never reachable from a confined
        // program, whatever its network.
        unreachable_ports: policy.server_port().into_iter().collect(),
    };
    if args.print_profile {
        let list = |v: &[String]| serde_json::json!(v);
        println!(
            "{}",
            serde_json::json!({
                "writable": list(&writable),
                "read_only": list(&found.read_only),
                "writable_again": list(&found.writable_again),
                "pinned": list(&found.pinned),
                "hidden": list(&found.hidden),
                "readable": list(&found.readable),
                "network": matches!(args.network, NetworkArg::On),
                "new_names": "judged by the protected table",
                "unreachable_ports": policy.server_port().into_iter().collect::<Vec<_>>(),
                "git_writes": args.git_writes,
            })
        );
        for m in made {
            m.remove_if_untouched();
        }
        return Ok(ExitCode::SUCCESS);
    }
    let passed: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| {
            k.to_str().is_some_and(|name| {
                !NEVER_PASSED.contains(&name) && policy.secret_env_shape(name).is_none()
            })
        })
        .collect();
    let mut command = args.command.iter();
    let Some(program) = command.next() else {
        bail!("no program to run: `portcullis run -- PROGRAM ARGS…`");
    };
    let code = portcullis_confine::run(
        &profile,
        &Command {
            program: program.clone(),
            args: command.cloned().collect(),
            cwd,
            env: passed,
        },
    )
    .context("portcullis run refused to run the program");
    for m in made {
        m.remove_if_untouched();
    }
    Ok(ExitCode::from(u8::try_from(code?).unwrap_or(1)))
}

/// `--session`: the paths its standing grants open up, (readable,
/// writable files), from the store through the engine. Folder write grants
/// are left out: the protected paths inside a folder outside the workspace
/// are not listed, so writes there stay refused inside.
fn session_grants(
    args: &RunArgs,
    session: &str,
    policy: &portcullis_policy::Policy,
    env: &Environment,
) -> Result<(Vec<String>, Vec<PathBuf>)> {
    use portcullis_engine::{CallContext, Engine, SessionSources, SessionStatus};
    use portcullis_store::{GrantTarget, Op};
    let token = args
        .token
        .clone()
        .or_else(|| std::env::var("PORTCULLIS_SESSION_TOKEN").ok())
        .filter(|t| !t.is_empty());
    let Some(token) = token else {
        bail!(
            "--session {session}: the session's token is needed (--token or PORTCULLIS_SESSION_TOKEN): its grants are its own"
        );
    };
    let dir = portcullis_store::default_data_dir();
    let store = portcullis_store::Store::open(&dir)
        .with_context(|| format!("opening the store in {}", dir.display()))?;
    let facts = FsPaths::new(&Scopes::of(&policy.workspace), env);
    let engine = Engine::new(store, policy.clone(), facts);
    let ctx = CallContext {
        sources: SessionSources {
            body: Some(session.to_string()),
            ..Default::default()
        },
        token: Some(token),
        require_token: true,
        dry_run: true,
        can_confine: true,
        asked_in_agent: false,
        agent_link: None,
        remote_device: None,
    };
    let (status, grants) = engine.standing_path_grants(&ctx, crate::state::now())?;
    if status != SessionStatus::Active {
        bail!(
            "--session {session}: {} — no grants to add",
            match status {
                SessionStatus::Unauthenticated => "the token does not prove this session",
                SessionStatus::Inactive => "the session has ended or was revoked",
                _ => "no such session",
            }
        );
    }
    let (mut read, mut write) = (Vec::new(), Vec::new());
    for g in grants {
        let GrantTarget::Path { canonical, folder } = g.target else {
            continue;
        };
        match g.op {
            Op::Read => read.push(canonical),
            Op::Write if !folder => write.push(PathBuf::from(canonical)),
            _ => {}
        }
    }
    Ok((read, write))
}

fn push_new(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

/// A file `--write` made empty so the kernel could name it: removed after
/// the run if it is still that empty file.
struct Made {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

impl Made {
    fn remove_if_untouched(self) {
        use std::os::unix::fs::MetadataExt;
        if let Ok(m) = std::fs::symlink_metadata(&self.path)
            && m.is_file()
            && m.len() == 0
            && m.dev() == self.dev
            && m.ino() == self.ino
        {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// `--write PATH`: its canonical path (its directory resolved, the file
/// itself not followed), made empty if it did not exist. Refused: a
/// protected path, a directory, a symlink, a path whose directory does not
/// exist.
fn writable_file(paths: &FsPaths, p: &Path, cwd: &str) -> Result<(String, Option<Made>)> {
    use std::os::unix::fs::MetadataExt;
    let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
        bail!("--write {}: not a file's path", p.display());
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let dir = std::fs::canonicalize(Path::new(cwd).join(dir))
        .with_context(|| format!("--write {}: its directory does not exist", p.display()))?;
    let path = dir.join(name);
    let text = path.to_string_lossy().into_owned();
    if let Some(why) = paths.refuses_new_name(&text, false) {
        bail!("--write {text}: a protected path ({why}) is never writable");
    }
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.is_file() => Ok((text, None)),
        Ok(_) => bail!("--write {text}: only a regular file can be made writable"),
        Err(_) => {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .with_context(|| format!("--write {text}: creating it"))?;
            let m = file.metadata()?;
            Ok((
                text,
                Some(Made {
                    path,
                    dev: m.dev(),
                    ino: m.ino(),
                }),
            ))
        }
    }
}

/// New names in the workspace, judged by the protected table as a write
/// would be: a protected path itself is never created; a tree (a rename, a
/// symlink) may not arrive where it would put one in place either (`.git`,
/// which holds `.git/config`; `.github`, which holds its workflows). With
/// `--git-writes`, git's own data in a repository's `.git` is the exception.
struct ProtectedNames {
    paths: Arc<FsPaths>,
    /// `--git-writes`.
    git_writes: bool,
}

impl NameGuard for ProtectedNames {
    fn allows(&self, path: &Path, what: NewName) -> bool {
        let text = path.to_string_lossy();
        // With `--git-writes`, git's own data in a repository (objects,
        // refs, the index, their lock files): what `git commit` writes.
        (self.git_writes && FsPaths::is_git_data(&text))
            || self
                .paths
                .refuses_new_name(&text, what == NewName::Tree)
                .is_none()
    }
}
