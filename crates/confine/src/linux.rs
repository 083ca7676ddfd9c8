//! The Linux implementation: a child process that confines itself, then
//! becomes the program. The parent waits and reports.
//!
//! Everything the child needs is prepared before `fork` (C strings, the
//! sorted mount lists, the resolved program), so the child only makes system
//! calls. A setup failure in the child is written to a close-on-exec pipe as
//! "step: reason"; the parent reads that pipe to its end, so an empty read
//! means the `execve` succeeded.

#![allow(unsafe_code)]

mod landlock;
mod seccomp;
mod supervisor;

use std::ffi::{CString, OsStr, OsString};
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::{Command, ConfineError, Guard, MIN_LANDLOCK_ABI, Network, Profile, Support};

pub fn support() -> Result<Support, ConfineError> {
    let abi = landlock::abi();
    if abi < MIN_LANDLOCK_ABI {
        return Err(ConfineError::Unsupported(if abi == 0 {
            "the kernel has no Landlock (it needs Linux 6.2 or later with Landlock enabled: `lsm=…,landlock`)".into()
        } else {
            format!(
                "the kernel's Landlock ABI is {abi}; {MIN_LANDLOCK_ABI} or later is needed (Linux 6.2)"
            )
        }));
    }
    Ok(Support { landlock_abi: abi })
}

/// What the child does, prepared.
struct Plan {
    root: bool,
    uid: u32,
    gid: u32,
    network: Network,
    abi: u32,
    /// Binds onto themselves, shallow first.
    binds: Vec<(CString, Bind)>,
    hidden: Vec<CString>,
    /// The run's private directory (empty on the host), its temporary
    /// directory and the file that covers hidden files, both in a tmpfs of
    /// the child's own.
    scratch: CString,
    tmp: CString,
    /// Landlock rules: (path, writable).
    landlock: Vec<(CString, landlock::Grant)>,
    empty_file: CString,
    cwd: CString,
    program: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    /// The judge of new names in the writable trees, and those trees.
    guard: Option<Guard>,
    writable: Vec<PathBuf>,
    /// What the supervisor is handed (none: there is no supervisor).
    notify: seccomp::Notify,
    unreachable_ports: Vec<u16>,
}

/// The private directory of one run, empty on the host (the child's own
/// tmpfs covers it). Removed when the run ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn run(profile: &Profile, command: &Command) -> Result<i32, ConfineError> {
    let support = support()?;
    let scratch = make_scratch()?;
    let tmp = scratch.0.join("tmp");
    let plan = prepare(profile, command, support.landlock_abi, &scratch.0, &tmp)?;

    let (read_end, write_end) = pipe()?;
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: fork has no preconditions; the child only makes system calls
    // with data prepared above and ends in execve or _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io_error("starting the confined process"));
    }
    if pid == 0 {
        drop(read_end);
        // The program dies with `portcullis run` (an agent that gives up on
        // a call kills what it started); a parent already gone is no parent.
        // SAFETY: prctl and getppid take integers only.
        let orphaned = unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0
                || libc::getppid() != parent
        };
        let failure = if orphaned {
            fail("following portcullis run's lifetime")
        } else {
            confine_and_exec(&plan, write_end.as_raw_fd())
        };
        report(write_end.as_raw_fd(), &failure);
        // SAFETY: _exit ends the child without running the parent's
        // destructors (the scratch directory belongs to the parent).
        unsafe { libc::_exit(126) };
    }
    drop(write_end);
    // Ctrl-C reaches the program (the same process group) and ends it; this
    // process stays to report its status and remove the scratch directory.
    // SAFETY: setting SIG_IGN for SIGINT and SIGQUIT in this process only.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGQUIT, libc::SIG_IGN);
    }
    let mut message = String::new();
    let mut reader = std::fs::File::from(read_end);
    let _ = reader.read_to_string(&mut message);
    let status = wait(pid)?;
    drop(scratch);
    if let Some((step, reason)) = message.split_once(": ") {
        return Err(ConfineError::Setup {
            step: step.to_string(),
            reason: reason.to_string(),
        });
    }
    if !message.is_empty() {
        return Err(ConfineError::Setup {
            step: "setup".into(),
            reason: message,
        });
    }
    Ok(status)
}

