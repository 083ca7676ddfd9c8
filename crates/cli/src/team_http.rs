//! The one client that talks to a team server: a blocking HTTP/1.1 request
//! over `http://` or `https://` (rustls with ring; the CA file the device
//! was enrolled with, else the system's roots), bounded by a deadline.
//!
//! It lives in the hook's own binary, without an async runtime or a pooled
//! client, because a governed hook makes exactly one request per process and
//! every millisecond of start-up is on the agent's critical path. It sends
//! `Connection: close` and reads one response: a `Content-Length` body, a
//! chunked one, or one closed by the server — at most [`MAX_BODY`] bytes.
//! `https://` never falls back to plain HTTP, and nothing is retried.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

/// The most a response may carry (headers and body each).
const MAX_BODY: usize = 4 << 20;
const MAX_HEADERS: usize = 64 << 10;

/// A team server's address: `http[s]://HOST[:PORT][/PREFIX]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    pub https: bool,
    /// As written in the URL (`[::1]` keeps its brackets).
    pub host: String,
    pub port: u16,
    /// A path the routes sit under (`""`, or `/team` without a trailing `/`).
    pub prefix: String,
    /// The CA certificates (PEM) trusted for this server in place of the
    /// system's roots (https only): a team running its own CA pins it, so
    /// no public CA can speak for the server — and the hook skips reading
    /// the system's ~150 roots (about 0.9 ms a call, measured).
    pub ca_file: Option<PathBuf>,
}

impl Server {
    /// Reads `url`; a user name, password, query or fragment is refused
    /// (the credential travels in a header, never in the URL).
    pub fn parse(url: &str, ca_file: Option<&Path>) -> Result<Server> {
        let url = url.trim();
        let (https, rest) = if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else {
            bail!("the team server {url} is neither http:// nor https://");
        };
        if ca_file.is_some() && !https {
            bail!("a CA file is for an https:// team server only, not {url}");
        }
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        if authority.contains('@') || path.contains(['?', '#']) || authority.contains(['?', '#']) {
            bail!("the team server's URL {url} may hold no user, query or fragment");
        }
        let (host, port) = split_port(authority)
            .ok_or_else(|| anyhow!("the team server's URL {url} has no valid host and port"))?;
        Ok(Server {
            https,
            host: host.to_owned(),
            port: port.unwrap_or(if https { 443 } else { 80 }),
            prefix: path.trim_end_matches('/').to_owned(),
            ca_file: ca_file.map(Path::to_path_buf),
        })
    }

