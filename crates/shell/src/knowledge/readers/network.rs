//! Network tools: curl, wget, ssh, scp, rsync, netcat, socat.

use super::*;

pub(super) fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let host = rest.split(['/', '?', '#']).next()?;
    let host = host.rsplit('@').next()?;
    let host = host.split(':').next()?;
    (!host.is_empty()).then(|| host.to_string())
}

pub(in crate::knowledge) fn curl(args: &[Word], f: &mut Findings) {
    const VALUED: &[&str] = &[
        "-o",
        "--output",
        "-d",
        "--data",
        "--data-binary",
        "--data-raw",
        "--data-ascii",
        "--data-urlencode",
        "-F",
        "--form",
        "-H",
        "--header",
        "-X",
        "--request",
        "-u",
        "--user",
        "-T",
        "--upload-file",
        "-K",
        "--config",
        "-A",
        "--user-agent",
        "-e",
        "--referer",
        "-b",
        "--cookie",
        "-c",
        "--cookie-jar",
        "-D",
        "--dump-header",
        "-x",
        "--proxy",
        "-m",
        "--max-time",
        "--connect-timeout",
        "--retry",
        "-w",
        "--write-out",
        "-E",
        "--cert",
        "--key",
        "--cacert",
        "--output-dir",
        "--trace",
        "--trace-ascii",
        "--libcurl",
        "-r",
        "--range",
        "-y",
        "-Y",
        "-z",
        "--resolve",
        "--url",
        "-Q",
        "--quote",
        "--stderr",
        "--json",
        "-C",
        "--continue-at",
        "--limit-rate",
        "--interface",
        "--dns-servers",
        "--netrc-file",
    ];
    let mut i = 0;
    let mut urls = Vec::new();
    while i < args.len() {
        let w = &args[i];
        let v = w.value.as_str();
        if w.dynamic && !v.starts_with('-') {
            urls.push(w);
            i += 1;
            continue;
        }
        let (opt, inline) = if v.starts_with("--") {
            match v.split_once('=') {
                Some((o, val)) => (o.to_string(), Some(val.to_string())),
                None => (v.to_string(), None),
            }
        } else if v.starts_with('-') && v.len() > 2 && VALUED.contains(&&v[..2]) {
            (v[..2].to_string(), Some(v[2..].to_string()))
        } else {
            (v.to_string(), None)
        };
        if !opt.starts_with('-') || opt == "-" {
            urls.push(w);
            i += 1;
            continue;
        }
        let (value, dynamic) = if VALUED.contains(&opt.as_str()) {
            match inline {
                Some(val) => (Some(val), w.dynamic),
                None => {
                    i += 1;
                    (
                        args.get(i).map(|n| n.value.clone()),
                        args.get(i).is_some_and(|n| n.dynamic),
                    )
                }
            }
        } else {
            (None, false)
        };
        if let Some(val) = value {
            match opt.as_str() {
                "-o" | "--output" | "-c" | "--cookie-jar" | "-D" | "--dump-header" | "--trace"
                | "--trace-ascii" | "--libcurl" | "--stderr" | "--output-dir"
                    if val != "-" && val != "/dev/null" =>
                {
                    f.write_path(&val, dynamic);
                }
                "-T" | "--upload-file" | "-E" | "--cert" | "--key" | "--cacert"
                | "--netrc-file" => f.read_path(&val, dynamic),
                "-K" | "--config" => {
                    f.read_path(&val, dynamic);
                    f.code(
                        "curl",
                        "--config",
                        "reads options (output files, uploads) from a file",
                    );
                }
                "-d" | "--data" | "--data-binary" | "--data-ascii" | "--data-urlencode"
                | "--json" => {
                    let file = val
                        .strip_prefix('@')
                        .or_else(|| val.split_once("=@").map(|(_, p)| p));
                    if let Some(p) = file.filter(|p| *p != "-") {
                        f.read_path(p, dynamic);
                    }
                }
                "-F" | "--form" => {
                    if let Some((_, v)) = val.split_once('=')
                        && let Some(p) = v.strip_prefix('@').or_else(|| v.strip_prefix('<'))
                    {
                        f.read_path(p.split(';').next().unwrap_or(p), dynamic);
                    }
                }
                "-b" | "--cookie" if !val.contains('=') => f.read_path(&val, dynamic),
                "--url" => {
                    let word = Word {
                        value: val,
                        dynamic,
                        nested: Vec::new(),
                    };
                    curl_url(&word, f);
                }
                _ => {}
            }
        } else if opt == "-O"
            || opt == "--remote-name"
            || opt == "--remote-name-all"
            || (opt.starts_with('-') && !opt.starts_with("--") && opt.contains('O'))
        {
            f.write_path(".", true);
        }
        i += 1;
    }
    for u in urls {
        curl_url(u, f);
    }
}

pub(super) fn curl_url(u: &Word, f: &mut Findings) {
    if let Some(path) = u.value.strip_prefix("file://") {
        f.read_path(path, u.dynamic);
    } else if u.dynamic {
        f.network("curl", None);
    } else {
        f.network("curl", host_of(&u.value));
    }
}