fn make_scratch() -> Result<Scratch, ConfineError> {
    let base = std::env::temp_dir();
    let mut template = base
        .join("portcullis-run-XXXXXX")
        .into_os_string()
        .into_vec();
    template.push(0);
    // SAFETY: `template` is a writable NUL-terminated buffer ending in
    // XXXXXX, as mkdtemp requires; it is rewritten in place.
    let made = unsafe { libc::mkdtemp(template.as_mut_ptr().cast()) };
    if made.is_null() {
        return Err(io_error("creating the run's private directory"));
    }
    template.pop();
    // Left empty on the host: the child mounts a tmpfs of its own over it
    // (`private_scratch`), so nothing the program writes there outlives it,
    // even if this process is killed before it removes the directory.
    Ok(Scratch(PathBuf::from(OsString::from_vec(template))))
}

fn prepare(
    profile: &Profile,
    command: &Command,
    abi: u32,
    scratch: &Path,
    tmp: &Path,
) -> Result<Plan, ConfineError> {
    // SAFETY: getuid and getgid cannot fail and have no preconditions.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let program = resolve_program(&command.program, &command.env)?;
    let mut argv = vec![cstring(command.program.as_bytes())?];
    for a in &command.args {
        argv.push(cstring(a.as_bytes())?);
    }
    let mut envp = Vec::new();
    for (k, v) in &command.env {
        if k.as_bytes() == b"TMPDIR" {
            continue;
        }
        let mut kv = k.as_bytes().to_vec();
        kv.push(b'=');
        kv.extend_from_slice(v.as_bytes());
        envp.push(cstring(&kv)?);
    }
    let mut tmpdir = b"TMPDIR=".to_vec();
    tmpdir.extend_from_slice(tmp.as_os_str().as_bytes());
    envp.push(cstring(&tmpdir)?);

    let mut landlock = Vec::new();
    if profile.readable.is_empty() {
        landlock.push((cstring(b"/")?, landlock::Grant::Read));
    }
    for r in &profile.readable {
        landlock.push((path_cstring(r)?, landlock::Grant::Read));
    }
    for w in profile.writable.iter().map(PathBuf::as_path).chain([tmp]) {
        landlock.push((path_cstring(w)?, landlock::Grant::Write));
    }
    for dev in DEVICES {
        if Path::new(dev).exists() {
            landlock.push((cstring(dev.as_bytes())?, landlock::Grant::Device));
        }
    }
    Ok(Plan {
        root: uid == 0,
        uid,
        gid,
        network: profile.network,
        abi,
        binds: binds(profile)?,
        hidden: by_depth(&profile.hidden)?,
        landlock,
        scratch: path_cstring(scratch)?,
        tmp: path_cstring(tmp)?,
        empty_file: path_cstring(&scratch.join("empty"))?,
        cwd: path_cstring(&command.cwd)?,
        program,
        argv,
        envp,
        guard: profile.guard.clone(),
        writable: profile.writable.clone(),
        notify: seccomp::Notify {
            // Nothing to judge without writable trees (the temporary
            // directory is the run's own).
            names: profile.guard.is_some() && !profile.writable.is_empty(),
            connect: profile.network == Network::On && !profile.unreachable_ports.is_empty(),
        },
        unreachable_ports: profile.unreachable_ports.clone(),
    })
}

