//! The hook's last-resort guard: whatever ends the process abnormally — a
//! panic that escapes, an abort, a stack overflow, a hang past the time budget —
//! the agent still reads its native refusal and exit status 2.
//!
//! Agents treat a hook that dies without an answer as *allow* (Codex runs the
//! tool when a hook exits without a status, Gemini reads a signal-killed hook's
//! stderr as plain output on "exit 0", Claude Code proceeds on any exit but 2),
//! so the refusal is prepared before any judging starts and written from
//! wherever the process is about to die:
//!
//! - a signal handler for `SIGSEGV`/`SIGBUS` (stack overflow), `SIGABRT` (abort,
//!   a panic while panicking, `panic = "abort"`), `SIGILL`, `SIGFPE`, `SIGTRAP`,
//!   running on its own alternate stack;
//! - [`fire`], called by the code path a panic unwinds to, and by the watchdog
//!   thread when the time budget runs out.
//!
//! The handler is async-signal-safe: it only loads atomics, calls `write(2)` on
//! buffers prepared earlier and leaked (never freed, never moved), and `_exit(2)`.
//! This is the crate's one module with `unsafe`: each block says why it holds.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU8, Ordering};
use std::time::Duration;

use portcullis_adapters::Reply;

/// The prepared refusal, leaked: the handler may read it at any moment until
/// the process ends, so it is never freed. One pointer, swapped whole, so a
/// reader never pairs one refusal's buffer with another's length.
struct Prepared {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    exit: i32,
}
static PREPARED: AtomicPtr<Prepared> = AtomicPtr::new(std::ptr::null_mut());
/// The refusal the watchdog writes (the reason says the time ran out).
static PREPARED_TIMEOUT: AtomicPtr<Prepared> = AtomicPtr::new(std::ptr::null_mut());

/// Who writes the answer: nobody yet, the normal path, or the guard.
static WRITER: AtomicU8 = AtomicU8::new(NOBODY);
const NOBODY: u8 = 0;
const NORMAL: u8 = 1;
const GUARD: u8 = 2;
/// The exit code the normal path's answer carries, once it was written.
static ANSWERED_EXIT: AtomicI32 = AtomicI32::new(-1);

static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Prepares `reply` as the answer written if the process dies from now on.
/// May be called again (e.g. once the event name is known): the newest wins.
pub fn arm(reply: &Reply) {
    // The previous refusal is leaked, not freed: a handler may be reading it.
    PREPARED.store(prepare(reply), Ordering::SeqCst);
    install();
}

/// Prepares the refusal the watchdog writes when the time budget runs out.
pub fn arm_timeout(reply: &Reply) {
    PREPARED_TIMEOUT.store(prepare(reply), Ordering::SeqCst);
}

fn prepare(reply: &Reply) -> *mut Prepared {
    let mut stdout = reply.stdout.clone().into_bytes();
    if !stdout.is_empty() {
        stdout.push(b'\n');
    }
    Box::into_raw(Box::new(Prepared {
        stdout,
        stderr: reply.stderr.clone().into_bytes(),
        exit: i32::from(u8::try_from(reply.exit).unwrap_or(2)),
    }))
}

