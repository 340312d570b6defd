//! What one port's TLS is made of, and the rustls `ServerConfig` built from it.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::server::WebPkiClientVerifier;
use rustls::ServerConfig;

use crate::{pem, TlsError};

/// Whether clients must show a certificate, as HBase's
/// `hbase.server.netty.tls.client.auth.mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientAuth {
    /// No certificate is asked for.
    None,
    /// A certificate is asked for; a client without one gets in, a client with one that does
    /// not chain to the CA does not.
    Want,
    /// Only clients whose certificate chains to the CA get in.
    Need,
}

impl ClientAuth {
    /// HBase's spelling, any case: `NONE`, `WANT`, `NEED`.
    pub fn parse(s: &str) -> Option<ClientAuth> {
        match s.trim().to_ascii_uppercase().as_str() {
            "NONE" => Some(ClientAuth::None),
            "WANT" => Some(ClientAuth::Want),
            "NEED" => Some(ClientAuth::Need),
            _ => None,
        }
    }
}

/// One port's TLS settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsSettings {
    /// The certificate chain, leaf first (PEM); may also hold the key.
    pub cert: PathBuf,
    /// The private key (PEM); the same file as `cert` for an HBase PEM keystore.
    pub key: PathBuf,
    /// CA certificates client certificates must chain to (PEM); needed for `Want`/`Need`.
    pub client_ca: Option<PathBuf>,
    /// Whether clients must show a certificate.
    pub client_auth: ClientAuth,
    /// Pick up changed files for new connections (HBase's `hbase.rpc.tls.certReload`).
    pub reload: bool,
    /// Also serve plaintext clients on the port, told apart by their first byte (HBase's
    /// `hbase.server.netty.tls.supportplaintext`).
    pub plaintext: bool,
}

impl TlsSettings {
    /// The files the configuration is read from (watched for reload).
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v = vec![self.cert.clone()];
        if self.key != self.cert {
            v.push(self.key.clone());
        }
        v.extend(self.client_ca.iter().cloned());
        v
    }

    /// Reads the files and builds the rustls configuration.
    pub fn server_config(&self) -> Result<Arc<ServerConfig>, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let chain = pem::certificates(&self.cert)?;
        let key = pem::private_key(&self.key)?;
        let verifier = match (self.client_auth, &self.client_ca) {
            (ClientAuth::None, _) => WebPkiClientVerifier::no_client_auth(),
            (mode, Some(ca)) => {
                let roots = Arc::new(pem::roots(ca)?);
                let b = WebPkiClientVerifier::builder_with_provider(roots, provider.clone());
                let b = if mode == ClientAuth::Want {
                    b.allow_unauthenticated()
                } else {
                    b
                };
                b.build().map_err(|e| TlsError::Pem {
                    path: ca.display().to_string(),
                    reason: format!("cannot verify client certificates with it: {e}"),
                })?
            }
            (mode, None) => {
                return Err(TlsError::Pem {
                    path: self.cert.display().to_string(),
                    reason: format!(
                        "client auth mode {mode:?} needs a client CA file, and none was given"
                    ),
                })
            }
        };
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|source| TlsError::Rustls {
                what: "protocol versions".into(),
                source,
            })?
            .with_client_cert_verifier(verifier)
            .with_single_cert(chain, key)
            .map_err(|source| TlsError::Rustls {
                what: format!(
                    "certificate {} with key {}",
                    self.cert.display(),
                    self.key.display()
                ),
                source,
            })?;
        Ok(Arc::new(config))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::Path;

    /// A CA, and a server certificate for 127.0.0.1/localhost and a client certificate it
    /// signed; files in `dir`: `ca.pem`, `server.pem` (chain), `server.key`, `client.pem`
    /// (key and certificate in one file).
    pub(crate) fn make_certs(dir: &Path, tag: &str) -> TlsSettings {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, format!("{tag} CA"));
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let key = rcgen::KeyPair::generate().unwrap();
        let mut p =
            rcgen::CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
        p.distinguished_name
            .push(rcgen::DnType::CommonName, format!("{tag} server"));
        let cert = p.signed_by(&key, &issuer).unwrap();
        let client_key = rcgen::KeyPair::generate().unwrap();
        let mut cp = rcgen::CertificateParams::new(vec!["client".into()]).unwrap();
        cp.distinguished_name
            .push(rcgen::DnType::CommonName, format!("{tag} client"));
        let client = cp.signed_by(&client_key, &issuer).unwrap();
        std::fs::write(
            dir.join("client.pem"),
            format!("{}{}", client_key.serialize_pem(), client.pem()),
        )
        .unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        std::fs::write(dir.join("server.pem"), cert.pem()).unwrap();
        std::fs::write(dir.join("server.key"), key.serialize_pem()).unwrap();
        TlsSettings {
            cert: dir.join("server.pem"),
            key: dir.join("server.key"),
            client_ca: Some(dir.join("ca.pem")),
            client_auth: ClientAuth::Need,
            reload: false,
            plaintext: false,
        }
    }

    #[test]
    fn modes_parse_in_any_case() {
        assert_eq!(ClientAuth::parse("need"), Some(ClientAuth::Need));
        assert_eq!(ClientAuth::parse(" Want "), Some(ClientAuth::Want));
        assert_eq!(ClientAuth::parse("NONE"), Some(ClientAuth::None));
        assert_eq!(ClientAuth::parse("required"), None);
    }

    #[test]
    fn builds_in_every_mode_and_refuses_a_mismatched_key() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = make_certs(dir.path(), "t");
        for mode in [ClientAuth::None, ClientAuth::Want, ClientAuth::Need] {
            s.client_auth = mode;
            s.server_config().unwrap();
        }
        let no_ca = TlsSettings {
            client_ca: None,
            ..s.clone()
        };
        let e = no_ca.server_config().unwrap_err().to_string();
        assert!(e.contains("needs a client CA"), "{e}");
        let other = tempfile::tempdir().unwrap();
        make_certs(other.path(), "other");
        let mismatched = TlsSettings {
            key: other.path().join("server.key"),
            ..s.clone()
        };
        let e = mismatched.server_config().unwrap_err().to_string();
        assert!(e.contains("server.key"), "{e}");
        // A CA file with a key in it only: named.
        let bad_ca = TlsSettings {
            client_ca: Some(dir.path().join("server.key")),
            ..s
        };
        let e = bad_ca.server_config().unwrap_err().to_string();
        assert!(e.contains("server.key") && e.contains("CERTIFICATE"), "{e}");
    }
}