/// Device files a program may write and use (terminals included): writing
/// any other device, a disk for one, stays refused.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// Every bind onto itself, shallow first (a mount over a deep path must not
/// be covered by a later mount over the path above it): pinned directories
/// and writable-again parts as they are, read-only paths read-only. At the
/// same depth a read-only bind comes last.
fn binds(profile: &Profile) -> Result<Vec<(CString, Bind)>, ConfineError> {
    let mut all: Vec<(&PathBuf, Bind)> = profile
        .pinned
        .iter()
        .map(|p| (p, Bind::Pin))
        .chain(profile.writable_again.iter().map(|p| (p, Bind::Writable)))
        .chain(profile.read_only.iter().map(|p| (p, Bind::ReadOnly)))
        .collect();
    all.sort_by_key(|(p, kind)| (p.components().count(), *kind));
    all.dedup();
    all.into_iter()
        .map(|(p, kind)| Ok((path_cstring(p)?, kind)))
        .collect()
}

/// How a path is bound onto itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Bind {
    /// As it is: a mount point cannot be renamed or removed.
    Pin,
    /// Writable again inside a read-only bind (a bind copies its source
    /// mount's read-only flag, so it is remounted writable).
    Writable,
    /// Read-only.
    ReadOnly,
}

/// Shallow paths first: a mount over a deep path must not be covered by a
/// later mount over the path above it.
fn by_depth(paths: &[PathBuf]) -> Result<Vec<CString>, ConfineError> {
    let mut sorted: Vec<&PathBuf> = paths.iter().collect();
    sorted.sort_by_key(|p| p.components().count());
    sorted.dedup();
    sorted.into_iter().map(|p| path_cstring(p)).collect()
}

/// `program` as execve needs it: a path as given when it has a `/`, else
/// the first executable file of that name in the environment's `PATH`.
fn resolve_program(program: &OsStr, env: &[(OsString, OsString)]) -> Result<CString, ConfineError> {
    let bytes = program.as_bytes();
    if bytes.is_empty() {
        return Err(ConfineError::NotFound(String::new()));
    }
    if bytes.contains(&b'/') {
        return cstring(bytes);
    }
    let path = env
        .iter()
        .find(|(k, _)| k.as_bytes() == b"PATH")
        .map_or_else(
            || OsString::from("/usr/local/bin:/usr/bin:/bin"),
            |(_, v)| v.clone(),
        );
    for dir in path
        .as_bytes()
        .split(|&b| b == b':')
        .filter(|d| !d.is_empty())
    {
        let candidate = Path::new(OsStr::from_bytes(dir)).join(program);
        if is_executable(&candidate) {
            return path_cstring(&candidate);
        }
    }
    Err(ConfineError::NotFound(
        program.to_string_lossy().into_owned(),
    ))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn cstring(bytes: &[u8]) -> Result<CString, ConfineError> {
    CString::new(bytes).map_err(|_| ConfineError::Setup {
        step: "preparing".into(),
        reason: format!("`{}` contains a NUL byte", String::from_utf8_lossy(bytes)),
    })
}

fn path_cstring(p: &Path) -> Result<CString, ConfineError> {
    cstring(p.as_os_str().as_bytes())
}

fn io_error(what: &str) -> ConfineError {
    ConfineError::Io {
        what: what.to_string(),
        source: std::io::Error::last_os_error(),
    }
}

fn pipe() -> Result<(OwnedFd, OwnedFd), ConfineError> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io_error("creating the setup pipe"));
    }
    let [r, w] = fds;
    // SAFETY: both descriptors were just created and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(r), OwnedFd::from_raw_fd(w)) })
}

fn wait(pid: libc::pid_t) -> Result<i32, ConfineError> {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer; `pid` is our child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            break;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return Err(io_error("waiting for the confined process"));
        }
    }
    Ok(exit_code(status))
}

/// A failed step: its name and errno.
struct Failure {
    step: &'static str,
    errno: i32,
    detail: Option<Vec<u8>>,
}

fn fail(step: &'static str) -> Failure {
    Failure {
        step,
        errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        detail: None,
    }
}

fn fail_at(step: &'static str, path: &CString) -> Failure {
    Failure {
        detail: Some(path.as_bytes().to_vec()),
        ..fail(step)
    }
}