/// The normal path claims the right to answer. `false`: the guard already
/// fired (the watchdog, say) and is writing its refusal: the caller must not
/// write anything and should wait for the process to end.
pub fn claim_answer() -> bool {
    WRITER
        .compare_exchange(NOBODY, NORMAL, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
}

/// The normal path's answer was written with `exit`: a crash from here on
/// (in destructors, say) exits with the same status rather than a signal.
pub fn answered(exit: u8) {
    ANSWERED_EXIT.store(i32::from(exit), Ordering::SeqCst);
}

/// Defines the C entry point `main` of a `#![no_main]` binary that runs
/// `$body` (a `fn() -> ExitCode` that answers through `hook_answer::emit`)
/// through [`c_main`]. `portcullis-hook` uses it: std's start-up — reading
/// `/proc/self/maps` to place the main thread's stack guard, an alternate
/// signal stack and handlers that [`install`] replaces with its own — cost a
/// hook call ≈ 4 % of its time for nothing.
#[allow(unused_macros)]
macro_rules! c_entry {
    ($body:path) => {
        // SAFETY: the one `main` symbol of this binary (`#![no_main]`), with
        // the signature the C runtime calls; it touches neither argument.
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        extern "C" fn main(
            _argc: ::std::ffi::c_int,
            _argv: *const *const ::std::ffi::c_char,
        ) -> ::std::ffi::c_int {
            $crate::guard::c_main($body)
        }
    };
}
#[allow(unused_imports)]
pub(crate) use c_entry;

/// What std does before `main` that a hook needs, then `body`; returns the
/// exit status of the answer `body` wrote. Standard streams that are closed
/// are opened on `/dev/null`, so no file the hook opens (the store!) can
/// become its stdout or stderr; `SIGPIPE` is ignored, so an agent that stops
/// reading makes a write fail instead of killing the hook. (Arguments and the
/// environment need nothing: glibc hands them to std before `main`.) A
/// `body` that returns without having answered is answered with the refusal.
pub fn c_main(body: fn() -> std::process::ExitCode) -> libc::c_int {
    for fd in 0..=2 {
        // SAFETY: F_GETFD only asks whether `fd` is open.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            // SAFETY: a NUL-terminated path; the lowest free descriptor,
            // which is `fd`, is the one opened (0, 1 and 2 in order).
            unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        }
    }
    // SAFETY: SIG_IGN for SIGPIPE, as std sets it; no handler runs.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let _ = body();
    match ANSWERED_EXIT.load(Ordering::SeqCst) {
        -1 => fire(),
        code => code,
    }
}

/// Writes the prepared refusal and ends the process with its status. Used by
/// the watchdog and by the path a panic unwinds to.
pub fn fire() -> ! {
    last_words()
}

/// Ends the process with the refusal unless the normal path answers within
/// `budget`. The agent's own hook timeout is larger than `budget`, so the
/// agent always reads an answer.
///
/// A timer signal (`setitimer`, `SIGALRM`) rather than a thread: starting a
/// thread costs a hook call ≈0.1 ms, a tenth of all it does through the
/// daemon. Should the timer not be set, a thread keeps the budget instead.
pub fn watchdog(budget: Duration) {
    let secs = libc::time_t::try_from(budget.as_secs()).unwrap_or(libc::time_t::MAX);
    let usecs = libc::suseconds_t::from(budget.subsec_micros());
    let timer = libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        // A zero budget would disarm the timer: at least a microsecond.
        it_value: libc::timeval {
            tv_sec: secs,
            tv_usec: if secs == 0 { usecs.max(1) } else { usecs },
        },
    };
    // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value; the
    // handler only does async-signal-safe work (atomics, write, _exit) on the
    // alternate stack; SA_RESTART resumes a system call it interrupted when
    // it returns (the normal path is answering). setitimer only reads `timer`.
    let set = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_alarm as extern "C" fn(libc::c_int) as usize;
        action.sa_flags = libc::SA_ONSTACK | libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut()) == 0
            && libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) == 0
    };
    if !set {
        watchdog_thread(budget);
    }
}

/// The budget ran out: the timeout refusal, unless the normal path is
/// answering (then it finishes, and the handler returns).
extern "C" fn on_alarm(_sig: libc::c_int) {
    time_is_up();
}

fn time_is_up() {
    if WRITER.load(Ordering::SeqCst) == NOBODY {
        let timeout = PREPARED_TIMEOUT.load(Ordering::SeqCst);
        if !timeout.is_null() {
            PREPARED.store(timeout, Ordering::SeqCst);
        }
        fire();
    }
}

fn watchdog_thread(budget: Duration) {
    let spawned = std::thread::Builder::new()
        .name("portcullis-watchdog".into())
        .stack_size(64 * 1024)
        .spawn(move || {
            std::thread::sleep(budget);
            time_is_up();
        });
    if spawned.is_err() {
        // No thread, no budget: refuse now rather than risk running past it.
        fire();
    }
}