pub(in crate::knowledge) fn wget(args: &[Word], f: &mut Findings) {
    let mut saved = false;
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let v = w.value.as_str();
        let next = args.get(i + 1);
        let (opt, val): (&str, Option<(String, bool)>) =
            if let Some((o, val)) = v.split_once('=').filter(|_| v.starts_with("--")) {
                (o, Some((val.to_string(), w.dynamic)))
            } else if matches!(
                v,
                "-O" | "-o"
                    | "-a"
                    | "-P"
                    | "-i"
                    | "-e"
                    | "--output-document"
                    | "--output-file"
                    | "--append-output"
                    | "--directory-prefix"
                    | "--input-file"
                    | "--execute"
                    | "--post-file"
                    | "--body-file"
                    | "--load-cookies"
                    | "--save-cookies"
                    | "--config"
            ) {
                i += 1;
                (v, next.map(|n| (n.value.clone(), n.dynamic)))
            } else if v.len() > 2 && matches!(&v[..2], "-O" | "-o" | "-P" | "-e") {
                (&v[..2], Some((v[2..].to_string(), w.dynamic)))
            } else {
                (v, None)
            };
        match (opt, val) {
            ("-O" | "--output-document" | "-P" | "--directory-prefix", Some((p, d))) => {
                saved = true;
                if p != "-" {
                    f.write_path(&p, d);
                }
            }
            (
                "-o" | "--output-file" | "-a" | "--append-output" | "--save-cookies",
                Some((p, d)),
            ) => f.write_path(&p, d),
            (
                "-i" | "--input-file" | "--post-file" | "--body-file" | "--load-cookies",
                Some((p, d)),
            ) => f.read_path(&p, d),
            ("-e" | "--execute" | "--config", Some((cmd, _))) => {
                f.code("wget", opt, format!("runs wgetrc command(s) {cmd}"));
            }
            (o, None) if !o.starts_with('-') => {
                f.network("wget", if w.dynamic { None } else { host_of(o) });
            }
            _ => {}
        }
        i += 1;
    }
    if !saved {
        f.write_path(".", true);
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

pub(in crate::knowledge) fn ssh(args: &[Word], f: &mut Findings) {
    let mut i = 0;
    while i < args.len() {
        let v = args[i].value.as_str();
        if v == "-o" {
            if let Some(n) = args.get(i + 1) {
                ssh_option(&n.value, n.dynamic, "ssh", f);
            }
            i += 2;
            continue;
        }
        if let Some(kv) = v.strip_prefix("-o") {
            ssh_option(kv, args[i].dynamic, "ssh", f);
        } else if v == "-F" {
            if let Some(n) = args.get(i + 1) {
                f.read(n);
                f.code(
                    "ssh",
                    "-F",
                    "reads a configuration file, which can name commands",
                );
            }
            i += 1;
        } else if v.starts_with('-') && v.len() > 1 {
            // Valued short options consume the next word.
            let last = v.chars().last().unwrap_or(' ');
            if v.len() == 2 && "BbcDEeFIiJLlmOoPpQRSWw".contains(last) {
                i += 1;
            }
        } else {
            f.network("ssh", Some(v.rsplit('@').next().unwrap_or(v).to_string()));
            break;
        }
        i += 1;
    }
}

pub(in crate::knowledge) fn scp(name: &str, args: &[Word], f: &mut Findings) {
    let mut operands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let v = w.value.as_str();
        if w.dynamic || !v.starts_with('-') {
            operands.push(w);
        } else if v == "-S" {
            if let Some(n) = args.get(i + 1) {
                f.code(name, "-S", format!("runs {} instead of ssh", n.value));
                f.shell(format!("{name} -S"), &n.value, n.dynamic);
            }
            i += 1;
        } else if v == "-o" {
            if let Some(n) = args.get(i + 1) {
                ssh_option(&n.value, n.dynamic, name, f);
            }
            i += 1;
        } else if let Some(kv) = v.strip_prefix("-o") {
            ssh_option(kv, w.dynamic, name, f);
        } else if v == "-F"
            || v == "-i"
            || v == "-P"
            || v == "-c"
            || v == "-l"
            || v == "-J"
            || v == "-D"
            || v == "-X"
        {
            i += 1;
        }
        i += 1;
    }
    remote_copy(name, &operands, f);
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

pub(in crate::knowledge) fn rsync(args: &[Word], f: &mut Findings) {
    let mut operands = Vec::new();
    let mut delete = false;
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let v = w.value.as_str();
        if w.dynamic || !v.starts_with('-') {
            operands.push(w);
        } else if v == "-e" || v == "--rsh" {
            if let Some(n) = args.get(i + 1) {
                f.code("rsync", "-e", "runs a remote shell program");
                f.shell("rsync -e", &n.value, n.dynamic);
            }
            i += 1;
        } else if let Some(cmd) = v.strip_prefix("--rsh=").or_else(|| {
            v.strip_prefix("-e")
                .filter(|s| !s.is_empty() && !v.starts_with("--"))
        }) {
            f.code("rsync", "-e", "runs a remote shell program");
            f.shell("rsync -e", cmd, w.dynamic);
        } else if v.starts_with("--delete") || v == "--remove-source-files" {
            delete = true;
        } else if matches!(
            v,
            "--exclude"
                | "--include"
                | "--filter"
                | "-f"
                | "--rsync-path"
                | "--port"
                | "--bwlimit"
                | "--chmod"
                | "--chown"
                | "--log-file"
                | "--password-file"
                | "--files-from"
                | "--exclude-from"
                | "--include-from"
                | "--backup-dir"
                | "--suffix"
                | "--partial-dir"
                | "--temp-dir"
                | "-T"
                | "--timeout"
                | "--compare-dest"
                | "--link-dest"
                | "--copy-dest"
        ) {
            i += 1;
        }
        i += 1;
    }
    remote_copy("rsync", &operands, f);
    if delete && let Some(dest) = operands.last() {
        f.delete(dest);
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
