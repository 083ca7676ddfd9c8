//! curl: every option that reads or writes a file, read with the shared
//! scanner from one table — including the reads curl hides in values
//! (`-H @file`, `-d @file`, `--data-urlencode name@file`, `-F name=<file`,
//! `--variable name@file`, `--json @file`, `-w @file`, `-K config`) and the
//! writes it does besides `-o` (`-O` and `#N` names taken from the URL,
//! `--output-dir`, cookie jars, `--dump-header`, `--etag-save`, traces,
//! `--libcurl`, `--hsts`/`--alt-svc` caches). `--expand-OPT` values are
//! expanded from variables at run time: known only then.

use super::*;
use crate::knowledge::options::{Arity, Opt, long, opt, scan, short};

/// What an option's value is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Value {
    /// A file written (`-` and `/dev/null` are not).
    Writes,
    /// A file read and written (HSTS, Alt-Svc caches).
    ReadsWrites,
    /// A file read.
    Reads,
    /// `@file` reads the file (`-H`, `-d`, `-w`, `--json`…), `name@file` too
    /// for `--data-urlencode` and `--variable`.
    AtFile,
    /// `-F name=@file` / `name=<file`.
    Form,
    /// A cookie string, or a file to read when it has no `=`.
    Cookie,
    /// Options read from a file: any of them, outputs included.
    Config,
    /// A URL.
    Url,
    /// A directory the outputs go to.
    OutputDir,
    /// Nothing this reader needs.
    Other,
}

const fn v(short: char, long_name: &'static str, id: &'static str) -> Opt {
    opt(short, long_name, Arity::Required, id)
}
const fn l(long_name: &'static str, id: &'static str) -> Opt {
    long(long_name, Arity::Required, id)
}
const fn flag(short: char, long_name: &'static str) -> Opt {
    opt(short, long_name, Arity::Flag, "flag")
}

