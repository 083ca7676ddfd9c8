//! The supervisor: the namespace's first process receives each system call
//! that would put a new name in a directory, and, with the host's network,
//! each `connect` (seccomp user notification); it asks the profile's
//! [`crate::NameGuard`] about names inside the writable trees and refuses
//! the profile's unreachable ports, and performs the call itself for the
//! program.
//!
//! Why it performs the call rather than letting the kernel go on
//! (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`): the kernel would read the path from
//! the program's memory a second time, after the check, and another thread
//! of the program can rewrite it in between. Here every string is read once;
//! the directory of the new name is opened (the kernel resolves it,
//! symlinks and all), its physical path read back from the descriptor, and
//! the call made relative to that descriptor with the one last component
//! that was checked. A final symlink that `open` would follow is followed
//! here one step at a time, each step checked.
//!
//! The supervisor shares the program's user, mounts and Landlock domain (it
//! applied them before forking the program) and takes its umask from
//! `/proc`, so the call does what the program's own would have done. Known
//! difference: an existing FIFO opened with `O_CREAT` is opened
//! non-blocking (a blocking open would stall every other program's new
//! names), so a writer without a reader gets `ENXIO` at once.
//!
//! Everything here runs after `fork` in a process that was single-threaded,
//! so allocating is safe; the guard (the `paths` crate's tables) allocates.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::{Guard, NewName};

/// The longest path the kernel accepts, with its NUL.
const PATH_MAX: usize = 4096;

/// At most this many symlinks followed at the end of an `O_CREAT` path
/// (the kernel's own limit).
const MAX_SYMLINKS: usize = 40;

/// The supervisor's state.
pub(super) struct Supervisor<'a> {
    pub listener: OwnedFd,
    pub guard: Option<&'a Guard>,
    pub writable: &'a [PathBuf],
    /// TCP and UDP ports no `connect` may reach, on any address.
    pub unreachable_ports: &'a [u16],
    /// Blocking connects under way: the call's id and the socket.
    pub pending: std::cell::RefCell<Vec<(u64, OwnedFd)>>,
}

/// One call, its strings read.
enum Call {
    Open {
        dirfd: i32,
        path: Vec<u8>,
        flags: i32,
        mode: u32,
    },
    Mkdir {
        dirfd: i32,
        path: Vec<u8>,
        mode: u32,
    },
    Mknod {
        dirfd: i32,
        path: Vec<u8>,
        mode: u32,
        dev: u64,
    },
    Symlink {
        target: Vec<u8>,
        dirfd: i32,
        path: Vec<u8>,
    },
    Link {
        old_dirfd: i32,
        old: Vec<u8>,
        new_dirfd: i32,
        new: Vec<u8>,
        flags: i32,
    },
    Rename {
        old_dirfd: i32,
        old: Vec<u8>,
        new_dirfd: i32,
        new: Vec<u8>,
        flags: u32,
    },
    Connect {
        fd: i32,
        addr: Vec<u8>,
    },
}

/// What the program's call returns.
enum Answer {
    Value(i64),
    Errno(i32),
    /// A descriptor to install in the program as the call's result.
    Fd {
        fd: OwnedFd,
        cloexec: bool,
    },
    /// Answered later (a blocking connect under way).
    Later,
}

/// Where a new name goes: its directory, opened; the name as written (with
/// any trailing slashes); the physical path it would have.
struct Place {
    dir: OwnedFd,
    name: CString,
    path: PathBuf,
}

