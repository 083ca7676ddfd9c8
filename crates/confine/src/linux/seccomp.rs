//! The seccomp filter: a classic BPF program over `seccomp_data`, refusing
//! with EPERM the system calls that would undo the confinement or reach
//! around it. Other architectures' calls (x32, i386 on x86_64) are refused.
//! With a name guard, the calls that put a new name in a directory are
//! handed to a supervisor (`SECCOMP_RET_USER_NOTIF`, see `names.rs`).

use std::os::fd::{FromRawFd, OwnedFd};

use super::{Failure, fail};

// seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8i (low half first on
// the little-endian architectures built here).
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARG0_LOW: u32 = 16;
const ARG1_LOW: u32 = 24;
const ARG2_LOW: u32 = 32;
const ARG3_LOW: u32 = 40;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

const RET_ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const RET_KILL: u32 = libc::SECCOMP_RET_KILL_PROCESS;
const fn ret_errno(e: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA)
}

/// Refused outright.
fn denied() -> Vec<libc::c_long> {
    let mut v = vec![
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_bpf,
        libc::SYS_userfaultfd,
        libc::SYS_perf_event_open,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_reboot,
        libc::SYS_acct,
        libc::SYS_quotactl,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([libc::SYS_iopl, libc::SYS_ioperm]);
    v
}

/// The calls that always put a new name in a directory (or replace one):
/// handed to the supervisor. `open`, `openat` only with `O_CREAT` (below).
pub fn naming() -> Vec<libc::c_long> {
    let mut v = vec![
        libc::SYS_mkdirat,
        libc::SYS_mknodat,
        libc::SYS_symlinkat,
        libc::SYS_linkat,
        libc::SYS_renameat2,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        libc::SYS_creat,
        libc::SYS_mkdir,
        libc::SYS_mknod,
        libc::SYS_symlink,
        libc::SYS_link,
        libc::SYS_rename,
        libc::SYS_renameat,
    ]);
    v
}

/// Namespace flags `clone` may not carry.
const NEW_NAMESPACES: u32 = (libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWCGROUP) as u32;

/// Terminal ioctls that push input into another program's terminal.
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;

fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}

const LD_W_ABS: u32 = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
const JEQ: u32 = libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K;
const JGE: u32 = libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K;
const JSET: u32 = libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K;
const RET: u32 = libc::BPF_RET | libc::BPF_K;

/// What the filter hands to the supervisor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Notify {
    /// Every call that makes a new name.
    pub names: bool,
    /// `connect` (and no TCP Fast Open, which connects from `sendto`).
    pub connect: bool,
}

impl Notify {
    pub fn any(self) -> bool {
        self.names || self.connect
    }
}

/// The flag of `sendto`/`sendmsg`/`sendmmsg` that connects a TCP socket.
const MSG_FASTOPEN: u32 = 0x2000_0000;