/// What every exit path of the guard does. Async-signal-safe.
fn last_words() -> ! {
    match WRITER.compare_exchange(NOBODY, GUARD, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => match prepared() {
            Some(p) => {
                write_all(1, &p.stdout);
                write_all(2, &p.stderr);
                exit_now(p.exit)
            }
            None => exit_now(2),
        },
        Err(NORMAL) => {
            let code = ANSWERED_EXIT.load(Ordering::SeqCst);
            if code >= 0 {
                // The answer is out; end with the status it carries.
                exit_now(code)
            }
            // The normal path died while writing its answer: what the agent
            // got may be partial. Exit 2 with the refusal on stderr, which
            // every agent that reads exit codes takes as a block.
            if let Some(p) = prepared() {
                write_all(2, &p.stderr);
            }
            exit_now(2)
        }
        // Another thread is already writing the refusal and will exit.
        Err(_) => loop {
            // SAFETY: pause(2) is async-signal-safe and has no preconditions.
            unsafe {
                libc::pause();
            }
        },
    }
}

fn prepared() -> Option<&'static Prepared> {
    let p = PREPARED.load(Ordering::SeqCst);
    // SAFETY: a non-null pointer came from `Box::into_raw` in `arm` and is
    // never freed, so it is valid for the rest of the process.
    unsafe { p.as_ref() }
}

fn write_all(fd: libc::c_int, bytes: &[u8]) {
    let mut done = 0usize;
    while done < bytes.len() {
        let Some(rest) = bytes.get(done..) else {
            return;
        };
        // SAFETY: `rest` is a live slice; write(2) is async-signal-safe.
        let r = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
        if r > 0 {
            done += r as usize;
        } else if r < 0 && errno() == libc::EINTR {
            continue;
        } else {
            return;
        }
    }
}

fn errno() -> libc::c_int {
    // SAFETY: __errno_location returns the calling thread's errno slot.
    unsafe { *libc::__errno_location() }
}

fn exit_now(code: i32) -> ! {
    // SAFETY: _exit(2) is async-signal-safe and ends the process without
    // running destructors or atexit handlers (which may be what crashed).
    unsafe { libc::_exit(code) }
}

extern "C" fn on_fatal_signal(_sig: libc::c_int) {
    last_words()
}

/// Signals that end a process abnormally without the program's say.
const FATAL: [libc::c_int; 6] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGABRT,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGTRAP,
];

/// Size of the guard's alternate signal stack: the handler needs very little,
/// but it runs after a stack overflow, when the normal stack is gone.
const ALT_STACK: usize = 64 * 1024;