impl Supervisor<'_> {
    /// Handles one pending call (or none, if the program gave up on it).
    pub fn handle_one(&self) {
        // SAFETY: a zeroed seccomp_notif is a valid buffer for RECV.
        let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: the listener is a seccomp listener; `notif` is writable.
        if unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV,
                &mut notif,
            )
        } != 0
        {
            return;
        }
        let tid = i32::try_from(notif.pid).unwrap_or(0);
        let answer = match read_call(tid, &notif.data) {
            Err(errno) => Answer::Errno(errno),
            // The strings are read: only now is the call known to be the
            // one the notification named (the thread may have died and its
            // id been reused while they were read).
            Ok(_) if !self.still_valid(notif.id) => return,
            Ok(call) => self.perform(notif.id, tid, call),
        };
        self.answer(notif.id, answer);
    }

    fn still_valid(&self, id: u64) -> bool {
        // SAFETY: ID_VALID reads a u64.
        unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
                &id,
            ) == 0
        }
    }

    fn answer(&self, id: u64, answer: Answer) {
        let (val, error) = match answer {
            Answer::Later => return,
            Answer::Value(v) => (v, 0),
            Answer::Errno(e) => (0, -e),
            Answer::Fd { fd, cloexec } => {
                let addfd = libc::seccomp_notif_addfd {
                    id,
                    flags: libc::SECCOMP_ADDFD_FLAG_SEND as u32,
                    srcfd: u32::try_from(fd.as_raw_fd()).unwrap_or(u32::MAX),
                    newfd: 0,
                    newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
                };
                // SAFETY: ADDFD reads a seccomp_notif_addfd; with FLAG_SEND
                // the new descriptor is the call's result, sent at once. On
                // failure the program gave up on the call (or has no room
                // for a descriptor: answered below).
                let r = unsafe {
                    libc::ioctl(
                        self.listener.as_raw_fd(),
                        libc::SECCOMP_IOCTL_NOTIF_ADDFD,
                        &addfd,
                    )
                };
                if r >= 0 {
                    return;
                }
                (0, -errno())
            }
        };
        let resp = libc::seccomp_notif_resp {
            id,
            val,
            error,
            flags: 0,
        };
        // SAFETY: SEND reads a seccomp_notif_resp. A failure means the
        // program gave up on the call: nothing to answer.
        unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SEND,
                &resp,
            )
        };
    }

    /// Whether a new name at `place` may be made.
    fn allows(&self, place: &Place, what: NewName) -> bool {
        let Some(guard) = self.guard else {
            return true;
        };
        if !self.writable.iter().any(|w| place.path.starts_with(w)) {
            // Outside the writable trees the kernel's own rules (Landlock,
            // read-only mounts) decide: only the private temporary
            // directory is writable there.
            return true;
        }
        guard.0.allows(&place.path, what)
    }

    /// The descriptors of the connects under way (to poll for writing).
    pub fn pending_fds(&self) -> Vec<RawFd> {
        self.pending
            .borrow()
            .iter()
            .map(|(_, fd)| fd.as_raw_fd())
            .collect()
    }

    /// Answers the connect under way on `fd`, now that it is done.
    pub fn finish_connect(&self, fd: RawFd) {
        let mut pending = self.pending.borrow_mut();
        let Some(i) = pending.iter().position(|(_, s)| s.as_raw_fd() == fd) else {
            return;
        };
        let (id, sock) = pending.swap_remove(i);
        drop(pending);
        let mut err: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: SO_ERROR writes one int into `err`, its length in `len`.
        let r = unsafe {
            libc::getsockopt(
                sock.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                (&raw mut err).cast(),
                &mut len,
            )
        };
        let answer = if r != 0 {
            Answer::Errno(errno())
        } else if err != 0 {
            Answer::Errno(err)
        } else {
            Answer::Value(0)
        };
        self.answer(id, answer);
    }

    /// Connects the program's socket `fd` to `addr` itself, unless `addr`
    /// names an unreachable port. A blocking socket is connected without
    /// blocking, and answered when the connection is made.
    fn connect(&self, id: u64, tid: i32, fd: i32, addr: &[u8]) -> Answer {
        let family = addr
            .get(..2)
            .and_then(|b| <[u8; 2]>::try_from(b).ok())
            .map_or(0, |b| i32::from(u16::from_ne_bytes(b)));
        if family == libc::AF_INET || family == libc::AF_INET6 {
            let port = addr
                .get(2..4)
                .and_then(|b| <[u8; 2]>::try_from(b).ok())
                .map_or(0, u16::from_be_bytes);
            if self.unreachable_ports.contains(&port) {
                return Answer::Errno(libc::EACCES);
            }
        }
        let sock = match program_fd(tid, fd) {
            Ok(s) => s,
            Err(e) => return Answer::Errno(e),
        };
        // A Unix socket's path is relative to the program's directory.
        let here = (family == libc::AF_UNIX)
            .then(|| {
                open_c(
                    &format!("/proc/{tid}/cwd"),
                    libc::O_PATH | libc::O_DIRECTORY,
                )
                .ok()
            })
            .flatten();
        // SAFETY: fcntl, fchdir and connect on valid descriptors; `addr`
        // is a buffer of its length.
        unsafe {
            let flags = libc::fcntl(sock.as_raw_fd(), libc::F_GETFL);
            let blocking = flags >= 0 && flags & libc::O_NONBLOCK == 0;
            if blocking {
                libc::fcntl(sock.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
            }
            if let Some(d) = &here {
                libc::fchdir(d.as_raw_fd());
            }
            let r = libc::connect(
                sock.as_raw_fd(),
                addr.as_ptr().cast(),
                libc::socklen_t::try_from(addr.len()).unwrap_or(0),
            );
            let err = errno();
            if here.is_some() {
                libc::chdir(c"/".as_ptr());
            }
            if blocking {
                libc::fcntl(sock.as_raw_fd(), libc::F_SETFL, flags);
            }
            if r == 0 {
                return Answer::Value(0);
            }
            if err == libc::EINPROGRESS && blocking {
                self.pending.borrow_mut().push((id, sock));
                return Answer::Later;
            }
            Answer::Errno(err)
        }
    }

    fn perform(&self, id: u64, tid: i32, call: Call) -> Answer {
        match call {
            Call::Connect { fd, addr } => self.connect(id, tid, fd, &addr),
            Call::Open {
                dirfd,
                path,
                flags,
                mode,
            } => self.open(tid, dirfd, &path, flags, mode),
            Call::Mkdir { dirfd, path, mode } => {
                self.make(tid, dirfd, &path, libc::EEXIST, NewName::Entry, |p| {
                    with_umask(tid, || {
                        // SAFETY: a directory descriptor and a NUL-terminated name.
                        unsafe { libc::mkdirat(p.dir.as_raw_fd(), p.name.as_ptr(), mode) }
                    })
                })
            }
            Call::Mknod {
                dirfd,
                path,
                mode,
                dev,
            } => self.make(tid, dirfd, &path, libc::EEXIST, NewName::Entry, |p| {
                with_umask(tid, || {
                    // SAFETY: a directory descriptor and a NUL-terminated name.
                    unsafe { libc::mknodat(p.dir.as_raw_fd(), p.name.as_ptr(), mode, dev) }
                })
            }),
            Call::Symlink {
                target,
                dirfd,
                path,
            } => {
                let Ok(target) = CString::new(target) else {
                    return Answer::Errno(libc::EINVAL);
                };
                self.make(tid, dirfd, &path, libc::EEXIST, NewName::Tree, |p| {
                    // SAFETY: NUL-terminated strings and a directory descriptor.
                    unsafe { libc::symlinkat(target.as_ptr(), p.dir.as_raw_fd(), p.name.as_ptr()) }
                })
            }
            Call::Link {
                old_dirfd,
                old,
                new_dirfd,
                new,
                flags,
            } => {
                // The existing file: resolved by the kernel as the program's
                // call would (`AT_EMPTY_PATH` through the descriptor's
                // `/proc` link, which needs no capability).
                let (old_base, old_path, follow) =
                    if flags & libc::AT_EMPTY_PATH != 0 && old.is_empty() {
                        match CString::new(format!("/proc/{tid}/fd/{old_dirfd}")) {
                            Ok(p) => (None, p, libc::AT_SYMLINK_FOLLOW),
                            Err(_) => return Answer::Errno(libc::EINVAL),
                        }
                    } else {
                        let old = of_program(tid, &old);
                        let base = match base(tid, old_dirfd, &old) {
                            Ok(b) => b,
                            Err(e) => return Answer::Errno(e),
                        };
                        match CString::new(old) {
                            Ok(p) => (Some(base), p, flags & libc::AT_SYMLINK_FOLLOW),
                            Err(_) => return Answer::Errno(libc::EINVAL),
                        }
                    };
                self.make(tid, new_dirfd, &new, libc::EEXIST, NewName::Entry, |p| {
                    let old_fd = old_base.as_ref().map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
                    // SAFETY: descriptors (or AT_FDCWD) and NUL-terminated paths.
                    unsafe {
                        libc::linkat(
                            old_fd,
                            old_path.as_ptr(),
                            p.dir.as_raw_fd(),
                            p.name.as_ptr(),
                            follow,
                        )
                    }
                })
            }
            Call::Rename {
                old_dirfd,
                old,
                new_dirfd,
                new,
                flags,
            } => {
                let from = match place(tid, old_dirfd, &old, libc::EBUSY) {
                    Ok(p) => p,
                    Err(e) => return Answer::Errno(e),
                };
                // The name that goes away counts too: a tree moved out of a
                // protected place (or swapped with one) changes it.
                if !self.allows(&from, NewName::Tree) {
                    return Answer::Errno(libc::EACCES);
                }
                self.make(tid, new_dirfd, &new, libc::EBUSY, NewName::Tree, |p| {
                    // SAFETY: directory descriptors and NUL-terminated names.
                    unsafe {
                        libc::syscall(
                            libc::SYS_renameat2,
                            from.dir.as_raw_fd(),
                            from.name.as_ptr(),
                            p.dir.as_raw_fd(),
                            p.name.as_ptr(),
                            flags,
                        ) as i32
                    }
                })
            }
        }
    }

    /// Places the new name, asks the guard, and runs `op` (a system call
    /// returning 0 or -1 with errno).
    fn make(
        &self,
        tid: i32,
        dirfd: i32,
        path: &[u8],
        no_name: i32,
        what: NewName,
        op: impl FnOnce(&Place) -> i32,
    ) -> Answer {
        let place = match place(tid, dirfd, path, no_name) {
            Ok(p) => p,
            Err(e) => return Answer::Errno(e),
        };
        if !self.allows(&place, what) {
            return Answer::Errno(libc::EACCES);
        }
        if op(&place) == 0 {
            Answer::Value(0)
        } else {
            Answer::Errno(errno())
        }
    }

    fn open(&self, tid: i32, dirfd: i32, path: &[u8], flags: i32, mode: u32) -> Answer {
        let path = of_program(tid, path);
        if flags & libc::O_PATH != 0 {
            // `O_PATH` ignores `O_CREAT`: nothing is created.
            let base = match base(tid, dirfd, &path) {
                Ok(b) => b,
                Err(e) => return Answer::Errno(e),
            };
            let Ok(p) = CString::new(path) else {
                return Answer::Errno(libc::EINVAL);
            };
            // SAFETY: a directory descriptor and a NUL-terminated path.
            let fd = unsafe { libc::openat(base.as_raw_fd(), p.as_ptr(), flags | libc::O_CLOEXEC) };
            return opened(fd, flags);
        }
        let mut place = match place(tid, dirfd, &path, libc::EISDIR) {
            Ok(p) => p,
            Err(e) => return Answer::Errno(e),
        };
        for _ in 0..=MAX_SYMLINKS {
            if !self.allows(&place, NewName::Entry) {
                return Answer::Errno(libc::EACCES);
            }
            let existing = stat_at(&place);
            // A FIFO or device opened blocking would hold every other new
            // name until it opens: open it non-blocking, then restore.
            let special = existing.is_some_and(|m| {
                matches!(
                    m & libc::S_IFMT,
                    libc::S_IFIFO | libc::S_IFCHR | libc::S_IFBLK
                )
            });
            let extra = if special && flags & libc::O_NONBLOCK == 0 {
                libc::O_NONBLOCK
            } else {
                0
            };
            let open = || {
                // SAFETY: a directory descriptor and a NUL-terminated name;
                // O_NOFOLLOW: a final symlink is followed below, checked.
                unsafe {
                    libc::openat(
                        place.dir.as_raw_fd(),
                        place.name.as_ptr(),
                        flags | libc::O_NOFOLLOW | libc::O_CLOEXEC | extra,
                        mode,
                    )
                }
            };
            // The umask matters only for a new file (reading it is the
            // dearest step of a call).
            let fd = if existing.is_some() {
                open()
            } else {
                with_umask(tid, open)
            };
            if fd >= 0 {
                if extra != 0 {
                    // SAFETY: fcntl on the descriptor just opened.
                    unsafe {
                        let fl = libc::fcntl(fd, libc::F_GETFL);
                        libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK);
                    }
                }
                return opened(fd, flags);
            }
            let err = errno();
            let is_link = existing.is_some_and(|m| m & libc::S_IFMT == libc::S_IFLNK);
            // With O_EXCL a final symlink is an existing name (EEXIST, as
            // returned); with O_NOFOLLOW it is ELOOP, as returned.
            if err != libc::ELOOP || !is_link || flags & libc::O_NOFOLLOW != 0 {
                return Answer::Errno(err);
            }
            let target = match read_link(&place) {
                Ok(t) => t,
                Err(e) => return Answer::Errno(e),
            };
            place = match place_from(&place.dir, &of_program(tid, &target), libc::EISDIR) {
                Ok(p) => p,
                Err(e) => return Answer::Errno(e),
            };
        }
        Answer::Errno(libc::ELOOP)
    }
}

