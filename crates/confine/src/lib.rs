//! Runs a program confined by the Linux kernel to what a [`Profile`] allows.
//!
//! portcullis decides with the analysis and enforces with the kernel: a shell
//! call the policy allows can still be run confined, so that an analysis miss
//! is not a full compromise. This crate is the enforcing half. It knows
//! nothing of policies or tables: it takes concrete paths (the `paths` crate
//! finds them) and applies them, in a child process, in this order:
//!
//! 1. new namespaces: mount, PID (the program's `/proc` shows only its own
//!    processes, and all of them end with it), and network when the profile
//!    has no network (a user namespace first when not root, mapping the
//!    caller's own ids);
//! 2. mounts, private to the child: the directories above each read-only
//!    path bound onto themselves (a mount point cannot be renamed or removed,
//!    so `mv .git x && mkdir .git` fails), the read-only paths bound onto
//!    themselves read-only, the hidden paths covered (an empty read-only
//!    tmpfs over a directory, an empty unreadable file over a file);
//! 3. no new privileges; Landlock: the readable places (everything, or
//!    the profile's list) readable and executable,
//!    writable only the profile's roots, a private temporary directory and a
//!    few device files; signals and abstract Unix sockets scoped to the
//!    child's own domain (Landlock ABI 6) and, through its ptrace scoping, no
//!    reach into other processes' memory or `/proc` files;
//! 4. every capability dropped (bounding, ambient, effective, permitted,
//!    inheritable), even as root;
//! 5. a seccomp filter refusing what would undo the above or reach around it
//!    (`mount`, `umount2`, the new mount API, `pivot_root`, `chroot`,
//!    `unshare`, `setns`, new namespaces through `clone`, `ptrace`,
//!    `process_vm_*`, `io_uring_*`, `bpf`, `userfaultfd`, `perf_event_open`,
//!    `kexec_*`, modules, `open_by_handle_at`, keyrings, `TIOCSTI`);
//! 6. with a [`NameGuard`]: every system call that puts a new name in a
//!    directory (`open`/`openat`/`creat` with `O_CREAT`, `mkdir`, `mknod`,
//!    `symlink`, `link`, `rename`, in all their forms; `openat2` is
//!    refused with `ENOSYS`, so callers fall back to `openat`) is handed to
//!    the namespace's first process, which reads its arguments once, places
//!    the new name (its directory opened, resolved physically), asks the
//!    guard about names inside the writable trees, and performs the call
//!    itself on the program's behalf (same user, same mounts, same Landlock
//!    domain, the program's umask), so a path rewritten by another thread
//!    after the check changes nothing;
//!    With the host's network and [`Profile::unreachable_ports`], each
//!    `connect` is handed over the same way: the address read once, the
//!    port refused with `EACCES` or the program's own socket connected by
//!    the supervisor (TCP Fast Open, which connects from `sendto`, is
//!    refused);
//! 7. every other file descriptor closed, then `execve`.
//!
//! Why step 6: a mount or a Landlock rule can only name a path that exists.
//! A protected path that does not exist yet (a new `.vscode/tasks.json`, a
//! `.git/config` where there is no `.git`) has nothing to mount over, and
//! creating it on the host to mount over it would be a side effect of
//! confining. The guard refuses the name instead, when it is created.
//!
//! Children inherit all of it. If any step fails the program does not run:
//! [`run`] returns the step and the reason — it never runs a program
//! unconfined while claiming to confine it.
//!
//! What it is not: not a policy (the caller says what is writable); not
//! portable (Linux only: elsewhere [`run`] refuses, and
//! `docs/ARCHITECTURE.md` describes the macOS design); not a container (the
//! program sees the host's file system, users and processes, read-only).

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[cfg(target_os = "linux")]
mod linux;

/// Whether the confined program may use the network.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Network {
    /// A network namespace of its own: a loopback interface and nothing else.
    #[default]
    Off,
    /// The host's network.
    On,
}

/// What a confined program may do, as concrete absolute paths.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// Trees the program may write (and create, remove, rename in).
    pub writable: Vec<PathBuf>,
    /// Paths inside writable trees that stay read-only.
    pub read_only: Vec<PathBuf>,
    /// Paths inside read-only ones that are writable again (the exempt parts
    /// of a protected directory).
    pub writable_again: Vec<PathBuf>,
    /// Directories that must stay where they are (the ones above a read-only
    /// path inside a writable tree).
    pub pinned: Vec<PathBuf>,
    /// Paths the program cannot read: covered by something empty.
    pub hidden: Vec<PathBuf>,
    /// Where the program may read at all (with what is below); empty:
    /// everywhere. Hidden paths stay hidden either way.
    pub readable: Vec<PathBuf>,
    pub network: Network,
    /// Judges every new name inside the writable trees (step 6 of the
    /// crate's documentation); none: only the mounts and Landlock judge.
    pub guard: Option<Guard>,
    /// Ports no `connect` may reach, on any address, when the network is
    /// on (portcullis' own approval server); with the network off nothing
    /// outside is reachable anyway.
    pub unreachable_ports: Vec<u16>,
}

/// What a new name brings with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewName {
    /// Something empty or single: a new file, directory, device node or
    /// hard link.
    Entry,
    /// Possibly a whole tree: a rename (of either name), or a symlink that
    /// may point at one.
    Tree,
}

/// Decides whether a new name may appear at a path inside a writable tree.
pub trait NameGuard: Send + Sync {
    /// `path` is absolute: its directory as the kernel resolved it
    /// (symlinks followed), then the new name as written.
    fn allows(&self, path: &Path, what: NewName) -> bool;
}

/// A shared [`NameGuard`] in a [`Profile`].
#[derive(Clone)]
pub struct Guard(pub Arc<dyn NameGuard>);

impl fmt::Debug for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Guard(..)")
    }
}

impl PartialEq for Guard {
    fn eq(&self, other: &Guard) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Guard {}

/// The program to run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Command {
    /// A path, or a name looked up in the `PATH` of `env`.
    pub program: OsString,
    pub args: Vec<OsString>,
    /// The working directory (absolute).
    pub cwd: PathBuf,
    /// The whole environment of the program (`TMPDIR` is set on top).
    pub env: Vec<(OsString, OsString)>,
}

/// Why a program was not run.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    #[error("this system cannot confine a program: {0}")]
    Unsupported(String),
    #[error("`{0}` was not found (not a path, and not in PATH)")]
    NotFound(String),
    #[error("confining the program failed at {step}: {reason}")]
    Setup { step: String, reason: String },
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

/// What the kernel offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version (0: none).
    pub landlock_abi: u32,
}

/// The lowest Landlock ABI [`run`] accepts: 3 handles truncation, so a file
/// outside the writable trees cannot be emptied either.
pub const MIN_LANDLOCK_ABI: u32 = 3;

/// What this kernel supports, or why it cannot confine at all.
pub fn support() -> Result<Support, ConfineError> {
    #[cfg(target_os = "linux")]
    {
        linux::support()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(ConfineError::Unsupported(
            "confinement is implemented for Linux only".into(),
        ))
    }
}

/// Runs `command` confined to `profile` and waits for it. Returns its exit
/// code (128 + the signal's number when a signal ended it).
pub fn run(profile: &Profile, command: &Command) -> Result<i32, ConfineError> {
    #[cfg(target_os = "linux")]
    {
        linux::run(profile, command)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (profile, command);
        Err(ConfineError::Unsupported(
            "confinement is implemented for Linux only".into(),
        ))
    }
}
