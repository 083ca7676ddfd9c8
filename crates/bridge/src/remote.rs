//! The HTTP client for a Streamable HTTP downstream server: `http://`, or
//! `https://` verified by rustls against the system's roots plus an optional
//! PEM file of CA certificates. A certificate that does not verify fails the
//! connection with the reason; nothing is ever retried over plain HTTP, and
//! an `https://` server cannot redirect the client to `http://`.

use std::path::PathBuf;

use crate::BridgeError;

/// A Streamable HTTP server behind the bridge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remote {
    /// `http://…` or `https://…`.
    pub url: String,
    /// CA certificates (PEM) trusted for this server beside the system's roots.
    pub ca_file: Option<PathBuf>,
}

impl Remote {
    /// A server at `url` with only the system's roots.
    pub fn new(url: impl Into<String>) -> Remote {
        Remote {
            url: url.into(),
            ca_file: None,
        }
    }

    /// The Streamable HTTP server of a `[[mcp.servers]]` entry (`None` for
    /// a command), its `ca_file`'s `~/` made `home`'s.
    pub fn configured(server: &portcullis_policy::McpServer, home: &str) -> Option<Remote> {
        Some(Remote {
            url: server.url.clone()?,
            ca_file: server.ca_file_under(home).map(Into::into),
        })
    }

    fn is_https(&self) -> bool {
        self.url.starts_with("https://")
    }

    /// The client that talks to this server.
    pub fn client(&self) -> Result<reqwest::Client, BridgeError> {
        let refuse = |message: String| BridgeError::Remote {
            url: self.url.clone(),
            message,
        };
        if !(self.url.starts_with("http://") || self.is_https()) {
            return Err(refuse("the URL is neither http:// nor https://".into()));
        }
        if self.ca_file.is_some() && !self.is_https() {
            return Err(refuse("a CA file is for an https:// server only".into()));
        }
        install_crypto_provider();
        let mut builder = reqwest::Client::builder().https_only(self.is_https());
        if let Some(path) = &self.ca_file {
            let pem = std::fs::read(path)
                .map_err(|e| refuse(format!("reading the CA file {}: {e}", path.display())))?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| refuse(format!("the CA file {}: {}", path.display(), chain(&e))))?;
            if certs.is_empty() {
                return Err(refuse(format!(
                    "the CA file {} holds no PEM certificate",
                    path.display()
                )));
            }
            builder = builder.tls_certs_merge(certs);
        }
        builder
            .build()
            .map_err(|e| refuse(format!("building the HTTPS client: {}", chain(&e))))
    }
}

impl Remote {
    /// Why the handshake failed, in words a person can act on. The MCP
    /// client's error keeps only the top of the HTTP error ("error sending
    /// request"), so one plain request finds the cause it dropped: a
    /// certificate that does not verify, a refused connection.
    pub(crate) async fn why_no_handshake(
        &self,
        client: &reqwest::Client,
        error: String,
    ) -> BridgeError {
        let probe = client
            .get(&self.url)
            .timeout(std::time::Duration::from_secs(5))
            .send()
            .await;
        let cause = match probe {
            Err(e) => chain(&e),
            Ok(_) => error,
        };
        BridgeError::Remote {
            url: self.url.clone(),
            message: format!("no MCP handshake: {cause}"),
        }
    }
}

/// rustls' process-wide provider: ring. Installing twice is harmless (the
/// first one stays), and nothing else in the process installs another.
fn install_crypto_provider() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// An error with every cause it carries, so a certificate problem deep in the
/// TLS stack reaches the person ("invalid peer certificate: UnknownIssuer").
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_and_https_urls_are_served() {
        let e = Remote::new("ftp://127.0.0.1/mcp").client().unwrap_err();
        assert!(
            e.to_string().contains("neither http:// nor https://"),
            "{e}"
        );
        Remote::new("http://127.0.0.1/mcp").client().unwrap();
        Remote::new("https://127.0.0.1/mcp").client().unwrap();
    }

    #[test]
    fn a_ca_file_must_hold_certificates_and_serve_https() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let https = Remote {
            url: "https://127.0.0.1/mcp".into(),
            ca_file: Some(empty.clone()),
        };
        let e = https.client().unwrap_err().to_string();
        assert!(e.contains("holds no PEM certificate"), "{e}");
        let missing = Remote {
            ca_file: Some(dir.path().join("missing.pem")),
            ..https.clone()
        };
        let e = missing.client().unwrap_err().to_string();
        assert!(e.contains("reading the CA file"), "{e}");
        let plain = Remote {
            url: "http://127.0.0.1/mcp".into(),
            ..https
        };
        let e = plain.client().unwrap_err().to_string();
        assert!(e.contains("https:// server only"), "{e}");
    }
}