fn install() {
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    // A mapping of its own, never unmapped (the alternate stack must outlive
    // every signal the process gets), whose pages the kernel provides only
    // when a handler runs: a zeroed heap buffer cost every hook call 16 page
    // faults and a 64 KiB memset.
    // SAFETY: an anonymous private mapping at an address of the kernel's
    // choosing touches no existing memory; the result is checked below.
    let stack = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            ALT_STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    // Without one, SA_ONSTACK is ignored: the handlers still run, on the
    // normal stack (all but a stack overflow are still answered).
    if stack != libc::MAP_FAILED {
        let ss = libc::stack_t {
            ss_sp: stack,
            ss_flags: 0,
            ss_size: ALT_STACK,
        };
        // SAFETY: `ss` describes a live, writable mapping that is never
        // unmapped; sigaltstack only records it for the calling (main)
        // thread. Threads std spawns get their own alternate stacks from std.
        unsafe {
            libc::sigaltstack(&ss, std::ptr::null_mut());
        }
    }
    for sig in FATAL {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value;
        // the handler is an `extern "C" fn(c_int)` that only does
        // async-signal-safe work, and SA_ONSTACK runs it on the alternate
        // stack so it works after a stack overflow. It replaces std's own
        // SIGSEGV/SIGBUS handler (which would print and abort).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fatal_signal as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// Failure modes that tests can force in the hook path
/// (`PORTCULLIS_TEST_FAULT=panic|abort|stack-overflow|hang|segv|oom`). Each ends
/// in the guard's refusal, so the switch can only ever make a hook refuse.
pub fn inject_fault() {
    let Ok(fault) = std::env::var("PORTCULLIS_TEST_FAULT") else {
        return;
    };
    match fault.as_str() {
        // PANIC SAFETY: the fault a test asks for, to prove a panic becomes
        // the refusal; nothing else sets PORTCULLIS_TEST_FAULT.
        #[allow(clippy::panic)]
        "panic" => panic!("PORTCULLIS_TEST_FAULT=panic"),
        "abort" => std::process::abort(),
        "stack-overflow" => {
            overflow(0);
        }
        "segv" => {
            // SAFETY: deliberately raises SIGSEGV to test the guard; raise(3)
            // has no memory-safety preconditions.
            unsafe {
                libc::raise(libc::SIGSEGV);
            }
        }
        "hang" => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
        "oom" => {
            // Grows until the memory cap fails an allocation (an abort).
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                hoard.push(vec![1u8; 64 << 20]);
                std::hint::black_box(&hoard);
            }
        }
        _ => {}
    }
}

/// Recurses until the stack runs out (the `stack-overflow` fault).
fn overflow(depth: u64) -> u64 {
    let frame = std::hint::black_box([depth; 512]);
    // The condition is never false, but the compiler cannot know that.
    let below = if std::hint::black_box(depth) < u64::MAX {
        overflow(depth + 1)
    } else {
        0
    };
    let some = frame.get((depth % 512) as usize).copied().unwrap_or(0);
    std::hint::black_box(some).wrapping_add(below)
}

/// The process' allocator: the system's, with a cap on the bytes live at once.
/// Past the cap an allocation fails, which aborts the process — and the abort
/// is answered by the guard's refusal. Without it, a runaway allocation (a
/// parser that loops, say) grows until the kernel's OOM killer ends the hook
/// with `SIGKILL`, which nothing can answer, and the agent runs the call.
pub struct CappedAlloc;

/// The cap: unlimited until [`cap_memory`] sets one.
static MEMORY_CAP: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(usize::MAX);
static MEMORY_LIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Caps the bytes the process may hold at once (the hook: far more than any
/// judgement needs, far less than the machine has).
pub fn cap_memory(bytes: usize) {
    MEMORY_CAP.store(bytes, Ordering::SeqCst);
}

// SAFETY: every method forwards to `std::alloc::System` with the caller's
// layout and pointer unchanged, so System's guarantees carry over; the
// counter only decides whether to forward an allocation at all (returning
// null is the documented way to fail one).
unsafe impl std::alloc::GlobalAlloc for CappedAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if !reserve(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded unchanged (see the impl's comment).
        let p = unsafe { std::alloc::System.alloc(layout) };
        if p.is_null() {
            MEMORY_LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if !reserve(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded unchanged (see the impl's comment).
        let p = unsafe { std::alloc::System.alloc_zeroed(layout) };
        if p.is_null() {
            MEMORY_LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: forwarded unchanged (see the impl's comment).
        unsafe { std::alloc::System.dealloc(ptr, layout) };
        MEMORY_LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && !reserve(new_size - old) {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded unchanged (see the impl's comment).
        let p = unsafe { std::alloc::System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            if new_size > old {
                MEMORY_LIVE.fetch_sub(new_size - old, Ordering::Relaxed);
            }
        } else if new_size < old {
            MEMORY_LIVE.fetch_sub(old - new_size, Ordering::Relaxed);
        }
        p
    }
}

/// Counts `bytes` as live; false (counting nothing) past the cap.
fn reserve(bytes: usize) -> bool {
    let live = MEMORY_LIVE.fetch_add(bytes, Ordering::Relaxed);
    if live.saturating_add(bytes) > MEMORY_CAP.load(Ordering::Relaxed) {
        MEMORY_LIVE.fetch_sub(bytes, Ordering::Relaxed);
        return false;
    }
    true
}