fn report(fd: i32, f: &Failure) {
    let mut text = f.step.as_bytes().to_vec();
    if let Some(d) = &f.detail {
        text.extend_from_slice(b" `");
        text.extend_from_slice(d);
        text.push(b'`');
    }
    text.extend_from_slice(b": ");
    text.extend_from_slice(
        std::io::Error::from_raw_os_error(f.errno)
            .to_string()
            .as_bytes(),
    );
    // SAFETY: `text` is a valid buffer of its length; a short or failed
    // write only loses the message (the parent still sees the failure).
    unsafe { libc::write(fd, text.as_ptr().cast(), text.len()) };
}

/// The child: confine, then exec. Returns only on failure.
fn confine_and_exec(plan: &Plan, report_fd: i32) -> Failure {
    match confine(plan, report_fd) {
        Err(f) => f,
        Ok(()) => {
            let mut argv: Vec<*const libc::c_char> = plan.argv.iter().map(|a| a.as_ptr()).collect();
            argv.push(std::ptr::null());
            let mut envp: Vec<*const libc::c_char> = plan.envp.iter().map(|e| e.as_ptr()).collect();
            envp.push(std::ptr::null());
            // SAFETY: program, argv and envp are NUL-terminated strings and
            // NULL-terminated arrays that outlive the call.
            unsafe { libc::execve(plan.program.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
            fail_at("starting the program", &plan.program)
        }
    }
}

fn confine(plan: &Plan, report_fd: i32) -> Result<(), Failure> {
    namespaces(plan)?;
    // The next child is the new PID namespace's first process: when it ends,
    // the kernel ends every process in the namespace, so nothing the program
    // starts outlives it, and its `/proc` shows only its own.
    let init = fork_or_fail("starting the first process of the namespace")?;
    if init > 0 {
        pass_on_status(init, report_fd);
    }
    // The namespace's first process: its parent is outside (pid 0 here).
    die_with_parent(0)?;
    mounts(plan)?;
    // SAFETY: chdir takes a NUL-terminated path.
    if unsafe { libc::chdir(plan.cwd.as_ptr()) } != 0 {
        return Err(fail_at("entering the working directory", &plan.cwd));
    }
    // SAFETY: prctl with PR_SET_NO_NEW_PRIVS takes integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(fail("setting no-new-privileges"));
    }
    landlock::restrict(plan.abi, &plan.landlock)?;
    drop_capabilities()?;
    // With a supervisor, the program hands its listener to the init over
    // this pair.
    let channel = if plan.notify.any() {
        Some(socket_pair()?)
    } else {
        None
    };
    // The program runs as the init's child: the init reaps what is
    // orphaned, supervises, and passes the program's status on.
    let program = fork_or_fail("starting the program's process")?;
    if program > 0 {
        // The program sees this process as pid 1: not dumpable, so its
        // memory and descriptors (`/proc/1/mem`, `/proc/1/fd`) are out of the
        // program's reach even where ptrace rules would let a process of the
        // same user and Landlock domain in.
        // SAFETY: prctl takes integer arguments.
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
        let Some((init_end, program_end)) = channel else {
            reap_until(program, report_fd)
        };
        drop(program_end);
        let Some(listener) = recv_fd(&init_end) else {
            // The program failed before its filter: it reports.
            reap_until(program, report_fd)
        };
        drop(init_end);
        supervise(
            &supervisor::Supervisor {
                listener,
                guard: plan.guard.as_ref(),
                writable: &plan.writable,
                unreachable_ports: &plan.unreachable_ports,
                pending: std::cell::RefCell::new(Vec::new()),
            },
            program,
            report_fd,
        )
    }
    die_with_parent(1)?;
    let listener = seccomp::install(plan.notify)?;
    if let (Some(listener), Some((init_end, program_end))) = (listener, channel) {
        drop(init_end);
        send_fd(&program_end, &listener)?;
    }
    close_other_fds(report_fd)?;
    Ok(())
}

fn socket_pair() -> Result<(OwnedFd, OwnedFd), Failure> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors socketpair writes.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    } != 0
    {
        return Err(fail("creating the channel for the supervisor's listener"));
    }
    let [a, b] = fds;
    // SAFETY: both descriptors were just created and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(a), OwnedFd::from_raw_fd(b)) })
}