fn opened(fd: i32, flags: i32) -> Answer {
    if fd < 0 {
        return Answer::Errno(errno());
    }
    Answer::Fd {
        // SAFETY: openat just returned this descriptor.
        fd: unsafe { OwnedFd::from_raw_fd(fd) },
        cloexec: flags & libc::O_CLOEXEC != 0,
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// The `*at` form of an older call: the same arguments with `AT_FDCWD`
/// where the old call has no directory (`mkdir(p, m)` is `mkdirat(AT_FDCWD,
/// p, m)`), so one reading serves both.
fn at_form(nr: libc::c_long, a: [u64; 6]) -> (libc::c_long, [u64; 6]) {
    #[cfg(target_arch = "x86_64")]
    {
        let cwd = libc::AT_FDCWD as u32 as u64;
        let created = (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64;
        let [a0, a1, a2, a3, ..] = a;
        let at = match nr {
            libc::SYS_open => Some((libc::SYS_openat, [cwd, a0, a1, a2, 0, 0])),
            libc::SYS_creat => Some((libc::SYS_openat, [cwd, a0, created, a1, 0, 0])),
            libc::SYS_mkdir => Some((libc::SYS_mkdirat, [cwd, a0, a1, 0, 0, 0])),
            libc::SYS_mknod => Some((libc::SYS_mknodat, [cwd, a0, a1, a2, 0, 0])),
            libc::SYS_symlink => Some((libc::SYS_symlinkat, [a0, cwd, a1, 0, 0, 0])),
            libc::SYS_link => Some((libc::SYS_linkat, [cwd, a0, cwd, a1, 0, 0])),
            libc::SYS_rename => Some((libc::SYS_renameat2, [cwd, a0, cwd, a1, 0, 0])),
            libc::SYS_renameat => Some((libc::SYS_renameat2, [a0, a1, a2, a3, 0, 0])),
            _ => None,
        };
        if let Some(at) = at {
            return at;
        }
    }
    (nr, a)
}

/// Reads the call's arguments (its strings from the program's memory).
fn read_call(tid: i32, data: &libc::seccomp_data) -> Result<Call, i32> {
    let (nr, a) = at_form(libc::c_long::from(data.nr), data.args);
    // Descriptor and flag arguments are C ints: their low 32 bits.
    let int = |i: usize| a.get(i).map_or(0, |v| *v as u32 as i32);
    let s = |i: usize| read_string(tid, a.get(i).copied().unwrap_or(0));
    Ok(match nr {
        libc::SYS_openat => Call::Open {
            dirfd: int(0),
            path: s(1)?,
            flags: int(2),
            mode: int(3) as u32,
        },
        libc::SYS_mkdirat => Call::Mkdir {
            dirfd: int(0),
            path: s(1)?,
            mode: int(2) as u32,
        },
        libc::SYS_mknodat => Call::Mknod {
            dirfd: int(0),
            path: s(1)?,
            mode: int(2) as u32,
            dev: a[3],
        },
        libc::SYS_symlinkat => Call::Symlink {
            target: s(0)?,
            dirfd: int(1),
            path: s(2)?,
        },
        libc::SYS_linkat => Call::Link {
            old_dirfd: int(0),
            old: s(1)?,
            new_dirfd: int(2),
            new: s(3)?,
            flags: int(4),
        },
        libc::SYS_connect => Call::Connect {
            fd: int(0),
            addr: read_bytes(tid, a[1], usize::try_from(a[2] as u32).unwrap_or(0))?,
        },
        libc::SYS_renameat2 => Call::Rename {
            old_dirfd: int(0),
            old: s(1)?,
            new_dirfd: int(2),
            new: s(3)?,
            flags: int(4) as u32,
        },
        _ => return Err(libc::ENOSYS),
    })
}

/// A NUL-terminated string at `addr` in the program's memory, read once,
/// a page at a time (the next page may not be mapped).
fn read_string(tid: i32, addr: u64) -> Result<Vec<u8>, i32> {
    if addr == 0 {
        return Err(libc::EFAULT);
    }
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < PATH_MAX {
        let to_page_end = 4096 - (at % 4096) as usize;
        let want = to_page_end.min(PATH_MAX - out.len());
        let mut buf = vec![0u8; want];
        let local = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: want,
        };
        let remote = libc::iovec {
            iov_base: at as usize as *mut libc::c_void,
            iov_len: want,
        };
        // SAFETY: `local` describes `buf`, writable for `want` bytes; the
        // remote range is only read, by the kernel, from the program.
        let n = unsafe { libc::process_vm_readv(tid, &local, 1, &remote, 1, 0) };
        // A bad pointer is EFAULT, as the kernel says; a program that made
        // itself non-dumpable (ssh does) cannot be read: EPERM, and its new
        // names are refused — a name that cannot be checked is not made.
        let Ok(n) = usize::try_from(n) else {
            return Err(errno());
        };
        if n == 0 {
            return Err(libc::EFAULT);
        }
        let chunk = buf.get(..n).unwrap_or(&[]);
        if let Some(end) = chunk.iter().position(|&b| b == 0) {
            out.extend_from_slice(chunk.get(..end).unwrap_or(&[]));
            return Ok(out);
        }
        out.extend_from_slice(chunk);
        at += n as u64;
    }
    Err(libc::ENAMETOOLONG)
}

/// `len` bytes at `addr` in the program's memory (a socket address: at
/// most 128).
fn read_bytes(tid: i32, addr: u64, len: usize) -> Result<Vec<u8>, i32> {
    if len > 128 {
        return Err(libc::EINVAL);
    }
    let mut buf = vec![0u8; len];
    if len == 0 {
        return Ok(buf);
    }
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: addr as usize as *mut libc::c_void,
        iov_len: len,
    };
    // SAFETY: `local` describes `buf`, writable for `len` bytes.
    let n = unsafe { libc::process_vm_readv(tid, &local, 1, &remote, 1, 0) };
    if n < 0 {
        return Err(errno());
    }
    if usize::try_from(n).ok() != Some(len) {
        return Err(libc::EFAULT);
    }
    Ok(buf)
}

/// A duplicate of the program's descriptor `fd` (the same open socket).
fn program_fd(tid: i32, fd: i32) -> Result<OwnedFd, i32> {
    const PIDFD_THREAD: libc::c_long = libc::O_EXCL as libc::c_long;
    // SAFETY: pidfd_open and pidfd_getfd take integers; the descriptors
    // they return are owned here.
    unsafe {
        let mut pidfd = libc::syscall(libc::SYS_pidfd_open, tid, PIDFD_THREAD);
        if pidfd < 0 {
            // Before Linux 6.9 (a thread group's leader only).
            pidfd = libc::syscall(libc::SYS_pidfd_open, tid, 0);
        }
        let Ok(pidfd) = i32::try_from(pidfd) else {
            return Err(libc::EBADF);
        };
        if pidfd < 0 {
            return Err(errno());
        }
        let pidfd = OwnedFd::from_raw_fd(pidfd);
        let dup = libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0);
        match i32::try_from(dup) {
            Ok(d) if d >= 0 => Ok(OwnedFd::from_raw_fd(d)),
            _ => Err(libc::EBADF),
        }
    }
}

