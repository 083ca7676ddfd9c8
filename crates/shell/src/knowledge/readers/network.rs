//! Network tools: wget, ssh, scp, rsync, netcat, socat (curl has its own file).

use super::*;
use crate::knowledge::options::{Arity, Opt, long, opt, scan, scan_in_order, short};

/// The host a URL names, read as clients read it (`crate::url`); a text
/// without a scheme (`host/path`, `user@host`) by its first component.
pub(super) fn host_of(url: &str) -> Option<String> {
    if let Some(host) = crate::url::host(url) {
        return Some(host);
    }
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let host = rest.split(['/', '?', '#']).next()?;
    let host = host.rsplit('@').next()?;
    let host = host.split(':').next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// wget's options that take a value, by what the value is; the rest are flags.
const WGET_OPTIONS: &[Opt] = &[
    opt('O', "output-document", Arity::Required, "document"),
    opt('P', "directory-prefix", Arity::Required, "document"),
    opt('o', "output-file", Arity::Required, "writes"),
    opt('a', "append-output", Arity::Required, "writes"),
    long("save-cookies", Arity::Required, "writes"),
    long("warc-file", Arity::Required, "writes"),
    long("rejected-log", Arity::Required, "writes"),
    long("hsts-file", Arity::Required, "reads-writes"),
    opt('i', "input-file", Arity::Required, "input"),
    long("post-file", Arity::Required, "reads"),
    long("body-file", Arity::Required, "reads"),
    long("load-cookies", Arity::Required, "reads"),
    long("ca-certificate", Arity::Required, "reads"),
    long("ca-directory", Arity::Required, "reads"),
    long("certificate", Arity::Required, "reads"),
    long("private-key", Arity::Required, "reads"),
    long("crl-file", Arity::Required, "reads"),
    long("config", Arity::Required, "config"),
    opt('e', "execute", Arity::Required, "execute"),
    long("use-askpass", Arity::Required, "askpass"),
    // `-nv`, `-nc`, `-nd`, `-nH`, `-np`: `-n` with an attached letter.
    short('n', Arity::Required, "other"),
    opt('t', "tries", Arity::Required, "other"),
    opt('T', "timeout", Arity::Required, "other"),
    opt('w', "wait", Arity::Required, "other"),
    opt('Q', "quota", Arity::Required, "other"),
    opt('l', "level", Arity::Required, "other"),
    opt('U', "user-agent", Arity::Required, "other"),
    opt('B', "base", Arity::Required, "other"),
    opt('D', "domains", Arity::Required, "other"),
    opt('X', "exclude-directories", Arity::Required, "other"),
    opt('I', "include-directories", Arity::Required, "other"),
    opt('A', "accept", Arity::Required, "other"),
    opt('R', "reject", Arity::Required, "other"),
    long("header", Arity::Required, "other"),
    long("user", Arity::Required, "other"),
    long("password", Arity::Required, "other"),
    long("referer", Arity::Required, "other"),
    long("post-data", Arity::Required, "other"),
    long("method", Arity::Required, "other"),
    long("body-data", Arity::Required, "other"),
    long("limit-rate", Arity::Required, "other"),
    long("bind-address", Arity::Required, "other"),
    long("proxy-user", Arity::Required, "other"),
    long("proxy-password", Arity::Required, "other"),
    long("http-user", Arity::Required, "other"),
    long("http-password", Arity::Required, "other"),
    long("ftp-user", Arity::Required, "other"),
    long("ftp-password", Arity::Required, "other"),
    long("cut-dirs", Arity::Required, "other"),
    long("restrict-file-names", Arity::Required, "other"),
    long("local-encoding", Arity::Required, "other"),
    long("remote-encoding", Arity::Required, "other"),
    long("progress", Arity::Required, "other"),
    long("secure-protocol", Arity::Required, "other"),
    long("dns-timeout", Arity::Required, "other"),
    long("connect-timeout", Arity::Required, "other"),
    long("read-timeout", Arity::Required, "other"),
    long("waitretry", Arity::Required, "other"),
    long("prefer-family", Arity::Required, "other"),
    long("accept-regex", Arity::Required, "other"),
    long("reject-regex", Arity::Required, "other"),
    long("regex-type", Arity::Required, "other"),
    long("exclude-domains", Arity::Required, "other"),
    long("follow-tags", Arity::Required, "other"),
    long("ignore-tags", Arity::Required, "other"),
    long("max-redirect", Arity::Required, "other"),
    long("retry-on-http-error", Arity::Required, "other"),
    long("backups", Arity::Required, "other"),
    long("report-speed", Arity::Required, "other"),
    long("ciphers", Arity::Required, "other"),
    long("pinnedpubkey", Arity::Required, "other"),
    long("default-page", Arity::Required, "other"),
    long("compression", Arity::Required, "other"),
    long("warc-header", Arity::Required, "other"),
    long("warc-max-size", Arity::Required, "other"),
    long("warc-dedup", Arity::Required, "other"),
    long("warc-tempdir", Arity::Required, "other"),
];

pub(in crate::knowledge) fn wget(args: &[Word], f: &mut Findings) {
    let s = scan(WGET_OPTIONS, args);
    if let Some(u) = s.unknown.iter().find(|u| !u.starts_with('-')) {
        f.opaque(
            OpaqueReason::DynamicCode,
            format!("wget argument known only at run time (it may be -O or -e): {u}"),
        );
    }
    let mut saved = false;
    for o in &s.options {
        let Some(value) = o.value.as_deref() else {
            continue;
        };
        match o.id {
            "document" => {
                saved = true;
                if value != "-" {
                    f.write_path(value, o.dynamic);
                }
            }
            "writes" if value != "-" => f.write_path(value, o.dynamic),
            "reads-writes" => {
                f.read_path(value, o.dynamic);
                f.write_path(value, o.dynamic);
            }
            "reads" => f.read_path(value, o.dynamic),
            "input" if value != "-" => {
                if value.contains("://") {
                    f.network("wget", if o.dynamic { None } else { host_of(value) });
                } else {
                    f.read_path(value, o.dynamic);
                }
            }
            "config" => {
                f.read_path(value, o.dynamic);
                f.code(
                    "wget",
                    "--config",
                    format!("runs wgetrc commands from {value}"),
                );
                f.opaque(
                    OpaqueReason::CodeFromFile,
                    format!(
                        "wget --config {value}: commands (output files among them) from a file"
                    ),
                );
            }
            "execute" => wgetrc_command(value, o.dynamic, &mut saved, f),
            "askpass" => {
                f.code("wget", "--use-askpass", format!("runs the program {value}"));
                f.exec_text("wget --use-askpass", value, o.dynamic);
            }
            _ => {}
        }
    }
    for u in &s.operands {
        f.network("wget", if u.dynamic { None } else { host_of(&u.value) });
    }
    if saved {
        return;
    }
    // Without -O a download lands here under the URL's last path component
    // (`index.html` for none). Recursion, server-chosen names and directory
    // trees make the names known only at run time.
    let tree = s.unknown.iter().any(|u| {
        matches!(
            u.as_str(),
            "-r" | "-m"
                | "-p"
                | "-x"
                | "--recursive"
                | "--mirror"
                | "--page-requisites"
                | "--content-disposition"
                | "--force-directories"
                | "--trust-server-names"
        )
    }) || s.has("input");
    let names: Option<Vec<String>> = s
        .operands
        .iter()
        .map(|u| {
            let rest = u
                .value
                .split_once("://")
                .map_or(u.value.as_str(), |(_, r)| r);
            let path = rest.split(['?', '#']).next().unwrap_or(rest);
            let name = path
                .split_once('/')
                .map_or("", |(_, p)| p)
                .rsplit('/')
                .next();
            (!u.dynamic).then(|| match name {
                Some(n) if !n.is_empty() => n.to_string(),
                _ => "index.html".to_string(),
            })
        })
        .collect();
    match names {
        Some(names) if !tree => names.iter().for_each(|n| f.write_path(n, false)),
        _ => f.write_path(".", true),
    }
}

/// wgetrc commands (`wget -e NAME=VALUE`) that write the file their value
/// names, read it, or run it; names compare without `-`/`_`, in any case.
const WGETRC_WRITES: &[&str] = &[
    "outputdocument",
    "logfile",
    "dirprefix",
    "savecookies",
    "warcfile",
    "rejectedlog",
    "hstsfile",
];
const WGETRC_READS: &[&str] = &[
    "input",
    "postfile",
    "bodyfile",
    "loadcookies",
    "cacertificate",
    "cadirectory",
    "certificate",
    "privatekey",
    "crlfile",
];
const WGETRC_RUNS: &[&str] = &["useaskpass"];
/// wgetrc commands that only tune the transfer.
const WGETRC_TUNES: &[&str] = &[
    "robots",
    "tries",
    "timeout",
    "wait",
    "verbose",
    "quiet",
    "checkcertificate",
    "useragent",
    "maxredirect",
    "continue",
    "timestamping",
    "recursive",
    "reclevel",
    "noparent",
    "convertlinks",
    "pagerequisites",
    "adjustextension",
    "httpsonly",
    "retryconnrefused",
    "waitretry",
    "randomwait",
    "limitrate",
    "showprogress",
    "progress",
    "serverresponse",
    "contentdisposition",
    "trustservernames",
    "dotstyle",
    "backups",
    "compression",
    "iri",
    "localencoding",
    "remoteencoding",
    "inet4only",
    "inet6only",
    "preferfamily",
];

/// One `wget -e` command.
fn wgetrc_command(text: &str, dynamic: bool, saved: &mut bool, f: &mut Findings) {
    let (name, value) = text.split_once('=').unwrap_or((text, ""));
    let key: String = name
        .trim()
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    let value = value.trim();
    if dynamic {
        f.opaque(
            OpaqueReason::DynamicCode,
            format!("wget -e known only at run time: {text}"),
        );
    } else if WGETRC_WRITES.contains(&key.as_str()) {
        *saved |= matches!(key.as_str(), "outputdocument" | "dirprefix");
        if value != "-" {
            f.write_path(value, false);
        }
    } else if WGETRC_READS.contains(&key.as_str()) {
        f.read_path(value, false);
    } else if WGETRC_RUNS.contains(&key.as_str()) {
        f.code("wget", "-e", format!("runs the program {value}"));
        f.exec_text("wget -e use_askpass", value, false);
    } else if !WGETRC_TUNES.contains(&key.as_str()) {
        f.opaque(
            OpaqueReason::InterpretedCode,
            format!("wget -e {text}: a wgetrc command this analysis does not know"),
        );
    }
}

/// ssh options whose value is local shell text.
pub(super) const SSH_SHELL_OPTIONS: &[&str] =
    &["proxycommand", "localcommand", "knownhostscommand", "match"];

pub(super) fn ssh_option(kv: &str, dynamic: bool, program: &str, f: &mut Findings) {
    let (key, value) = match kv.split_once('=') {
        Some((k, v)) => (k.trim(), v.trim()),
        None => match kv.split_once(char::is_whitespace) {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (kv, ""),
        },
    };
    let lower = key.to_ascii_lowercase();
    if SSH_SHELL_OPTIONS.contains(&lower.as_str()) {
        f.code(program, format!("-o {key}"), "runs a local command");
        if lower == "match" {
            f.opaque(
                OpaqueReason::DynamicCode,
                format!("{program} -o Match {value}"),
            );
        } else if value != "none" {
            f.shell(format!("{program} -o {key}"), value, dynamic);
        }
    } else if matches!(
        lower.as_str(),
        "permitlocalcommand"
            | "sshcommand"
            | "include"
            | "pkcs11provider"
            | "securitykeyprovider"
            | "identityagent"
            | "controlpath"
    ) {
        f.code(program, format!("-o {key}"), "loads code or configuration");
    }
}

/// OpenSSH `ssh`'s options that take a value (`getopt` letters with `:`).
const SSH_OPTIONS: &[Opt] = &[
    short('o', Arity::Required, "o"),
    short('F', Arity::Required, "F"),
    short('E', Arity::Required, "E"),
    short('S', Arity::Required, "S"),
    short('i', Arity::Required, "i"),
    short('I', Arity::Required, "I"),
    short('J', Arity::Required, "J"),
    short('B', Arity::Required, "other"),
    short('b', Arity::Required, "other"),
    short('c', Arity::Required, "other"),
    short('D', Arity::Required, "other"),
    short('e', Arity::Required, "other"),
    short('L', Arity::Required, "other"),
    short('l', Arity::Required, "other"),
    short('m', Arity::Required, "other"),
    short('O', Arity::Required, "other"),
    short('P', Arity::Required, "other"),
    short('p', Arity::Required, "other"),
    short('Q', Arity::Required, "other"),
    short('R', Arity::Required, "other"),
    short('W', Arity::Required, "other"),
    short('w', Arity::Required, "other"),
];

/// What an ssh or scp option does locally.
fn ssh_like_option(program: &str, o: &crate::knowledge::options::Found, f: &mut Findings) {
    let Some(value) = o.value.as_deref() else {
        return;
    };
    match o.id {
        "o" => ssh_option(value, o.dynamic, program, f),
        "F" => {
            f.read_path(value, o.dynamic);
            f.code(
                program,
                "-F",
                "reads a configuration file, which can name commands",
            );
        }
        "E" => f.write_path(value, o.dynamic),
        "i" | "S" => f.read_path(value, o.dynamic),
        "I" => f.code(program, "-I", format!("loads the PKCS#11 library {value}")),
        "J" => f.network(
            program,
            Some(value.rsplit('@').next().unwrap_or(value).to_string()),
        ),
        _ => {}
    }
}

pub(in crate::knowledge) fn ssh(args: &[Word], f: &mut Findings) {
    // Options before the destination, and (OpenSSH parses again) between the
    // destination and the remote command.
    let first = scan_in_order(SSH_OPTIONS, args);
    let mut rest = first.operands.iter();
    let host = rest.next();
    let after: Vec<Word> = rest.map(|w| (*w).clone()).collect();
    let second = scan_in_order(SSH_OPTIONS, &after);
    for s in [&first, &second] {
        if let Some(u) = s.unknown.iter().find(|u| !u.starts_with('-')) {
            f.opaque(
                OpaqueReason::DynamicCode,
                format!("ssh argument known only at run time (it may be -o): {u}"),
            );
        }
        for o in &s.options {
            ssh_like_option("ssh", o, f);
        }
    }
    if let Some(h) = host {
        let v = h.value.as_str();
        let host = crate::url::host(v).unwrap_or_else(|| {
            let v = v.rsplit('@').next().unwrap_or(v);
            v.split(':').next().unwrap_or(v).to_string()
        });
        f.network("ssh", (!h.dynamic).then_some(host));
    }
}

/// scp and sftp options that take a value.
const SCP_OPTIONS: &[Opt] = &[
    short('o', Arity::Required, "o"),
    short('F', Arity::Required, "F"),
    short('S', Arity::Required, "program"),
    short('i', Arity::Required, "i"),
    short('J', Arity::Required, "J"),
    short('c', Arity::Required, "other"),
    short('D', Arity::Required, "program"),
    short('l', Arity::Required, "other"),
    short('P', Arity::Required, "other"),
    short('X', Arity::Required, "other"),
    short('b', Arity::Required, "batch"),
    short('B', Arity::Required, "other"),
    short('R', Arity::Required, "other"),
    short('s', Arity::Required, "other"),
];

pub(in crate::knowledge) fn scp(name: &str, args: &[Word], f: &mut Findings) {
    let s = scan_in_order(SCP_OPTIONS, args);
    if let Some(u) = s.unknown.iter().find(|u| !u.starts_with('-')) {
        f.opaque(
            OpaqueReason::DynamicCode,
            format!("{name} argument known only at run time (it may be -S): {u}"),
        );
    }
    for o in &s.options {
        match (o.id, o.value.as_deref()) {
            ("program", Some(p)) => {
                f.code(name, "-S", format!("runs {p} instead of ssh"));
                f.shell(format!("{name} -S"), p, o.dynamic);
            }
            // sftp -b FILE: commands read from a file.
            ("batch", Some(p)) => {
                f.read_path(p, o.dynamic);
                f.opaque(
                    OpaqueReason::CodeFromFile,
                    format!("{name} -b {p}: commands from a file"),
                );
            }
            _ => ssh_like_option(name, o, f),
        }
    }
    remote_copy(name, &s.operands, f);
}

/// `src… dest` where `host:path` operands are remote.
pub(super) fn remote_copy(name: &str, operands: &[&Word], f: &mut Findings) {
    let is_remote = |w: &Word| {
        let v = &w.value;
        v.contains(':')
            && !v.starts_with('/')
            && !v.starts_with('.')
            && v.split(':').next().is_some_and(|h| !h.contains('/'))
    };
    if let Some((dest, sources)) = operands.split_last() {
        for s in sources {
            if is_remote(s) {
                f.network(
                    name,
                    s.value
                        .split(':')
                        .next()
                        .map(|h| h.rsplit('@').next().unwrap_or(h).to_string()),
                );
            } else {
                f.read(s);
            }
        }
        if is_remote(dest) {
            f.network(
                name,
                dest.value
                    .split(':')
                    .next()
                    .map(|h| h.rsplit('@').next().unwrap_or(h).to_string()),
            );
        } else {
            f.write(dest);
        }
    }
}

/// rsync's options that take a value, by what the value is; the rest are flags.
const RSYNC_OPTIONS: &[Opt] = &[
    opt('e', "rsh", Arity::Required, "rsh"),
    opt('f', "filter", Arity::Required, "other"),
    opt('T', "temp-dir", Arity::Required, "writes"),
    opt('B', "block-size", Arity::Required, "other"),
    opt('M', "remote-option", Arity::Required, "other"),
    opt('@', "modify-window", Arity::Required, "other"),
    long("rsync-path", Arity::Required, "other"),
    long("log-file", Arity::Required, "writes"),
    long("write-batch", Arity::Required, "writes"),
    long("only-write-batch", Arity::Required, "writes"),
    long("backup-dir", Arity::Required, "backup-dir"),
    long("partial-dir", Arity::Required, "other"),
    long("suffix", Arity::Required, "other"),
    long("files-from", Arity::Required, "reads"),
    long("exclude-from", Arity::Required, "reads"),
    long("include-from", Arity::Required, "reads"),
    long("password-file", Arity::Required, "reads"),
    long("read-batch", Arity::Required, "reads"),
    long("early-input", Arity::Required, "reads"),
    long("compare-dest", Arity::Required, "reads"),
    long("copy-dest", Arity::Required, "reads"),
    long("link-dest", Arity::Required, "reads"),
    long("exclude", Arity::Required, "other"),
    long("include", Arity::Required, "other"),
    long("info", Arity::Required, "other"),
    long("debug", Arity::Required, "other"),
    long("stderr", Arity::Required, "other"),
    long("chmod", Arity::Required, "other"),
    long("chown", Arity::Required, "other"),
    long("copy-as", Arity::Required, "other"),
    long("usermap", Arity::Required, "other"),
    long("groupmap", Arity::Required, "other"),
    long("max-delete", Arity::Required, "other"),
    long("max-size", Arity::Required, "other"),
    long("min-size", Arity::Required, "other"),
    long("max-alloc", Arity::Required, "other"),
    long("timeout", Arity::Required, "other"),
    long("contimeout", Arity::Required, "other"),
    long("compress-choice", Arity::Required, "other"),
    long("zc", Arity::Required, "other"),
    long("compress-level", Arity::Required, "other"),
    long("zl", Arity::Required, "other"),
    long("skip-compress", Arity::Required, "other"),
    long("address", Arity::Required, "other"),
    long("port", Arity::Required, "other"),
    long("sockopts", Arity::Required, "other"),
    long("out-format", Arity::Required, "other"),
    long("log-file-format", Arity::Required, "other"),
    long("bwlimit", Arity::Required, "other"),
    long("stop-after", Arity::Required, "other"),
    long("stop-at", Arity::Required, "other"),
    long("protocol", Arity::Required, "other"),
    long("iconv", Arity::Required, "other"),
    long("checksum-choice", Arity::Required, "other"),
    long("cc", Arity::Required, "other"),
    long("checksum-seed", Arity::Required, "other"),
    long("outbuf", Arity::Required, "other"),
];

pub(in crate::knowledge) fn rsync(args: &[Word], f: &mut Findings) {
    let s = scan(RSYNC_OPTIONS, args);
    // `-n`/`--dry-run` (in any bundle) transfers nothing; `--list-only` neither.
    let dry_run = s.unknown.iter().any(|u| {
        u == "-n" || "--dry-run".starts_with(u.as_str()) && u.len() > 4 || u == "--list-only"
    });
    let delete = s.unknown.iter().any(|u| {
        u.starts_with("--delete") || u.starts_with("--del") || u == "--remove-source-files"
    });
    // Flags are not in the table; a word known only at run time is, and it
    // may be `-e CMD`.
    if let Some(u) = s.unknown.iter().find(|u| !u.starts_with('-')) {
        f.opaque(
            OpaqueReason::DynamicCode,
            format!("rsync argument known only at run time (it may be -e): {u}"),
        );
    }
    for o in &s.options {
        let Some(value) = o.value.as_deref() else {
            continue;
        };
        match o.id {
            "rsh" => {
                f.code("rsync", "-e", "runs a remote shell program");
                f.shell("rsync -e", value, o.dynamic);
            }
            "writes" | "backup-dir" => f.write_path(value, o.dynamic),
            "reads" => f.read_path(value, o.dynamic),
            _ => {}
        }
    }
    let operands: Vec<&Word> = s.operands.clone();
    if dry_run {
        // Still reads the sources and reaches a remote; writes nothing.
        for o in operands.iter().rev().skip(1) {
            f.read(o);
        }
        return;
    }
    remote_copy("rsync", &operands, f);
    if let Some((dest, sources)) = operands.split_last() {
        // Without a trailing `/` a source lands as DEST/basename(SOURCE);
        // with one, its contents land in DEST (names known only at run time).
        let remote = dest.value.contains(':')
            && !dest.value.starts_with(['/', '.'])
            && dest
                .value
                .split(':')
                .next()
                .is_some_and(|h| !h.contains('/'));
        // Contents copied into the working directory, above it or to an
        // absolute path may land anywhere there (`.git/hooks` included):
        // names known only at run time. Into a subdirectory, they stay in it.
        let dest_text = dest.value.trim_end_matches('/');
        let open_ended = dest.dynamic
            || dest_text.is_empty()
            || dest_text == "."
            || dest_text.starts_with('/')
            || dest_text.starts_with('~')
            || dest_text.split('/').any(|c| c == "..");
        for src in sources.iter().filter(|_| !remote) {
            if src.value.ends_with('/') {
                f.write_path(&dest.value, open_ended);
            } else {
                let inside =
                    super::super::join_path(&dest.value, super::super::basename(&src.value));
                f.write_path(&inside, dest.dynamic || src.dynamic);
            }
        }
        if delete {
            f.delete(dest);
        }
    }
}

pub(in crate::knowledge) fn netcat(name: &str, args: &[Word], f: &mut Findings) {
    for (i, w) in args.iter().enumerate() {
        if matches!(
            w.value.as_str(),
            "-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec"
        ) {
            f.code(
                name,
                w.value.clone(),
                "runs a program connected to the socket",
            );
            if let Some(n) = args.get(i + 1) {
                f.shell(format!("{name} {}", w.value), &n.value, n.dynamic);
            }
        }
    }
}

pub(in crate::knowledge) fn socat(args: &[Word], f: &mut Findings) {
    for w in args {
        let upper = w.value.to_ascii_uppercase();
        for prefix in ["EXEC:", "SYSTEM:"] {
            if let Some(pos) = upper.find(prefix) {
                let cmd = &w.value[pos + prefix.len()..];
                let cmd = cmd.split(',').next().unwrap_or(cmd);
                f.code(
                    "socat",
                    prefix.trim_end_matches(':'),
                    "runs a program connected to the stream",
                );
                f.shell(format!("socat {prefix}"), cmd, w.dynamic);
            }
        }
    }
}