/// Runs `f` with a one-byte message whose control buffer holds room for one
/// descriptor (`SCM_RIGHTS`): what [`send_fd`] fills and [`recv_fd`] reads.
fn with_fd_message<R>(f: impl FnOnce(&mut libc::msghdr) -> R) -> R {
    let mut byte = [0u8; 1];
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<i32>() as u32) } as usize;
    // u64 words: aligned for cmsghdr.
    let mut control = vec![0u64; space.div_ceil(8)];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: a zeroed msghdr is valid; it then points at the live buffers
    // above, which outlive `f`.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    f(&mut msg)
}

/// Sends `fd` over the Unix socket `sock` (SCM_RIGHTS).
fn send_fd(sock: &OwnedFd, fd: &OwnedFd) -> Result<(), Failure> {
    with_fd_message(|msg| {
        // SAFETY: the control buffer has room for one descriptor's header
        // and data (with_fd_message); sendmsg reads the live message.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(msg);
            if cmsg.is_null() {
                return Err(fail("sending the supervisor's listener"));
            }
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<i32>() as u32) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<i32>(), fd.as_raw_fd());
            if libc::sendmsg(sock.as_raw_fd(), msg, 0) != 1 {
                return Err(fail("sending the supervisor's listener"));
            }
        }
        Ok(())
    })
}

/// Receives one descriptor sent with [`send_fd`]; none when the other end
/// closed without sending.
fn recv_fd(sock: &OwnedFd) -> Option<OwnedFd> {
    with_fd_message(|msg| {
        // SAFETY: recvmsg fills the live message; the received descriptor
        // is owned from here.
        unsafe {
            loop {
                let n = libc::recvmsg(sock.as_raw_fd(), msg, libc::MSG_CMSG_CLOEXEC);
                if n < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {
                    continue;
                }
                if n != 1 {
                    return None;
                }
                break;
            }
            let cmsg = libc::CMSG_FIRSTHDR(msg);
            if cmsg.is_null()
                || (*cmsg).cmsg_level != libc::SOL_SOCKET
                || (*cmsg).cmsg_type != libc::SCM_RIGHTS
            {
                return None;
            }
            let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<i32>());
            (fd >= 0).then(|| OwnedFd::from_raw_fd(fd))
        }
    })
}

/// The namespace's first process with a supervisor: answers the program's
/// handed-over calls while reaping every child, until the program ends;
/// then exits with its status. Never returns.
fn supervise(sup: &supervisor::Supervisor<'_>, program: libc::pid_t, report_fd: i32) -> ! {
    // SAFETY: closing this process' copy of the report pipe; pidfd_open
    // takes a pid and flags.
    let pidfd = unsafe {
        libc::close(report_fd);
        libc::syscall(libc::SYS_pidfd_open, program, 0) as i32
    };
    // The program waits for every answer: switching to this process and
    // back on one CPU (Linux 6.6) costs a fraction of waking it on another.
    // Older kernels refuse the flag and keep the ordinary wake-up.
    const SYNC_WAKE_UP: libc::c_ulong = 1; // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
    // SAFETY: SET_FLAGS takes the flags as its argument's value.
    unsafe {
        libc::ioctl(
            sup.listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS,
            SYNC_WAKE_UP,
        )
    };
    let mut listening = true;
    loop {
        let mut fds = vec![
            libc::pollfd {
                fd: if listening {
                    sup.listener.as_raw_fd()
                } else {
                    -1
                },
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // Connects under way: done when writable (or failed).
        fds.extend(sup.pending_fds().into_iter().map(|fd| libc::pollfd {
            fd,
            events: libc::POLLOUT,
            revents: 0,
        }));
        // Orphans that end are reaped at least once a second.
        // SAFETY: `fds` is a valid array of its length.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 1000) };
        if ready > 0 {
            for done in fds.iter().skip(2).filter(|f| f.revents != 0) {
                sup.finish_connect(done.fd);
            }
            if let Some(listener) = fds.first() {
                if listener.revents & libc::POLLIN != 0 {
                    sup.handle_one();
                } else if listener.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
                    // No process is left under the filter.
                    listening = false;
                }
            }
        }
        loop {
            let mut status = 0;
            // SAFETY: a valid out-pointer; WNOHANG never blocks.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid == program {
                // SAFETY: _exit ends the process.
                unsafe { libc::_exit(exit_code(status)) };
            }
            if pid <= 0 {
                break;
            }
        }
    }
}