/// curl's options that take a value, by what the value is; every option not
/// listed is a flag.
const OPTIONS: &[Opt] = &[
    v('o', "output", "writes"),
    l("output-dir", "output-dir"),
    v('c', "cookie-jar", "writes"),
    v('D', "dump-header", "writes"),
    l("etag-save", "writes"),
    l("trace", "writes"),
    l("trace-ascii", "writes"),
    l("libcurl", "writes"),
    l("stderr", "writes"),
    l("hsts", "reads-writes"),
    l("alt-svc", "reads-writes"),
    v('T', "upload-file", "reads"),
    v('E', "cert", "reads"),
    l("key", "reads"),
    l("cacert", "reads"),
    l("capath", "reads"),
    l("crlfile", "reads"),
    l("netrc-file", "reads"),
    l("proxy-cacert", "reads"),
    l("proxy-capath", "reads"),
    l("proxy-cert", "reads"),
    l("proxy-key", "reads"),
    l("proxy-crlfile", "reads"),
    l("etag-compare", "reads"),
    l("random-file", "reads"),
    l("egd-file", "reads"),
    l("pinnedpubkey", "reads"),
    l("pubkey", "reads"),
    l("ssl-sessions", "reads-writes"),
    v('H', "header", "at-file"),
    l("proxy-header", "at-file"),
    v('d', "data", "at-file"),
    l("data-binary", "at-file"),
    l("data-ascii", "at-file"),
    l("data-urlencode", "urlencode"),
    l("json", "at-file"),
    l("url-query", "at-file"),
    l("variable", "variable"),
    v('w', "write-out", "at-file"),
    v('F', "form", "form"),
    l("form-string", "other"),
    v('b', "cookie", "cookie"),
    v('K', "config", "config"),
    l("url", "url"),
    v('x', "proxy", "url"),
    l("preproxy", "url"),
    l("doh-url", "url"),
    v('A', "user-agent", "other"),
    v('e', "referer", "other"),
    v('X', "request", "other"),
    v('u', "user", "other"),
    v('U', "proxy-user", "other"),
    v('m', "max-time", "other"),
    v('r', "range", "other"),
    v('y', "speed-time", "other"),
    v('Y', "speed-limit", "other"),
    v('z', "time-cond", "other"),
    v('Q', "quote", "other"),
    v('C', "continue-at", "other"),
    v('P', "ftp-port", "other"),
    v('t', "telnet-option", "other"),
    short('h', Arity::Optional, "other"),
    long("help", Arity::Optional, "other"),
    l("connect-timeout", "other"),
    l("connect-to", "other"),
    l("resolve", "other"),
    l("retry", "other"),
    l("retry-delay", "other"),
    l("retry-max-time", "other"),
    l("limit-rate", "other"),
    l("interface", "other"),
    l("dns-servers", "other"),
    l("dns-interface", "other"),
    l("dns-ipv4-addr", "other"),
    l("dns-ipv6-addr", "other"),
    l("local-port", "other"),
    l("max-filesize", "other"),
    l("max-redirs", "other"),
    l("noproxy", "other"),
    l("oauth2-bearer", "other"),
    l("pass", "other"),
    l("proto", "other"),
    l("proto-default", "other"),
    l("proto-redir", "other"),
    l("proxy-pass", "other"),
    l("rate", "other"),
    l("request-target", "other"),
    l("aws-sigv4", "other"),
    l("ciphers", "other"),
    l("curves", "other"),
    l("cert-type", "other"),
    l("key-type", "other"),
    l("engine", "other"),
    l("create-file-mode", "other"),
    l("delegation", "other"),
    l("expect100-timeout", "other"),
    l("ftp-account", "other"),
    l("ftp-alternative-to-user", "other"),
    l("ftp-method", "other"),
    l("ftp-ssl-ccc-mode", "other"),
    l("happy-eyeballs-timeout-ms", "other"),
    l("haproxy-clientip", "other"),
    l("hostpubmd5", "other"),
    l("hostpubsha256", "other"),
    l("ipfs-gateway", "other"),
    l("keepalive-time", "other"),
    l("krb", "other"),
    l("login-options", "other"),
    l("mail-auth", "other"),
    l("mail-from", "other"),
    l("mail-rcpt", "other"),
    l("parallel-max", "other"),
    l("proxy-ciphers", "other"),
    l("proxy-service-name", "other"),
    l("proxy-tls13-ciphers", "other"),
    l("proxy-tlsauthtype", "other"),
    l("proxy-tlspassword", "other"),
    l("proxy-tlsuser", "other"),
    l("proxy1.0", "url"),
    l("sasl-authzid", "other"),
    l("service-name", "other"),
    l("socks4", "url"),
    l("socks4a", "url"),
    l("socks5", "url"),
    l("socks5-hostname", "url"),
    l("socks5-gssapi-service", "other"),
    l("speed-limit", "other"),
    l("speed-time", "other"),
    l("tftp-blksize", "other"),
    l("tls-max", "other"),
    l("tls13-ciphers", "other"),
    l("tlsauthtype", "other"),
    l("tlspassword", "other"),
    l("tlsuser", "other"),
    l("trace-config", "other"),
    l("unix-socket", "reads"),
    l("abstract-unix-socket", "other"),
    l("ech", "other"),
    opt('O', "remote-name", Arity::Flag, "remote-name"),
    long("remote-name-all", Arity::Flag, "remote-name"),
    opt('J', "remote-header-name", Arity::Flag, "remote-header-name"),
    flag('#', "progress-bar"),
    flag('0', "http1.0"),
    flag('1', "tlsv1"),
    flag('2', "sslv2"),
    flag('3', "sslv3"),
    flag('4', "ipv4"),
    flag('6', "ipv6"),
    flag('a', "append"),
    flag('B', "use-ascii"),
    flag('f', "fail"),
    flag('g', "globoff"),
    flag('G', "get"),
    flag('i', "include"),
    flag('I', "head"),
    flag('j', "junk-session-cookies"),
    flag('k', "insecure"),
    flag('l', "list-only"),
    flag('L', "location"),
    flag('M', "manual"),
    flag('n', "netrc"),
    flag('N', "no-buffer"),
    flag('p', "proxytunnel"),
    flag('q', "disable"),
    flag('R', "remote-time"),
    flag('s', "silent"),
    flag('S', "show-error"),
    flag('v', "verbose"),
    flag('V', "version"),
    flag('Z', "parallel"),
];

fn role(id: &str) -> Value {
    match id {
        "writes" => Value::Writes,
        "reads-writes" => Value::ReadsWrites,
        "reads" => Value::Reads,
        "at-file" | "variable" | "urlencode" => Value::AtFile,
        "form" => Value::Form,
        "cookie" => Value::Cookie,
        "config" => Value::Config,
        "url" => Value::Url,
        "output-dir" => Value::OutputDir,
        _ => Value::Other,
    }
}