    /// `POST`s `body` (JSON) to `path` with `headers`; the status and body.
    pub fn post_json(
        &self,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
        deadline: Instant,
    ) -> Result<(u16, Vec<u8>)> {
        let mut request = format!(
            "POST {}{path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\nUser-Agent: portcullis\r\n",
            self.prefix,
            self.host_header(),
            body.len()
        );
        for (name, value) in headers {
            if [name, value].iter().any(|s| s.contains(['\r', '\n'])) {
                bail!("a request header holds a line break");
            }
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        let mut message = request.into_bytes();
        message.extend_from_slice(body);
        let tcp = self.connect(deadline)?;
        if self.https {
            let config = self.tls_config()?;
            let name = rustls::pki_types::ServerName::try_from(self.bare_host().to_owned())
                .map_err(|e| anyhow!("{} is not a server name: {e}", self.host))?;
            let conn = rustls::ClientConnection::new(config, name)
                .map_err(|e| anyhow!("starting TLS: {e}"))?;
            let mut stream = rustls::StreamOwned::new(conn, tcp);
            exchange(&mut stream, &message)
        } else {
            let mut stream = tcp;
            exchange(&mut stream, &message)
        }
    }

    fn bare_host(&self) -> &str {
        self.host.trim_start_matches('[').trim_end_matches(']')
    }

    fn host_header(&self) -> String {
        let default = if self.https { 443 } else { 80 };
        if self.port == default {
            self.host.clone()
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// A connection to the first address that takes one before `deadline`.
    fn connect(&self, deadline: Instant) -> Result<TcpStream> {
        let addrs = (self.bare_host(), self.port)
            .to_socket_addrs()
            .with_context(|| format!("looking up {}", self.host))?;
        let mut last = None;
        for addr in addrs {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match TcpStream::connect_timeout(&addr, left) {
                Ok(tcp) => {
                    let left = deadline
                        .saturating_duration_since(Instant::now())
                        .max(Duration::from_millis(1));
                    tcp.set_read_timeout(Some(left))?;
                    tcp.set_write_timeout(Some(left))?;
                    let _ = tcp.set_nodelay(true);
                    return Ok(tcp);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(match last {
            Some(e) => anyhow!("connecting to {}:{}: {e}", self.host, self.port),
            None => anyhow!(
                "connecting to {}:{}: no address in time",
                self.host,
                self.port
            ),
        })
    }

    fn tls_config(&self) -> Result<Arc<rustls::ClientConfig>> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        if let Some(path) = &self.ca_file {
            let pem = std::fs::read(path)
                .with_context(|| format!("reading the CA file {}", path.display()))?;
            let certs = pem_certificates(&pem)
                .with_context(|| format!("the CA file {}", path.display()))?;
            if certs.is_empty() {
                bail!("the CA file {} holds no PEM certificate", path.display());
            }
            for cert in certs {
                roots
                    .add(cert)
                    .with_context(|| format!("the CA file {}", path.display()))?;
            }
        } else {
            roots.add_parsable_certificates(system_roots());
        }
        if roots.is_empty() {
            bail!("no CA certificates to trust: none on this system, and no CA file enrolled");
        }
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| anyhow!("TLS versions: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Arc::new(config))
    }
}

/// Every certificate in a PEM text.
fn pem_certificates(pem: &[u8]) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::pem_slice_iter(pem)
        .map(|c| c.map_err(|e| anyhow!("{e}")))
        .collect()
}

/// The system's CA certificates, found as OpenSSL finds them: its bundle
/// file (`SSL_CERT_FILE`, else the distribution's), and a directory only
/// when `SSL_CERT_DIR` names one or there is no bundle. A distribution's
/// certificate directory repeats its bundle one file per certificate, and
/// reading all of it cost a governed hook about 2.4 ms a call (measured:
/// 5.9 ms with the directory, 3.5 ms with the bundle alone).
fn system_roots() -> Vec<rustls::pki_types::CertificateDer<'static>> {
    let dir_named = std::env::var_os("SSL_CERT_DIR").is_some_and(|d| !d.is_empty());
    match openssl_probe::probe().cert_file {
        Some(file) if !dir_named => {
            use rustls::pki_types::pem::PemObject;
            let pem = std::fs::read(file).unwrap_or_default();
            // As OpenSSL does, a certificate that does not parse is skipped.
            rustls::pki_types::CertificateDer::pem_slice_iter(&pem)
                .filter_map(Result::ok)
                .collect()
        }
        _ => rustls_native_certs::load_native_certs().certs,
    }
}

/// `host[:port]`, an IPv6 literal in brackets.
fn split_port(authority: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']')?;
        let (host, rest) = authority.split_at(end + 1);
        match rest {
            "" => (host, None),
            _ => (host, Some(rest.strip_prefix(':')?)),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() || host == "[]" || host.contains(['/', ' ']) {
        return None;
    }
    let port = match port {
        Some(p) => Some(p.parse::<u16>().ok().filter(|p| *p != 0)?),
        None => None,
    };
    Some((host, port))
}

/// Sends `message` and reads the one response.
fn exchange(stream: &mut (impl Read + Write), message: &[u8]) -> Result<(u16, Vec<u8>)> {
    stream.write_all(message).context("sending the request")?;
    stream.flush().context("sending the request")?;
    read_response(BufReader::new(stream))
}

/// An HTTP/1.1 response: its status and body.
fn read_response(mut reader: impl BufRead) -> Result<(u16, Vec<u8>)> {
    let mut head = Vec::new();
    loop {
        let before = head.len();
        let n = reader
            .by_ref()
            .take((MAX_HEADERS - before) as u64)
            .read_until(b'\n', &mut head)
            .context("reading the answer")?;
        if n == 0 {
            bail!("the connection closed before an answer");
        }
        if head.ends_with(b"\r\n\r\n") || head.ends_with(b"\n\n") {
            break;
        }
        if head.len() >= MAX_HEADERS {
            bail!("the answer's headers are over {MAX_HEADERS} bytes");
        }
    }
    let head = String::from_utf8_lossy(&head);
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .strip_prefix("HTTP/1.")
        .and_then(|s| s.get(2..5))
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| anyhow!("not an HTTP answer: {status_line:?}"))?;
    let mut length = None;
    let mut chunked = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .parse::<usize>()
                    .map_err(|_| anyhow!("a bad Content-Length: {value:?}"))?,
            );
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        }
    }
    let body = if chunked {
        read_chunked(&mut reader)?
    } else if let Some(length) = length {
        if length > MAX_BODY {
            bail!("the answer's body is over {MAX_BODY} bytes");
        }
        let mut body = vec![0; length];
        reader
            .read_exact(&mut body)
            .context("reading the answer's body")?;
        body
    } else {
        let mut body = Vec::new();
        reader
            .take(MAX_BODY as u64 + 1)
            .read_to_end(&mut body)
            .context("reading the answer's body")?;
        if body.len() > MAX_BODY {
            bail!("the answer's body is over {MAX_BODY} bytes");
        }
        body
    };
    Ok((status, body))
}