fn fork_or_fail(step: &'static str) -> Result<libc::pid_t, Failure> {
    // SAFETY: fork has no preconditions; this process is single-threaded.
    let pid = unsafe { libc::fork() };
    if pid < 0 { Err(fail(step)) } else { Ok(pid) }
}

/// Dies (SIGKILL) when the parent does; fails if it is already gone (the
/// parent pid is no longer `parent`, as this process sees pids: 0 for a
/// parent outside its PID namespace).
fn die_with_parent(parent: libc::pid_t) -> Result<(), Failure> {
    // SAFETY: prctl and getppid take integers only.
    let orphaned = unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0
            || libc::getppid() != parent
    };
    if orphaned {
        return Err(fail("following portcullis run's lifetime"));
    }
    Ok(())
}

/// The process between `portcullis run` and the namespace's first one:
/// waits for it and exits with its status. Never returns.
fn pass_on_status(child: libc::pid_t, report_fd: i32) -> ! {
    // SAFETY: closing this process' copy of the report pipe; waitpid with a
    // valid out-pointer; _exit ends the process.
    unsafe {
        libc::close(report_fd);
        let mut status = 0;
        while libc::waitpid(child, &mut status, 0) < 0
            && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
        {}
        libc::_exit(exit_code(status));
    }
}

/// The namespace's first process: reaps every child until the program
/// ends, then exits with its status (the kernel ends the rest). Never
/// returns.
fn reap_until(program: libc::pid_t, report_fd: i32) -> ! {
    // SAFETY: closing this process' copy of the report pipe; waitpid with a
    // valid out-pointer; _exit ends the process.
    unsafe {
        libc::close(report_fd);
        loop {
            let mut status = 0;
            let pid = libc::waitpid(-1, &mut status, 0);
            if pid == program {
                libc::_exit(exit_code(status));
            }
            if pid < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                libc::_exit(1);
            }
        }
    }
}

/// A wait status as an exit code: 128 + the signal's number for a signal.
fn exit_code(status: i32) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        1
    }
}

fn namespaces(plan: &Plan) -> Result<(), Failure> {
    let mut flags = libc::CLONE_NEWNS | libc::CLONE_NEWPID;
    if plan.network == Network::Off {
        flags |= libc::CLONE_NEWNET;
    }
    if !plan.root {
        flags |= libc::CLONE_NEWUSER;
    }
    // SAFETY: unshare takes flags only; the child is single-threaded.
    if unsafe { libc::unshare(flags) } != 0 {
        return Err(fail(if plan.root {
            "creating mount, PID and network namespaces"
        } else {
            "creating a user namespace (are unprivileged user namespaces allowed? `sysctl kernel.unprivileged_userns_clone`, AppArmor's `kernel.apparmor_restrict_unprivileged_userns`)"
        }));
    }
    if !plan.root {
        write_file(c"/proc/self/setgroups", b"deny", "mapping ids (setgroups)")?;
        let uid_map = format!("{0} {0} 1", plan.uid);
        write_file(
            c"/proc/self/uid_map",
            uid_map.as_bytes(),
            "mapping ids (uid_map)",
        )?;
        let gid_map = format!("{0} {0} 1", plan.gid);
        write_file(
            c"/proc/self/gid_map",
            gid_map.as_bytes(),
            "mapping ids (gid_map)",
        )?;
    }
    if plan.network == Network::Off {
        loopback_up()?;
    }
    Ok(())
}

