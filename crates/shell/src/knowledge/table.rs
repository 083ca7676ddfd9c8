//! The knowledge base's data: the program table, the environment variables
//! that load or run code, and the programs that run commands without a
//! wrapper table. Kept compact on purpose (one program a line): read it as a table.

use super::{EnvVarRisk, Operands as O, P, ProgramSpec, Role as R, Special};
use crate::model::OpaqueReason;

/// The variable makes code run from a file the analysis cannot see.
const FROM_FILE: Option<OpaqueReason> = Some(OpaqueReason::CodeFromFile);
/// The variable carries configuration that can name programs to run.
const CONFIG: Option<OpaqueReason> = Some(OpaqueReason::DynamicCode);

/// The table. Facts come from the programs' manuals and GTFOBins-style
/// knowledge of which features run code.
#[rustfmt::skip]
pub static PROGRAMS: &[ProgramSpec] = &[
    // --- reading and inspecting -------------------------------------------------
    ProgramSpec { names: &["cat", "tac", "nl", "od", "hexdump", "strings", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "base32", "base64", "file", "stat", "wc", "rev", "fold", "fmt", "expand", "unexpand", "column"], valued: &["-n", "-w", "-t", "-s", "-N", "-j", "-A", "-f", "-m", "-c"], operands: O::Read, ..P },
    ProgramSpec { names: &["head", "tail"], valued: &["-n", "-c", "--lines", "--bytes", "-s", "--sleep-interval", "--pid"], operands: O::Read, ..P },
    ProgramSpec { names: &["ls", "dir", "tree", "du", "df", "realpath", "readlink", "namei", "lsattr", "getfacl"], valued: &["-I", "--ignore", "-w", "--width", "-T", "-L", "-P", "--block-size", "-B", "--max-depth", "-d", "--exclude", "-X"], operands: O::ReadOrCwd, ..P },
    ProgramSpec { names: &["sort"], valued: &["-k", "--key", "-t", "--field-separator", "-S", "--buffer-size", "-T", "--temporary-directory", "--parallel", "--batch-size", "--files0-from"], operands: O::Read, options: &[("-o", R::WritesValue), ("--output", R::WritesValue), ("--compress-program", R::ExecValue)], ..P },
    ProgramSpec { names: &["uniq"], valued: &["-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"], operands: O::ReadThenWrite, ..P },
    ProgramSpec { names: &["split"], valued: &["-a", "--suffix-length", "-b", "--bytes", "-C", "--line-bytes", "-l", "--lines", "-n", "--number", "-t", "--separator", "--additional-suffix"], operands: O::ReadThenWrite, options: &[("--filter", R::ShellValue)], ..P },
    ProgramSpec { names: &["sdiff"], valued: &["-I", "--ignore-matching-lines", "-w", "--width", "--tabsize"], operands: O::Read, options: &[("-o", R::WritesValue), ("--output", R::WritesValue), ("--diff-program", R::ExecValue)], ..P },
    ProgramSpec { names: &["diff3"], valued: &["-L", "--label"], operands: O::Read, options: &[("--diff-program", R::ExecValue)], ..P },
    ProgramSpec { names: &["cut", "paste", "join", "comm", "diff", "cmp", "look", "csplit"], valued: &["-d", "-f", "-c", "-b", "-t", "-1", "-2", "-o", "-e", "-j", "-U", "-C", "-L", "--label", "-x", "-I", "-F", "-D", "-W", "-n", "-l", "-a"], operands: O::Read, ..P },
    ProgramSpec { names: &["tr", "echo", "printf", "true", "false", "sleep", "seq", "yes", "uname", "hostname", "pwd", "basename", "dirname", "which", "type", "nproc", "uptime", "groups", "tty", "arch", "getconf", "locale", "cal", "clear", "tput", "kill", "pkill", "killall", "pgrep", "ps", "top", "free", "wait", "cd", "pushd", "popd", "dirs", "set", "shopt", "ulimit", "umask", "history", "exit", "return", "shift", "break", "continue", ":", "test", "[", "expr", "getopts", "read", "disown", "suspend", "logout", "times"], valued: &["-d", "-s", "-n", "-t", "-u", "-p"], ..P },
    ProgramSpec { names: &["date"], valued: &["-d", "--date", "-s", "--set", "--rfc-3339"], options: &[("-f", R::ReadsValue), ("--file", R::ReadsValue), ("-r", R::ReadsValue), ("--reference", R::ReadsValue)], ..P },
    ProgramSpec { names: &["grep", "egrep", "fgrep", "zgrep"], valued: &["-A", "-B", "-C", "-m", "--max-count", "--include", "--exclude", "--exclude-dir", "--color", "--colour", "-d", "-D", "--label", "--context", "--after-context", "--before-context"], operands: O::SkipFirstRead, options: &[("-e", R::NoPatternOperand), ("--regexp", R::NoPatternOperand), ("-f", R::NoPatternOperand), ("--file", R::NoPatternOperand)], ..P },
    ProgramSpec { names: &["rg"], valued: &["-A", "-B", "-C", "-m", "-g", "--glob", "--iglob", "-t", "--type", "-T", "--type-not", "--type-add", "-M", "--max-columns", "-j", "--threads", "--max-depth", "-d", "--color", "--colors", "-E", "--encoding", "--sort", "--sortr", "-r", "--replace", "--context", "--after-context", "--before-context", "--max-count", "--pre-glob", "--ignore-file", "--max-filesize", "--path-separator", "--field-match-separator", "--dfa-size-limit", "--regex-size-limit"], operands: O::SkipFirstRead, options: &[("-e", R::NoPatternOperand), ("--regexp", R::NoPatternOperand), ("-f", R::NoPatternOperand), ("--file", R::NoPatternOperand), ("--pre", R::ExecValue), ("--hostname-bin", R::ExecValue), ("--files", R::NoPatternOperand), ("--type-list", R::NoPatternOperand)], ..P },
    ProgramSpec { names: &["fd", "fdfind"], valued: &["-e", "--extension", "-t", "--type", "-E", "--exclude", "-d", "--max-depth", "--min-depth", "--exact-depth", "-S", "--size", "--changed-within", "--changed-before", "-o", "--owner", "-c", "--color", "-j", "--threads", "--max-results", "--base-directory", "--search-path", "--path-separator", "--batch-size", "--max-buffer-time", "--format", "--and"], operands: O::SkipFirstRead, options: &[("-x", R::Code), ("--exec", R::Code), ("-X", R::Code), ("--exec-batch", R::Code), ("--ignore-file", R::ReadsValue)], ..P },
    ProgramSpec { names: &["openssl"], valued: &["-passin", "-passout", "-pass", "-md", "-digest", "-subj", "-days", "-newkey", "-cipher", "-config", "-name", "-section", "-aes256", "-servername", "-port", "-CAfile", "-CApath", "-cert", "-certfile", "-inkey", "-signer", "-recip", "-inform", "-outform", "-keyform"], operands: O::None, options: &[("-in", R::ReadsValue), ("-out", R::WritesValue), ("-keyout", R::WritesValue), ("-key", R::ReadsValue), ("-connect", R::ConnectsTo), ("-proxy", R::ConnectsTo), ("-engine", R::Code), ("-provider", R::Code), ("-provider-path", R::Code), ("-rand", R::ReadsValue), ("-writerand", R::WritesValue)], ..P },
    ProgramSpec { names: &["ag", "ack"], valued: &["-A", "-B", "-C", "-m", "-G", "--ignore", "--pager", "-g"], operands: O::SkipFirstRead, options: &[("--pager", R::ShellValue)], ..P },
    ProgramSpec { names: &["jq", "yq", "gojq"], valued: &["--arg", "--argjson", "--indent", "--tab", "-L"], operands: O::SkipFirstRead, options: &[("-f", R::NoPatternOperand), ("--from-file", R::NoPatternOperand), ("--rawfile", R::ReadsValue), ("--slurpfile", R::ReadsValue)], ..P },
    ProgramSpec { names: &["xxd"], valued: &["-c", "-g", "-l", "-s", "-o", "-n"], operands: O::ReadThenWrite, ..P },
    ProgramSpec { names: &["less", "more", "most"], valued: &["-b", "-h", "-j", "-k", "-p", "-P", "-t", "-T", "-x", "-y", "-z", "-#"], operands: O::Read, options: &[("-o", R::WritesValue), ("-O", R::WritesValue), ("--log-file", R::WritesValue), ("--LOG-FILE", R::WritesValue)], special: Special::Pager, ..P },
    ProgramSpec { names: &["man"], valued: &["-M", "-S", "-s", "-L", "-m", "-C", "-E", "-R", "-r", "-e"], special: Special::Man, ..P },
    // --- writing, moving, deleting ---------------------------------------------
    ProgramSpec { names: &["rm", "rmdir", "unlink"], operands: O::Delete, ..P },
    ProgramSpec { names: &["shred"], valued: &["-n", "-s", "--iterations", "--size", "--random-source"], operands: O::Write, options: &[("-u", R::Code), ("--remove", R::Code)], ..P },
    ProgramSpec { names: &["touch"], valued: &["-d", "--date", "-r", "--reference", "-t"], operands: O::Write, ..P },
    ProgramSpec { names: &["mkdir", "mkfifo", "mknod"], valued: &["-m", "--mode", "--context"], operands: O::Write, ..P },
    ProgramSpec { names: &["tee"], operands: O::Write, ..P },
    ProgramSpec { names: &["truncate", "fallocate"], valued: &["-s", "--size", "-r", "--reference", "-l", "--length", "-o", "--offset"], operands: O::Write, ..P },
    ProgramSpec { names: &["mktemp"], valued: &["-p", "--tmpdir", "--suffix", "-t"], operands: O::Write, ..P },
    ProgramSpec { names: &["cp", "install"], valued: &["-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group", "--backup", "--sparse", "--reflink", "--preserve", "--no-preserve"], operands: O::CopyToLast, options: &[("-t", R::WritesValue), ("--target-directory", R::WritesValue)], ..P },
    ProgramSpec { names: &["mv"], valued: &["-S", "--suffix", "--backup"], operands: O::MoveToLast, options: &[("-t", R::WritesValue), ("--target-directory", R::WritesValue)], ..P },
    ProgramSpec { names: &["ln", "link"], valued: &["-S", "--suffix", "--backup"], operands: O::CopyToLast, options: &[("-t", R::WritesValue), ("--target-directory", R::WritesValue)], special: Special::Ln, ..P },
    ProgramSpec { names: &["chmod", "chown", "chgrp", "chcon", "setfacl"], valued: &["--reference", "--from", "-m", "-x", "-M", "-X"], operands: O::SkipFirstWrite, ..P },
    ProgramSpec { names: &["chattr"], valued: &["-v", "-p"], operands: O::SkipFirstWrite, ..P },
    ProgramSpec { names: &["dd"], special: Special::Dd, ..P },
    ProgramSpec { names: &["patch"], valued: &["-p", "-F", "-z", "-B", "-Y", "-V", "-g", "-D", "-r", "-o", "-d"], operands: O::Write, options: &[("-i", R::ReadsValue), ("--input", R::ReadsValue), ("-o", R::WritesValue), ("--output", R::WritesValue)], special: Special::Patch, ..P },
    ProgramSpec { names: &["mkfs", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.vfat", "mkfs.fat", "mkfs.ntfs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "gdisk", "sgdisk", "blkdiscard", "hdparm", "badblocks", "losetup", "cryptsetup"], valued: &["-t", "-L", "-b", "-c", "-n", "-o", "-U", "-F"], operands: O::Write, ..P },
    ProgramSpec { names: &["mount", "umount", "swapon", "swapoff"], valued: &["-t", "-o", "-L", "-U", "-O"], operands: O::Write, ..P },
    // --- archives and compression ---------------------------------------------
    ProgramSpec { names: &["tar", "bsdtar", "gtar"], special: Special::Tar, ..P },
    ProgramSpec { names: &["zip"], valued: &["-b", "-n", "-t", "-tt", "-x", "-i", "-P", "-Z", "-s", "-TT", "--unzip-command"], special: Special::Zip, ..P },
    ProgramSpec { names: &["unzip"], valued: &["-P", "-x"], operands: O::Read, options: &[("-d", R::WritesValue)], special: Special::Unzip, ..P },
    ProgramSpec { names: &["gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "compress", "uncompress"], valued: &["-S", "--suffix", "-T", "--threads"], operands: O::Write, options: &[("-o", R::WritesValue), ("--output", R::WritesValue)], ..P },
    ProgramSpec { names: &["7z", "7za", "7zr", "cpio", "ar"], special: Special::Archiver, ..P },
    ProgramSpec { names: &["zcat", "bzcat", "xzcat", "zless", "zmore"], operands: O::Read, ..P },
    // --- text processors with their own languages -------------------------------
    ProgramSpec { names: &["sed", "gsed"], valued: &["-l", "--line-length"], special: Special::Sed, ..P },
    ProgramSpec { names: &["awk", "gawk", "mawk", "nawk"], special: Special::Awk, ..P },
    ProgramSpec { names: &["find", "gfind"], special: Special::Find, ..P },
    ProgramSpec { names: &["ed", "red"], operands: O::Write, special: Special::Ed, ..P },
    ProgramSpec { names: &["vi", "vim", "nvim", "view", "ex", "vimdiff", "emacs", "nano", "pico", "micro", "helix", "hx", "kak"], operands: O::Write, special: Special::Editor, ..P },
    // --- network -------------------------------------------------------------------
    ProgramSpec { names: &["curl"], special: Special::Curl, network: true, ..P },
    ProgramSpec { names: &["wget"], special: Special::Wget, network: true, ..P },
    ProgramSpec { names: &["ssh"], special: Special::Ssh, network: true, ..P },
    ProgramSpec { names: &["scp", "sftp"], special: Special::Scp, network: true, ..P },
    ProgramSpec { names: &["rsync"], special: Special::Rsync, ..P },
    ProgramSpec { names: &["nc", "ncat", "netcat", "telnet"], special: Special::Netcat, network: true, ..P },
    ProgramSpec { names: &["socat"], special: Special::Socat, network: true, ..P },
    ProgramSpec { names: &["ping", "ping6", "dig", "nslookup", "host", "traceroute", "whois", "ftp", "aws", "gcloud", "az"], valued: &["-c", "-i", "-W", "-w", "-t", "-p", "-s", "-I"], network: true, ..P },
    ProgramSpec { names: &["gh"], network: true, special: Special::Gh, ..P },
    // --- version control -----------------------------------------------------------
    ProgramSpec { names: &["git"], special: Special::Git, ..P },
    // --- interpreters, debuggers and databases --------------------------------------
    ProgramSpec { names: &["python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "perl", "ruby", "php", "lua", "luajit", "Rscript", "tclsh", "wish", "expect", "osascript", "pwsh", "powershell", "java", "jshell", "groovy", "scala", "kotlin", "julia", "irb", "erl", "elixir", "racket", "guile", "sbcl", "ghci", "runghc", "ts-node", "tsx"], special: Special::Interpreter, ..P },
    ProgramSpec { names: &["gdb", "lldb"], special: Special::Gdb, ..P },
    ProgramSpec { names: &["sqlite3", "sqlite"], special: Special::Sqlite, ..P },
    ProgramSpec { names: &["psql", "mysql", "mariadb", "mongo", "mongosh", "redis-cli", "clickhouse-client", "duckdb"], special: Special::Sql, network: true, ..P },
    // --- builds and package managers (they run project-defined code) ----------------
    ProgramSpec { names: &["make", "gmake", "ninja", "cmake", "meson", "bazel", "just", "task", "rake", "ant", "mvn", "gradle", "gradlew", "sbt", "dotnet", "msbuild"], special: Special::Make, ..P },
    ProgramSpec { names: &["npm", "npx", "pnpm", "pnpx", "yarn", "cargo", "go", "pip", "pip3", "pipx", "uv", "uvx", "poetry", "pdm", "hatch", "tox", "nox", "pytest", "bundle", "gem", "composer", "mix", "stack", "cabal", "swift", "rustc", "gcc", "g++", "cc", "clang", "clang++", "javac", "tsc", "eslint", "prettier", "jest", "vitest", "mocha", "webpack", "vite", "rollup", "esbuild"], special: Special::PackageScripts, ..P },
    ProgramSpec { names: &["docker", "podman", "kubectl", "nerdctl", "ctr", "lxc", "vagrant", "helm"], special: Special::Container, network: true, ..P },
    ProgramSpec { names: &["apt", "apt-get", "aptitude", "dpkg", "dnf", "yum", "zypper", "pacman", "apk", "brew", "snap", "flatpak", "port", "nix", "nix-env"], special: Special::Apt, ..P },
    // --- system state ------------------------------------------------------------
    ProgramSpec { names: &["shutdown", "reboot", "poweroff", "halt", "init", "telinit", "systemctl", "service", "crontab", "at", "batch", "chsh", "passwd", "useradd", "userdel", "usermod", "visudo", "modprobe", "insmod", "rmmod", "sysctl", "iptables", "nft", "ufw"], options: &[], special: Special::None, ..P },
];

/// Programs that load configuration or code from the directory they run in
/// (a repository's `.git/config`, `.cargo/config.toml`, `.npmrc`, a Makefile,
/// `conftest.py` …). Run after a `cd`, that directory is judged as read: one
/// outside the workspace is another project's code.
#[rustfmt::skip]
pub static LOADS_FROM_CWD: &[&str] = &[
    "git", "cargo", "rustc", "npm", "npx", "yarn", "pnpm", "bun", "deno", "node", "make", "gmake",
    "cmake", "ninja", "python", "python3", "pytest", "pip", "pip3", "uv", "poetry", "tox", "go",
    "mvn", "gradle", "gradlew", "ant", "bundle", "rake", "ruby", "composer", "php", "dotnet",
    "docker", "docker-compose", "podman", "terraform", "tofu", "direnv", "just", "task", "mix",
    "swift", "sbt", "lein", "stack", "cabal", "dune", "zig", "pre-commit", "husky", "lefthook",
];

/// Shell builtins that run no other program and read no configuration: a
/// variable assigned for one of their calls (`GIT_DIR=x echo …`) changes
/// nothing that runs (unless the text defines a function or alias of that name).
pub static BUILTINS_THAT_RUN_NOTHING: &[&str] =
    &["echo", "printf", "true", "false", ":", "test", "[", "pwd"];

/// Programs that run a command they are given but whose options are not in the
/// wrapper table: their call is opaque, never silently "just a program".
#[rustfmt::skip]
pub static UNMODELLED_RUNNERS: &[&str] = &[
    "unshare", "nsenter", "firejail", "bwrap", "systemd-run", "proot", "fakeroot", "fakechroot",
    "valgrind", "perf", "ltrace", "catchsegv", "parallel", "dbus-run-session", "ssh-agent", "sg",
    "newgrp", "schroot", "machinectl", "lxc-attach", "torsocks", "proxychains", "proxychains4", "numactl",
    "cpulimit", "chrt", "prlimit", "setarch", "linux32", "linux64", "faketime", "entr",
    "inotifywait", "nodemon", "tmux", "screen", "dtach", "daemonize", "start-stop-daemon", "runcon",
    "capsh", "setpriv", "xvfb-run", "dbus-launch", "eatmydata", "ccache", "sccache", "distcc",
    "hyperfine", "retry", "chpst", "envdir", "softlimit", "setuidgid",
];

/// Variables that change what a program executes or loads. Names ending in `*`
/// are prefixes.
#[rustfmt::skip]
// Not `IFS`: it changes how expansions split, and every expansion is already
// dynamic to the analysis; static words never split (`while IFS= read -r l`
// is everyday shell).
pub static ENV_VARS: &[(&str, EnvVarRisk)] = &[
    ("LD_PRELOAD", EnvVarRisk { reason: "loads a shared library into the program", shell_text: false, opaque: FROM_FILE }),
    ("LD_LIBRARY_PATH", EnvVarRisk { reason: "changes where shared libraries are loaded from", shell_text: false, opaque: None }),
    ("LD_AUDIT", EnvVarRisk { reason: "loads an audit library into the program", shell_text: false, opaque: FROM_FILE }),
    ("DYLD_*", EnvVarRisk { reason: "changes dynamic loading", shell_text: false, opaque: None }),
    ("PATH", EnvVarRisk { reason: "changes which programs names resolve to", shell_text: false, opaque: None }),
    ("BASH_ENV", EnvVarRisk { reason: "bash runs this file before a script", shell_text: false, opaque: FROM_FILE }),
    ("ENV", EnvVarRisk { reason: "sh runs this file at start", shell_text: false, opaque: FROM_FILE }),
    ("SHELLOPTS", EnvVarRisk { reason: "changes shell behaviour", shell_text: false, opaque: None }),
    ("BASHOPTS", EnvVarRisk { reason: "changes shell behaviour", shell_text: false, opaque: None }),
    ("PS4", EnvVarRisk { reason: "expanded (with substitutions) when tracing", shell_text: false, opaque: None }),
    ("PROMPT_COMMAND", EnvVarRisk { reason: "runs before each prompt", shell_text: true, opaque: None }),
    ("HOME", EnvVarRisk { reason: "changes which configuration files programs load", shell_text: false, opaque: None }),
    ("XDG_CONFIG_HOME", EnvVarRisk { reason: "changes which configuration files programs load", shell_text: false, opaque: None }),
    ("PAGER", EnvVarRisk { reason: "a command run to page output", shell_text: true, opaque: None }),
    ("MANPAGER", EnvVarRisk { reason: "a command run to page manuals", shell_text: true, opaque: None }),
    ("GIT_PAGER", EnvVarRisk { reason: "a command git runs to page output", shell_text: true, opaque: None }),
    ("EDITOR", EnvVarRisk { reason: "a command run to edit text", shell_text: true, opaque: None }),
    ("VISUAL", EnvVarRisk { reason: "a command run to edit text", shell_text: true, opaque: None }),
    ("GIT_EDITOR", EnvVarRisk { reason: "a command git runs to edit text", shell_text: true, opaque: None }),
    ("GIT_SEQUENCE_EDITOR", EnvVarRisk { reason: "a command git runs to edit the rebase plan", shell_text: true, opaque: None }),
    ("GIT_SSH_COMMAND", EnvVarRisk { reason: "a command git runs instead of ssh", shell_text: true, opaque: None }),
    ("GIT_SSH", EnvVarRisk { reason: "a program git runs instead of ssh", shell_text: false, opaque: None }),
    ("GIT_EXTERNAL_DIFF", EnvVarRisk { reason: "a program git runs to diff", shell_text: true, opaque: None }),
    ("GIT_ASKPASS", EnvVarRisk { reason: "a program git runs for credentials", shell_text: false, opaque: None }),
    ("SSH_ASKPASS", EnvVarRisk { reason: "a program ssh runs for credentials", shell_text: false, opaque: None }),
    ("SUDO_ASKPASS", EnvVarRisk { reason: "a program sudo runs for credentials", shell_text: false, opaque: None }),
    ("GIT_CONFIG*", EnvVarRisk { reason: "git configuration from the environment, which can name programs git runs", shell_text: false, opaque: CONFIG }),
    ("GIT_DIR", EnvVarRisk { reason: "uses another repository, whose configuration and hooks can run programs", shell_text: false, opaque: FROM_FILE }),
    ("GIT_WORK_TREE", EnvVarRisk { reason: "uses another work tree", shell_text: false, opaque: None }),
    ("GIT_EXEC_PATH", EnvVarRisk { reason: "runs git subcommands from another directory", shell_text: false, opaque: FROM_FILE }),
    ("GIT_TEMPLATE_DIR", EnvVarRisk { reason: "copies hooks from another directory", shell_text: false, opaque: FROM_FILE }),
    ("GIT_*", EnvVarRisk { reason: "git configuration from the environment (repository, config, hooks, programs)", shell_text: false, opaque: None }),
    ("LESSOPEN", EnvVarRisk { reason: "a command less runs to preprocess files", shell_text: true, opaque: None }),
    ("LESSCLOSE", EnvVarRisk { reason: "a command less runs after preprocessing", shell_text: true, opaque: None }),
    ("PERL5OPT", EnvVarRisk { reason: "options (modules to load) for every perl", shell_text: false, opaque: FROM_FILE }),
    ("PERL5LIB", EnvVarRisk { reason: "where perl loads modules from", shell_text: false, opaque: None }),
    ("PERLLIB", EnvVarRisk { reason: "where perl loads modules from", shell_text: false, opaque: None }),
    ("PYTHONPATH", EnvVarRisk { reason: "where python loads modules from", shell_text: false, opaque: None }),
    ("PYTHONSTARTUP", EnvVarRisk { reason: "a file python runs at start", shell_text: false, opaque: FROM_FILE }),
    ("PYTHONHOME", EnvVarRisk { reason: "where python loads its library from", shell_text: false, opaque: None }),
    ("NODE_OPTIONS", EnvVarRisk { reason: "options (modules to require) for every node", shell_text: false, opaque: FROM_FILE }),
    ("NODE_PATH", EnvVarRisk { reason: "where node loads modules from", shell_text: false, opaque: None }),
    ("RUBYOPT", EnvVarRisk { reason: "options (libraries to load) for every ruby", shell_text: false, opaque: FROM_FILE }),
    ("RUBYLIB", EnvVarRisk { reason: "where ruby loads libraries from", shell_text: false, opaque: None }),
    ("JAVA_TOOL_OPTIONS", EnvVarRisk { reason: "options (agents to load) for every JVM", shell_text: false, opaque: FROM_FILE }),
    ("_JAVA_OPTIONS", EnvVarRisk { reason: "options (agents to load) for every JVM", shell_text: false, opaque: FROM_FILE }),
    ("RUSTC_WRAPPER", EnvVarRisk { reason: "a program cargo runs around rustc", shell_text: false, opaque: None }),
    ("RUSTC_WORKSPACE_WRAPPER", EnvVarRisk { reason: "a program cargo runs around rustc", shell_text: false, opaque: None }),
    ("RUSTC", EnvVarRisk { reason: "the compiler cargo runs", shell_text: false, opaque: None }),
    ("RUSTDOC", EnvVarRisk { reason: "the documentation tool cargo runs", shell_text: false, opaque: None }),
    ("CARGO_*", EnvVarRisk { reason: "cargo configuration from the environment (programs it runs)", shell_text: false, opaque: None }),
    ("RUSTFLAGS", EnvVarRisk { reason: "compiler flags (linkers, plugins) for cargo builds", shell_text: false, opaque: None }),
    ("CC", EnvVarRisk { reason: "the C compiler builds run", shell_text: false, opaque: None }),
    ("CXX", EnvVarRisk { reason: "the C++ compiler builds run", shell_text: false, opaque: None }),
    ("LDFLAGS", EnvVarRisk { reason: "linker flags for builds", shell_text: false, opaque: None }),
    ("MAKEFLAGS", EnvVarRisk { reason: "options for every make", shell_text: false, opaque: None }),
    ("NPM_CONFIG_*", EnvVarRisk { reason: "npm configuration from the environment (script shell, registry)", shell_text: false, opaque: None }),
    ("npm_config_*", EnvVarRisk { reason: "npm configuration from the environment (script shell, registry)", shell_text: false, opaque: None }),
    ("PIP_*", EnvVarRisk { reason: "pip configuration from the environment (index, build options)", shell_text: false, opaque: None }),
    ("GOFLAGS", EnvVarRisk { reason: "go flags (-toolexec runs a program)", shell_text: false, opaque: None }),
    ("BROWSER", EnvVarRisk { reason: "a program run to open URLs", shell_text: true, opaque: None }),
    ("TERMINAL", EnvVarRisk { reason: "a program run as terminal", shell_text: false, opaque: None }),
    ("SHELL", EnvVarRisk { reason: "the shell programs start for commands", shell_text: false, opaque: None }),
    // More loaders, build tools and configuration files that name programs.
    ("GCONV_PATH", EnvVarRisk { reason: "glibc loads character-set modules from there", shell_text: false, opaque: FROM_FILE }),
    ("LD_*", EnvVarRisk { reason: "changes how the dynamic loader runs the program", shell_text: false, opaque: None }),
    ("PYTHONUSERBASE", EnvVarRisk { reason: "python runs .pth files from there", shell_text: false, opaque: FROM_FILE }),
    ("PYTHONBREAKPOINT", EnvVarRisk { reason: "a callable python imports and runs on breakpoint()", shell_text: false, opaque: None }),
    ("PYTHONWARNINGS", EnvVarRisk { reason: "warning filters whose categories python imports", shell_text: false, opaque: None }),
    ("BUNDLE_GEMFILE", EnvVarRisk { reason: "the Gemfile (ruby code) bundler loads", shell_text: false, opaque: FROM_FILE }),
    ("GEM_HOME", EnvVarRisk { reason: "where ruby loads gems from", shell_text: false, opaque: None }),
    ("GEM_PATH", EnvVarRisk { reason: "where ruby loads gems from", shell_text: false, opaque: None }),
    ("GOTOOLCHAIN", EnvVarRisk { reason: "which go toolchain is fetched and run", shell_text: false, opaque: None }),
    ("GOENV", EnvVarRisk { reason: "the go configuration file (flags, toolchain)", shell_text: false, opaque: FROM_FILE }),
    ("CGO_*", EnvVarRisk { reason: "compiler and linker settings for cgo builds", shell_text: false, opaque: None }),
    ("CFLAGS", EnvVarRisk { reason: "compiler flags (plugins, other passes)", shell_text: false, opaque: None }),
    ("CXXFLAGS", EnvVarRisk { reason: "compiler flags (plugins, other passes)", shell_text: false, opaque: None }),
    ("CPPFLAGS", EnvVarRisk { reason: "preprocessor flags (plugins, other passes)", shell_text: false, opaque: None }),
    ("AR", EnvVarRisk { reason: "a program builds run", shell_text: false, opaque: None }),
    ("LD", EnvVarRisk { reason: "the linker builds run", shell_text: false, opaque: None }),
    ("AS", EnvVarRisk { reason: "the assembler builds run", shell_text: false, opaque: None }),
    ("MAVEN_OPTS", EnvVarRisk { reason: "JVM options (agents to load) for maven", shell_text: false, opaque: FROM_FILE }),
    ("GRADLE_OPTS", EnvVarRisk { reason: "JVM options (agents to load) for gradle", shell_text: false, opaque: FROM_FILE }),
    ("JAVA_HOME", EnvVarRisk { reason: "which java tools run", shell_text: false, opaque: None }),
    ("KUBECONFIG", EnvVarRisk { reason: "the cluster configuration, whose credential plugins are programs", shell_text: false, opaque: FROM_FILE }),
    ("AWS_CONFIG_FILE", EnvVarRisk { reason: "the AWS configuration, whose credential_process is a program", shell_text: false, opaque: FROM_FILE }),
    ("DOCKER_HOST", EnvVarRisk { reason: "which docker daemon runs the containers", shell_text: false, opaque: None }),
    ("DOCKER_CONFIG", EnvVarRisk { reason: "the docker configuration, whose credential helpers are programs", shell_text: false, opaque: FROM_FILE }),
    ("ZDOTDIR", EnvVarRisk { reason: "where zsh reads its startup files", shell_text: false, opaque: FROM_FILE }),
    ("VIMINIT", EnvVarRisk { reason: "commands vim runs at start", shell_text: false, opaque: CONFIG }),
    ("EXINIT", EnvVarRisk { reason: "commands ex and vi run at start", shell_text: false, opaque: CONFIG }),
    ("MYVIMRC", EnvVarRisk { reason: "the vim startup file", shell_text: false, opaque: FROM_FILE }),
    ("SYSTEMD_PAGER", EnvVarRisk { reason: "a command systemd tools run to page output", shell_text: true, opaque: None }),
    ("SYSTEMD_EDITOR", EnvVarRisk { reason: "a command systemd tools run to edit", shell_text: true, opaque: None }),
    ("SUDO_EDITOR", EnvVarRisk { reason: "a command sudoedit runs", shell_text: true, opaque: None }),
    ("FCEDIT", EnvVarRisk { reason: "a command fc runs to edit history", shell_text: true, opaque: None }),
    ("LESS", EnvVarRisk { reason: "options for less, which can run commands", shell_text: false, opaque: CONFIG }),
    ("LESSKEY", EnvVarRisk { reason: "a key file for less", shell_text: false, opaque: FROM_FILE }),
    ("MANOPT", EnvVarRisk { reason: "options for man (its pager, its preprocessors)", shell_text: false, opaque: CONFIG }),
    ("OPENSSL_CONF", EnvVarRisk { reason: "the OpenSSL configuration, which loads engines and providers", shell_text: false, opaque: FROM_FILE }),
    ("OPENSSL_ENGINES", EnvVarRisk { reason: "where OpenSSL loads engines from", shell_text: false, opaque: FROM_FILE }),
    ("OPENSSL_MODULES", EnvVarRisk { reason: "where OpenSSL loads providers from", shell_text: false, opaque: FROM_FILE }),
    ("CURL_HOME", EnvVarRisk { reason: "where curl reads its .curlrc (output files, uploads)", shell_text: false, opaque: FROM_FILE }),
    ("WGETRC", EnvVarRisk { reason: "the wget configuration (output files, commands)", shell_text: false, opaque: FROM_FILE }),
];
