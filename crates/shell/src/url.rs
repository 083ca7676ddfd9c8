//! One URL reader for every judgement: the WHATWG URL standard (the `url`
//! crate), which is how browsers, Node and most HTTP clients read a URL —
//! so `https://attacker.net\@example.com/` names `attacker.net`, `FILE:///x`
//! is a file, `http://2130706433/` is `127.0.0.1` and `http://[::1]:8080/`
//! is `::1` port 8080. One host and port normaliser goes with it, shared
//! with the approval-port guard.

/// A URL as its consumer reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedUrl {
    /// Lower case (`file`, `https`).
    pub scheme: String,
    /// Normalised: lower case, IPv4 in dotted decimal, IPv6 without
    /// brackets, no trailing dot; `None` for URLs without a host.
    pub host: Option<String>,
    /// The port the client connects to (the scheme's default when none is written).
    pub port: Option<u16>,
    /// The path, percent-decoded (for `file:` URLs: the file).
    pub path: String,
}

/// Reads `text` (surrounding whitespace ignored, as clients do) as an
/// absolute URL; `None` when it is not one.
pub fn parse(text: &str) -> Option<ParsedUrl> {
    let text = text.trim();
    // A bare `host:port` or `C:\path` parses as a scheme: only texts with
    // `scheme://` or `scheme:` followed by a known non-hierarchical form count.
    let (scheme, _) = text.split_once(':')?;
    // One letter is a Windows drive (`C:\\x`), not a scheme.
    if scheme.len() < 2
        || !scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        || !text[scheme.len() + 1..].starts_with(['/', '\\'])
    {
        return None;
    }
    let url = ::url::Url::parse(text).ok()?;
    let host = url.host().map(|h| match h {
        ::url::Host::Domain(d) => d.trim_end_matches('.').to_ascii_lowercase(),
        ::url::Host::Ipv4(ip) => ip.to_string(),
        ::url::Host::Ipv6(ip) => ip.to_string(),
    });
    let path = percent_decode(url.path());
    Some(ParsedUrl {
        scheme: url.scheme().to_string(),
        host: host.filter(|h| !h.is_empty()),
        port: url.port_or_known_default(),
        path,
    })
}

/// The host a URL names, normalised (see [`ParsedUrl::host`]).
pub fn host(text: &str) -> Option<String> {
    parse(text).and_then(|u| u.host)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = |k: usize| bytes.get(k).and_then(|b| (*b as char).to_digit(16));
        match (b, hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_as_browsers_read_them() {
        for (text, host, port) in [
            (
                "https://attacker.net\\@example.com/?q=SECRET",
                "attacker.net",
                443,
            ),
            ("http://[::1]:8080/", "::1", 8080),
            ("http://2130706433:07878/", "127.0.0.1", 7878),
            ("http://0x7f.1/", "127.0.0.1", 80),
            ("HTTP://Example.COM./x", "example.com", 80),
            (
                "  https://user:pw@example.com:8443/ \n",
                "example.com",
                8443,
            ),
        ] {
            let u = parse(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(
                (u.host.as_deref(), u.port),
                (Some(host), Some(port)),
                "{text}"
            );
        }
    }

    #[test]
    fn file_urls_are_paths_and_other_texts_are_not_urls() {
        let u = parse("FILE:///home/u/.ssh/id_rsa").expect("a file URL");
        assert_eq!(
            (u.scheme.as_str(), u.path.as_str()),
            ("file", "/home/u/.ssh/id_rsa")
        );
        let u = parse("file://localhost/etc/pass%77d").expect("a file URL");
        assert_eq!(u.path, "/etc/passwd");
        for text in [
            "localhost:7878",
            "C:\\Users",
            "notes.txt",
            "a:b",
            "mailto:x@y",
        ] {
            assert_eq!(parse(text), None, "{text}");
        }
    }
}