fn write_file(path: &std::ffi::CStr, data: &[u8], step: &'static str) -> Result<(), Failure> {
    // SAFETY: open takes a NUL-terminated path; write a valid buffer; the
    // descriptor is closed on every path.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(fail(step));
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let err = (n < 0 || n.unsigned_abs() != data.len()).then(|| fail(step));
        libc::close(fd);
        err.map_or(Ok(()), Err)
    }
}

/// The new network namespace's loopback, up: programs that talk to
/// themselves over 127.0.0.1 keep working; nothing outside is reachable.
fn loopback_up() -> Result<(), Failure> {
    // SAFETY: a plain socket for the interface ioctls; `req` is a zeroed
    // ifreq with a NUL-terminated name, valid for both ioctls; the socket is
    // closed on every path.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return Err(fail("bringing up the loopback interface"));
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
            *dst = *src as libc::c_char;
        }
        let mut ok = libc::ioctl(s, libc::SIOCGIFFLAGS, &mut req) == 0;
        if ok {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            ok = libc::ioctl(s, libc::SIOCSIFFLAGS, &req) == 0;
        }
        let err = (!ok).then(|| fail("bringing up the loopback interface"));
        libc::close(s);
        err.map_or(Ok(()), Err)
    }
}

fn mounts(plan: &Plan) -> Result<(), Failure> {
    // SAFETY: mount with NULL source and type only changes propagation.
    if unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    } != 0
    {
        return Err(fail("making the mounts private"));
    }
    private_scratch(plan)?;
    // A `/proc` of the new PID namespace: other processes are not there.
    // SAFETY: NUL-terminated strings for source, target and type.
    if unsafe {
        libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    } != 0
    {
        return Err(fail("mounting the namespace's /proc"));
    }
    for (p, kind) in &plan.binds {
        bind(p, p, *kind == Bind::ReadOnly)?;
        if *kind == Bind::Writable {
            remount(p, false)?;
        }
    }
    for p in &plan.hidden {
        hide(p, &plan.empty_file)?;
    }
    Ok(())
}

/// A tmpfs of the child's own over the run's private directory, holding the
/// program's temporary directory and an empty, unreadable file to cover
/// hidden files with.
fn private_scratch(plan: &Plan) -> Result<(), Failure> {
    // SAFETY: NUL-terminated strings for source, target, type and data;
    // mkdir, open and close take NUL-terminated paths and integers.
    unsafe {
        if libc::mount(
            c"portcullis-run".as_ptr(),
            plan.scratch.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            c"mode=0700".as_ptr().cast(),
        ) != 0
        {
            return Err(fail_at("mounting the private directory", &plan.scratch));
        }
        if libc::mkdir(plan.tmp.as_ptr(), 0o700) != 0 {
            return Err(fail_at("creating the temporary directory", &plan.tmp));
        }
        let fd = libc::open(
            plan.empty_file.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
            0o000,
        );
        if fd < 0 {
            return Err(fail_at("creating the cover file", &plan.empty_file));
        }
        libc::close(fd);
    }
    Ok(())
}

/// Binds `src` onto `dst` (recursively), read-only if asked. A path that
/// is gone by now needs no mount.
fn bind(src: &CString, dst: &CString, read_only: bool) -> Result<(), Failure> {
    // SAFETY: NUL-terminated paths; MS_BIND ignores the type and data.
    if unsafe {
        libc::mount(
            src.as_ptr(),
            dst.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    } != 0
    {
        if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT) {
            return Ok(());
        }
        return Err(fail_at("binding a path onto itself", dst));
    }
    if read_only {
        remount(dst, true)?;
    }
    Ok(())
}

