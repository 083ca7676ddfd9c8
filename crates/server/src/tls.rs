//! HTTPS for `portcullis serve` beyond loopback: rustls (with ring) serving
//! a PEM certificate chain and key. A team server is reached from other
//! machines, where plain HTTP would carry tokens and decisions in the clear;
//! `serve` refuses plain HTTP off loopback unless told otherwise.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Why the certificate or key cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("reading the certificate chain {}: {why}", path.display())]
    Certificate { path: PathBuf, why: String },
    #[error("reading the private key {}: {why}", path.display())]
    Key { path: PathBuf, why: String },
    #[error("the certificate and key do not make a TLS configuration: {0}")]
    Config(String),
}

/// The server's TLS configuration from a PEM certificate chain (leaf first)
/// and its PEM private key.
pub fn load(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| TlsError::Certificate {
            path: cert.to_path_buf(),
            why: e.to_string(),
        })?;
    if certs.is_empty() {
        return Err(TlsError::Certificate {
            path: cert.to_path_buf(),
            why: "it holds no PEM certificate".into(),
        });
    }
    let private = PrivateKeyDer::from_pem_file(key).map_err(|e| TlsError::Key {
        path: key.to_path_buf(),
        why: e.to_string(),
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, private)
        .map_err(|e| TlsError::Config(e.to_string()))?;
    // The connection loop speaks HTTP/1.1 only.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_or_empty_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "nothing here\n").unwrap();
        let e = load(&empty, &empty).unwrap_err().to_string();
        assert!(
            e.contains("certificate chain") && e.contains("no PEM certificate"),
            "{e}"
        );
        let e = load(&dir.path().join("missing.pem"), &empty)
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.pem"), "{e}");
    }
}