pub(in crate::knowledge) fn curl(args: &[Word], f: &mut Findings) {
    // `--expand-OPT VALUE` is OPT with a value expanded at run time.
    let expanded: Vec<Word> = args
        .iter()
        .map(|w| match w.value.strip_prefix("--expand-") {
            Some(rest) => Word {
                value: format!("--{rest}"),
                dynamic: w.dynamic,
                nested: w.nested.clone(),
            },
            None => w.clone(),
        })
        .collect();
    let expands = |at: usize| {
        args.get(at)
            .is_some_and(|w| w.value.starts_with("--expand-"))
    };
    let s = scan(OPTIONS, &expanded);
    let mut output_dir: Option<(String, bool)> = None;
    let mut remote_names = s.has("remote-name") || s.has("remote-header-name");
    for o in &s.options {
        let Some(value) = o.value.as_deref() else {
            continue;
        };
        let dynamic = o.dynamic || expands(o.at);
        let r = role(o.id);
        match r {
            Value::Writes | Value::ReadsWrites if value != "-" && value != "/dev/null" => {
                if r == Value::ReadsWrites {
                    f.read_path(value, dynamic);
                }
                // `-o '#1'`: the name comes from the URL's glob.
                let from_url = value.contains('#') && o.id == "writes";
                remote_names |= from_url;
                f.write_path(value, dynamic || from_url);
            }
            Value::Writes | Value::ReadsWrites => {}
            Value::Reads => {
                if value != "-" && value != "." {
                    f.read_path(value, dynamic);
                }
            }
            Value::AtFile => {
                // `@file`, and `name@file` for `--data-urlencode`/`--variable`.
                let file = value.strip_prefix('@').or_else(|| {
                    value
                        .split_once('@')
                        .filter(|(name, _)| {
                            !name.contains(['=', ' ', '/'])
                                && matches!(o.id, "urlencode" | "variable")
                                && !name.is_empty()
                        })
                        .map(|(_, file)| file)
                });
                if let Some(p) = file.filter(|p| *p != "-") {
                    f.read_path(p, dynamic);
                }
                if (o.id == "variable" && value.starts_with('%'))
                    || (expands(o.at) && value.contains("{{"))
                {
                    // `--variable %NAME` reads the environment; `{{…}}` expands.
                    f.opaque(
                        OpaqueReason::DynamicCode,
                        format!("curl expands variables at run time: {value}"),
                    );
                }
            }
            Value::Form => {
                if let Some((_, v)) = value.split_once('=')
                    && let Some(p) = v.strip_prefix('@').or_else(|| v.strip_prefix('<'))
                {
                    f.read_path(p.split(';').next().unwrap_or(p), dynamic);
                }
            }
            Value::Cookie if !value.contains('=') => f.read_path(value, dynamic),
            Value::Cookie => {}
            Value::Config => {
                f.read_path(value, dynamic);
                f.code(
                    "curl",
                    "--config",
                    "reads options (output files, uploads, commands' URLs) from a file",
                );
                f.opaque(
                    OpaqueReason::CodeFromFile,
                    format!("curl --config {value}: options read from a file"),
                );
            }
            Value::Url => url(value, dynamic, f),
            Value::OutputDir => output_dir = Some((value.to_string(), dynamic)),
            Value::Other => {}
        }
    }
    if remote_names {
        // Names taken from the URL (or the server): a file in the output
        // directory (or here) known only at run time.
        let dir = output_dir.as_ref().map(|(d, _)| d.as_str()).unwrap_or(".");
        f.write_path(dir, true);
    } else if let Some((dir, dynamic)) = &output_dir {
        f.write_path(dir, *dynamic);
    }
    for u in &s.operands {
        url(&u.value, u.dynamic, f);
    }
}

fn url(value: &str, dynamic: bool, f: &mut Findings) {
    let lower = value.to_ascii_lowercase();
    if let Some(path) = lower.strip_prefix("file://").map(|_| &value[7..]) {
        // `file://host/path` and `file:///path`.
        let path = path.find('/').map_or(path, |i| &path[i..]);
        f.read_path(path, dynamic);
    } else if dynamic {
        f.network("curl", None);
    } else {
        f.network("curl", host_of(value));
    }
}