/// Makes the bind mount at `path` read-only or writable, keeping the flags a
/// user namespace may not clear (nosuid, nodev, noexec, atime).
fn remount(path: &CString, read_only: bool) -> Result<(), Failure> {
    // SAFETY: `st` is a valid out-pointer for statvfs; mount takes
    // NUL-terminated paths and flags.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(path.as_ptr(), &mut st) != 0 {
            return Err(fail_at("reading a mount's flags", path));
        }
        let mut flags = libc::MS_BIND | libc::MS_REMOUNT;
        if read_only {
            flags |= libc::MS_RDONLY;
        }
        for (st_flag, ms_flag) in [
            (libc::ST_NOSUID, libc::MS_NOSUID),
            (libc::ST_NODEV, libc::MS_NODEV),
            (libc::ST_NOEXEC, libc::MS_NOEXEC),
            (libc::ST_NOATIME, libc::MS_NOATIME),
            (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
            (libc::ST_RELATIME, libc::MS_RELATIME),
        ] {
            if st.f_flag & st_flag != 0 {
                flags |= ms_flag;
            }
        }
        if libc::mount(
            std::ptr::null(),
            path.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        ) != 0
        {
            return Err(fail_at(
                if read_only {
                    "making a path read-only"
                } else {
                    "making a path writable again"
                },
                path,
            ));
        }
    }
    Ok(())
}

/// Covers `path`: an empty, read-only, unreadable tmpfs over a directory;
/// the empty unreadable file over anything else.
fn hide(path: &CString, empty_file: &CString) -> Result<(), Failure> {
    // SAFETY: `st` is a valid out-pointer; stat follows a final symlink, as
    // mount does.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::stat(path.as_ptr(), &mut st) } != 0 {
        // Gone, or a dangling symlink: nothing to read there.
        return Ok(());
    }
    if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
        // SAFETY: NUL-terminated strings for source, target, type and data.
        if unsafe {
            libc::mount(
                c"portcullis-hidden".as_ptr(),
                path.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                c"mode=000,size=4k".as_ptr().cast(),
            )
        } != 0
        {
            return Err(fail_at("hiding a directory", path));
        }
        Ok(())
    } else {
        bind(empty_file, path, true)
    }
}

fn drop_capabilities() -> Result<(), Failure> {
    // SAFETY: prctl with integer arguments; capset with a valid header and
    // two zeroed data structs (version 3 reads two).
    unsafe {
        for cap in 0..=63 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0
                && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL)
            {
                return Err(fail("dropping the capability bounding set"));
            }
        }
        if libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        ) != 0
        {
            return Err(fail("clearing ambient capabilities"));
        }
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        let header = Header {
            version: 0x2008_0522,
            pid: 0,
        };
        let data = [
            Data {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
            Data {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
        ];
        if libc::syscall(libc::SYS_capset, &header, data.as_ptr()) != 0 {
            return Err(fail("dropping capabilities"));
        }
    }
    Ok(())
}

/// Closes every descriptor above stderr but the setup pipe (close-on-exec).
fn close_other_fds(keep: i32) -> Result<(), Failure> {
    let keep = u32::try_from(keep).unwrap_or(u32::MAX);
    // SAFETY: close_range takes integers; closing descriptors this process
    // will never use again (only `keep` is used until execve).
    unsafe {
        if keep > 3 && libc::syscall(libc::SYS_close_range, 3u32, keep - 1, 0u32) != 0 {
            return Err(fail("closing inherited descriptors"));
        }
        if libc::syscall(
            libc::SYS_close_range,
            keep.saturating_add(1),
            u32::MAX,
            0u32,
        ) != 0
        {
            return Err(fail("closing inherited descriptors"));
        }
    }
    Ok(())
}