fn read_chunked(reader: &mut impl BufRead) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut line = String::new();
        reader
            .by_ref()
            .take(1024)
            .read_line(&mut line)
            .context("reading a chunk")?;
        let size = line.trim().split(';').next().unwrap_or_default();
        let size = usize::from_str_radix(size, 16)
            .map_err(|_| anyhow!("a bad chunk size: {:?}", line.trim()))?;
        if size == 0 {
            return Ok(body);
        }
        if body.len() + size > MAX_BODY {
            bail!("the answer's body is over {MAX_BODY} bytes");
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader
            .read_exact(body.get_mut(start..).unwrap_or_default())
            .context("reading a chunk")?;
        let mut crlf = [0; 2];
        reader.read_exact(&mut crlf).context("reading a chunk")?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_read_with_their_port_prefix_and_scheme() {
        let s = Server::parse("https://team.example", None).unwrap();
        assert_eq!(
            (s.https, s.host.as_str(), s.port),
            (true, "team.example", 443)
        );
        assert_eq!(s.prefix, "");
        let s = Server::parse("http://127.0.0.1:7878/team/", None).unwrap();
        assert_eq!((s.https, s.port, s.prefix.as_str()), (false, 7878, "/team"));
        let s = Server::parse("https://[::1]:8443", None).unwrap();
        assert_eq!(
            (s.host.as_str(), s.bare_host(), s.port),
            ("[::1]", "::1", 8443)
        );
        for bad in [
            "ftp://x",
            "team.example",
            "https://user:pw@team.example",
            "https://team.example/?q",
            "https://team.example:0",
            "https://team.example:99999",
            "https://:80",
            "https://[::1",
        ] {
            assert!(Server::parse(bad, None).is_err(), "{bad}");
        }
        let e = Server::parse("http://x", Some(Path::new("/ca.pem"))).unwrap_err();
        assert!(e.to_string().contains("https:// team server only"), "{e}");
    }

    #[test]
    fn responses_are_read_by_length_by_chunks_and_to_the_end() {
        let read = |text: &str| read_response(text.as_bytes()).unwrap();
        assert_eq!(
            read("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello, and more"),
            (200, b"hello".to_vec())
        );
        assert_eq!(
            read(
                "HTTP/1.1 401 Unauthorized\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n"
            ),
            (401, b"abcde".to_vec())
        );
        assert_eq!(
            read("HTTP/1.0 503 Service Unavailable\r\n\r\ndown"),
            (503, b"down".to_vec())
        );
        for bad in [
            "",
            "SSH-2.0-OpenSSH\r\n\r\n",
            "HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\nshort",
            "HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "HTTP/1.1 200 OK\r\ncontent-length: 99999999999\r\n\r\n",
        ] {
            assert!(read_response(bad.as_bytes()).is_err(), "{bad:?}");
        }
        let huge = format!("HTTP/1.1 200 OK\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEADERS));
        assert!(read_response(huge.as_bytes()).is_err());
    }

    #[test]
    fn a_header_cannot_smuggle_a_line() {
        // Refused before any connection is tried (nothing listens on port 9).
        let s = Server::parse("http://127.0.0.1:9", None).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let e = s
            .post_json("/v1/decide", &[("x-a", "b\r\nx-evil: 1")], b"{}", deadline)
            .unwrap_err();
        assert!(e.to_string().contains("line break"), "{e}");
    }
}
