//! Landlock through its three system calls (the uapi of
//! `include/uapi/linux/landlock.h`): everything readable, the writable trees
//! writable, a few devices usable, the rest refused; signals and abstract
//! Unix sockets scoped to the domain where the ABI has them.

use std::ffi::CString;

use super::{Failure, fail, fail_at};

const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: libc::c_int = 1;

const EXECUTE: u64 = 1 << 0;
const WRITE_FILE: u64 = 1 << 1;
const READ_FILE: u64 = 1 << 2;
const READ_DIR: u64 = 1 << 3;
/// ABI 1: execute … make-symlink (bits 0–12).
const ABI1: u64 = (1 << 13) - 1;
const REFER: u64 = 1 << 13;
const TRUNCATE: u64 = 1 << 14;
const IOCTL_DEV: u64 = 1 << 15;

const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

/// What a rule allows beneath its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant {
    /// Read files and directories, execute.
    Read,
    /// Everything.
    Write,
    /// A device file (or a directory of them): read, write, truncate, ioctl.
    Device,
}

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The kernel's Landlock ABI version; 0 without Landlock.
pub fn abi() -> u32 {
    // SAFETY: the version query takes a NULL attribute and size 0.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(v).unwrap_or(0)
}

fn handled(abi: u32) -> u64 {
    let mut fs = ABI1;
    if abi >= 2 {
        fs |= REFER;
    }
    if abi >= 3 {
        fs |= TRUNCATE;
    }
    if abi >= 5 {
        fs |= IOCTL_DEV;
    }
    fs
}

pub fn restrict(abi: u32, rules: &[(CString, Grant)]) -> Result<(), Failure> {
    let handled_fs = handled(abi);
    let attr = RulesetAttr {
        handled_access_fs: handled_fs,
        handled_access_net: 0,
        scoped: if abi >= 6 {
            SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        } else {
            0
        },
    };
    // The attribute grew with the ABI: pass the size this kernel knows.
    let size = match abi {
        0..=3 => 8usize,
        4 | 5 => 16,
        _ => std::mem::size_of::<RulesetAttr>(),
    };
    // SAFETY: `attr` is a valid ruleset attribute of at least `size` bytes.
    let ruleset = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, &attr, size, 0u32) };
    let Ok(ruleset) = i32::try_from(ruleset) else {
        return Err(fail("creating the Landlock ruleset"));
    };
    if ruleset < 0 {
        return Err(fail("creating the Landlock ruleset"));
    }
    let result = add_rules(ruleset, handled_fs, rules).and_then(|()| {
        // SAFETY: restrict_self takes the ruleset descriptor and flags 0.
        if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) } != 0 {
            Err(fail("enforcing the Landlock ruleset"))
        } else {
            Ok(())
        }
    });
    // SAFETY: the ruleset descriptor is ours and no longer needed.
    unsafe { libc::close(ruleset) };
    result
}

fn add_rules(ruleset: i32, handled_fs: u64, rules: &[(CString, Grant)]) -> Result<(), Failure> {
    const FILE_RIGHTS: u64 = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV;
    for (path, grant) in rules {
        // SAFETY: open takes a NUL-terminated path; O_PATH opens nothing's
        // contents.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if fd < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT) {
                continue;
            }
            return Err(fail_at("opening a path for a Landlock rule", path));
        }
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `st` is a valid out-pointer for fstat of our descriptor.
        let is_dir =
            unsafe { libc::fstat(fd, &mut st) } == 0 && st.st_mode & libc::S_IFMT == libc::S_IFDIR;
        let mut access = match grant {
            Grant::Read => EXECUTE | READ_FILE | READ_DIR,
            Grant::Write => handled_fs,
            Grant::Device => READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV | READ_DIR,
        } & handled_fs;
        if !is_dir {
            access &= FILE_RIGHTS;
        }
        let attr = PathBeneathAttr {
            allowed_access: access,
            parent_fd: fd,
        };
        // SAFETY: `attr` is a valid path-beneath attribute; the descriptor
        // is closed right after.
        let r = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset,
                RULE_PATH_BENEATH,
                &attr,
                0u32,
            )
        };
        unsafe { libc::close(fd) };
        if r != 0 {
            return Err(fail_at("adding a Landlock rule", path));
        }
    }
    Ok(())
}