/// The filter program.
pub fn program(notify: Notify) -> Vec<libc::sock_filter> {
    let eperm = ret_errno(libc::EPERM);
    let mut p = vec![
        stmt(LD_W_ABS, ARCH),
        jump(JEQ, AUDIT_ARCH, 1, 0),
        stmt(RET, RET_KILL),
        stmt(LD_W_ABS, NR),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        // x32 system calls: the same kernel, other numbers.
        p.push(jump(JGE, 0x4000_0000, 0, 1));
        p.push(stmt(RET, eperm));
    }
    for nr in denied() {
        p.push(jump(JEQ, nr as u32, 0, 1));
        p.push(stmt(RET, eperm));
    }
    // clone3 passes its flags in memory a filter cannot read: ENOSYS makes
    // the C library fall back to clone, whose flags it can.
    p.push(jump(JEQ, libc::SYS_clone3 as u32, 0, 1));
    p.push(stmt(RET, ret_errno(libc::ENOSYS)));
    p.push(jump(JEQ, libc::SYS_clone as u32, 0, 4));
    p.push(stmt(LD_W_ABS, ARG0_LOW));
    p.push(jump(JSET, NEW_NAMESPACES, 0, 1));
    p.push(stmt(RET, eperm));
    p.push(stmt(RET, RET_ALLOW));
    p.push(jump(JEQ, libc::SYS_ioctl as u32, 0, 5));
    p.push(stmt(LD_W_ABS, ARG1_LOW));
    p.push(jump(JEQ, TIOCSTI, 1, 0));
    p.push(jump(JEQ, TIOCLINUX, 0, 1));
    p.push(stmt(RET, eperm));
    p.push(stmt(RET, RET_ALLOW));
    let notif = libc::SECCOMP_RET_USER_NOTIF;
    if notify.connect {
        p.push(jump(JEQ, libc::SYS_connect as u32, 0, 1));
        p.push(stmt(RET, notif));
        for (nr, flags) in [
            (libc::SYS_sendto, ARG3_LOW),
            (libc::SYS_sendmsg, ARG2_LOW),
            (libc::SYS_sendmmsg, ARG3_LOW),
        ] {
            p.push(jump(JEQ, nr as u32, 0, 4));
            p.push(stmt(LD_W_ABS, flags));
            p.push(jump(JSET, MSG_FASTOPEN, 0, 1));
            p.push(stmt(RET, eperm));
            p.push(stmt(RET, RET_ALLOW));
        }
    }
    if notify.names {
        for nr in naming() {
            p.push(jump(JEQ, nr as u32, 0, 1));
            p.push(stmt(RET, notif));
        }
        // openat2 passes its flags in memory: ENOSYS makes callers fall back
        // to openat, whose flags the filter can read.
        p.push(jump(JEQ, libc::SYS_openat2 as u32, 0, 1));
        p.push(stmt(RET, ret_errno(libc::ENOSYS)));
        let mut opens = vec![(libc::SYS_openat, ARG2_LOW)];
        #[cfg(target_arch = "x86_64")]
        opens.push((libc::SYS_open, ARG1_LOW));
        for (nr, flags) in opens {
            p.push(jump(JEQ, nr as u32, 0, 4));
            p.push(stmt(LD_W_ABS, flags));
            p.push(jump(JSET, libc::O_CREAT as u32, 0, 1));
            p.push(stmt(RET, notif));
            p.push(stmt(RET, RET_ALLOW));
        }
    }
    p.push(stmt(RET, RET_ALLOW));
    p
}

/// Installs the filter; with anything to notify, returns the supervisor's
/// listener.
pub fn install(notify: Notify) -> Result<Option<OwnedFd>, Failure> {
    let filter = program(notify);
    let prog = libc::sock_fprog {
        len: u16::try_from(filter.len()).unwrap_or(u16::MAX),
        filter: filter.as_ptr().cast_mut(),
    };
    let set = |flags: libc::c_ulong| {
        // SAFETY: `prog` points at `filter`, alive for the call; the kernel
        // copies the program.
        unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                flags,
                &prog,
            )
        }
    };
    if !notify.any() {
        if set(0) != 0 {
            return Err(fail("installing the seccomp filter"));
        }
        return Ok(None);
    }
    // Once the supervisor has read a call, only a fatal signal interrupts
    // it: a call performed for the program is never restarted as a second
    // one (an `O_EXCL` create would then fail on its own file).
    let mut fd =
        set(libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV);
    if fd < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
        // Before Linux 5.19.
        fd = set(libc::SECCOMP_FILTER_FLAG_NEW_LISTENER);
    }
    let Ok(fd) = i32::try_from(fd) else {
        return Err(fail("installing the seccomp filter"));
    };
    if fd < 0 {
        return Err(fail(
            "installing the seccomp filter (with a listener for new names)",
        ));
    }
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    Ok(Some(unsafe { OwnedFd::from_raw_fd(fd) }))
}