/// The program's `/proc/self` (and `/dev/fd`) are its own, not the
/// supervisor's: such a path is rewritten to name the program's.
fn of_program(tid: i32, path: &[u8]) -> Vec<u8> {
    for (prefix, to) in [
        (&b"/proc/self/"[..], format!("/proc/{tid}/")),
        (b"/proc/thread-self/", format!("/proc/{tid}/")),
        (b"/dev/fd/", format!("/proc/{tid}/fd/")),
    ] {
        if let Some(rest) = path.strip_prefix(prefix) {
            let mut out = to.into_bytes();
            out.extend_from_slice(rest);
            return out;
        }
    }
    path.to_vec()
}

fn open_c(path: &str, flags: i32) -> Result<OwnedFd, i32> {
    let c = CString::new(path).map_err(|_| libc::EINVAL)?;
    // SAFETY: a NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: open just returned this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The directory a path is relative to: `/` for an absolute path, else the
/// program's working directory or its descriptor `dirfd`.
fn base(tid: i32, dirfd: i32, path: &[u8]) -> Result<OwnedFd, i32> {
    let flags = libc::O_PATH | libc::O_DIRECTORY;
    if path.starts_with(b"/") {
        open_c("/", flags)
    } else if dirfd == libc::AT_FDCWD {
        open_c(&format!("/proc/{tid}/cwd"), flags)
    } else if dirfd < 0 {
        Err(libc::EBADF)
    } else {
        open_c(&format!("/proc/{tid}/fd/{dirfd}"), flags)
            .map_err(|e| if e == libc::ENOENT { libc::EBADF } else { e })
    }
}

/// [`Place`] of `path` as the program's call names it; `no_name`: the
/// error when the path ends in `.`, `..` or is `/` (no new name).
fn place(tid: i32, dirfd: i32, path: &[u8], no_name: i32) -> Result<Place, i32> {
    let path = of_program(tid, path);
    let base = base(tid, dirfd, &path)?;
    place_from(&base, &path, no_name)
}

fn place_from(base: &OwnedFd, path: &[u8], no_name: i32) -> Result<Place, i32> {
    if path.is_empty() {
        return Err(libc::ENOENT);
    }
    let trimmed_len = path.iter().rposition(|&b| b != b'/').map_or(0, |i| i + 1);
    let trimmed = path.get(..trimmed_len).unwrap_or(&[]);
    let (dir, last) = match trimmed.iter().rposition(|&b| b == b'/') {
        Some(i) => (
            trimmed.get(..i.max(1).min(i + 1)).unwrap_or(b"/"),
            trimmed.get(i + 1..).unwrap_or(&[]),
        ),
        None => (&b""[..], trimmed),
    };
    if last.is_empty() || last == b"." || last == b".." {
        return Err(no_name);
    }
    let dir_fd = if dir.is_empty() {
        // SAFETY: F_DUPFD_CLOEXEC on a valid descriptor.
        let fd = unsafe { libc::fcntl(base.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
        if fd < 0 {
            return Err(errno());
        }
        // SAFETY: fcntl just returned this descriptor.
        unsafe { OwnedFd::from_raw_fd(fd) }
    } else {
        let c = CString::new(dir).map_err(|_| libc::EINVAL)?;
        // SAFETY: a directory descriptor and a NUL-terminated path.
        let fd = unsafe {
            libc::openat(
                base.as_raw_fd(),
                c.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(errno());
        }
        // SAFETY: openat just returned this descriptor.
        unsafe { OwnedFd::from_raw_fd(fd) }
    };
    let dir_path = fd_path(dir_fd.as_raw_fd())?;
    let name_written = path.get(trimmed_len - last.len()..).unwrap_or(last);
    let name = CString::new(name_written).map_err(|_| libc::EINVAL)?;
    Ok(Place {
        path: dir_path.join(std::ffi::OsStr::from_bytes(last)),
        dir: dir_fd,
        name,
    })
}

/// The physical path of an open directory.
fn fd_path(fd: RawFd) -> Result<PathBuf, i32> {
    // A directory removed meanwhile (its path reads back as "… (deleted)"):
    // nothing can be created in it.
    // SAFETY: `st` is a valid out-pointer for fstat on an open descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 || st.st_nlink == 0 {
        return Err(libc::ENOENT);
    }
    let link = std::fs::read_link(format!("/proc/self/fd/{fd}")).map_err(|_| libc::ENOENT)?;
    if !link.is_absolute() {
        return Err(libc::ENOENT);
    }
    Ok(link)
}

/// The file type and mode of the place's name, not following a symlink.
fn stat_at(place: &Place) -> Option<u32> {
    // SAFETY: `st` is a valid out-pointer; a directory descriptor and a
    // NUL-terminated name.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::fstatat(
            place.dir.as_raw_fd(),
            place.name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    (r == 0).then_some(st.st_mode)
}

fn read_link(place: &Place) -> Result<Vec<u8>, i32> {
    let mut buf = vec![0u8; PATH_MAX];
    // SAFETY: `buf` is a writable buffer of its length.
    let n = unsafe {
        libc::readlinkat(
            place.dir.as_raw_fd(),
            place.name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    let n = usize::try_from(n).map_err(|_| errno())?;
    buf.truncate(n);
    Ok(buf)
}

/// Runs `op` under the program's umask (read from `/proc`; the strictest,
/// 077, when it cannot be read).
fn with_umask(tid: i32, op: impl FnOnce() -> i32) -> i32 {
    let mask = std::fs::read_to_string(format!("/proc/{tid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o077);
    // SAFETY: umask takes a mode; this process is single-threaded.
    unsafe { libc::umask(mask) };
    op()
}
