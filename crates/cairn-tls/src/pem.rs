//! Reading PEM files: a certificate chain (leaf first), a private key, a set of CA
//! certificates. A key and its chain may share one file, as in HBase's PEM keystore.

use std::path::Path;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::RootCertStore;

use crate::TlsError;

fn pem_error(path: &Path, e: rustls::pki_types::pem::Error) -> TlsError {
    match e {
        rustls::pki_types::pem::Error::Io(source) => TlsError::Read {
            path: path.display().to_string(),
            source,
        },
        other => TlsError::Pem {
            path: path.display().to_string(),
            reason: format!("not valid PEM: {other}"),
        },
    }
}

/// Every `CERTIFICATE` section of `path`, in order (the leaf first for a chain); other
/// sections (a private key in a keystore file) are skipped. None at all is an error.
pub fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| pem_error(path, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error(path, e))?;
    if certs.is_empty() {
        return Err(TlsError::Pem {
            path: path.display().to_string(),
            reason: "no CERTIFICATE section".into(),
        });
    }
    Ok(certs)
}

/// The first private key of `path` (PKCS#8, PKCS#1 RSA or SEC1 EC); certificates in the same
/// file are skipped.
pub fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => TlsError::Pem {
            path: path.display().to_string(),
            reason: "no PRIVATE KEY section (PKCS#8, RSA or EC)".into(),
        },
        other => pem_error(path, other),
    })
}

/// The CA certificates of `path` as trust anchors for client certificates.
pub fn roots(path: &Path) -> Result<RootCertStore, TlsError> {
    let mut store = RootCertStore::empty();
    for (i, c) in certificates(path)?.into_iter().enumerate() {
        store.add(c).map_err(|e| TlsError::Pem {
            path: path.display().to_string(),
            reason: format!("certificate {} is not a usable CA certificate: {e}", i + 1),
        })?;
    }
    Ok(store)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn keystore_file_holds_key_and_chain() {
        let dir = tempfile::tempdir().unwrap();
        let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let both = format!("{}{}", ck.signing_key.serialize_pem(), ck.cert.pem());
        let p = write(dir.path(), "keystore.pem", &both);
        let certs = certificates(&p).unwrap();
        assert_eq!(certs.len(), 1);
        assert_eq!(certs[0].as_ref(), ck.cert.der().as_ref());
        let key = private_key(&p).unwrap();
        assert_eq!(key.secret_der(), ck.signing_key.serialize_der().as_slice());
        assert_eq!(roots(&p).unwrap().len(), 1);
    }

    #[test]
    fn errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let key_only = write(dir.path(), "key.pem", &ck.signing_key.serialize_pem());
        let e = certificates(&key_only).unwrap_err().to_string();
        assert!(e.contains("key.pem") && e.contains("no CERTIFICATE"), "{e}");
        let cert_only = write(dir.path(), "cert.pem", &ck.cert.pem());
        let e = private_key(&cert_only).unwrap_err().to_string();
        assert!(
            e.contains("cert.pem") && e.contains("no PRIVATE KEY"),
            "{e}"
        );
        let broken = write(
            dir.path(),
            "broken.pem",
            "-----BEGIN CERTIFICATE-----\nnot base64 at all!!\n-----END CERTIFICATE-----\n",
        );
        let e = certificates(&broken).unwrap_err().to_string();
        assert!(
            e.contains("broken.pem") && e.contains("not valid PEM"),
            "{e}"
        );
        let missing = dir.path().join("missing.pem");
        let e = roots(&missing).unwrap_err().to_string();
        assert!(e.contains("missing.pem") && e.starts_with("reading"), "{e}");
        let garbage = write(dir.path(), "garbage.pem", "\u{0}\u{1}binary junk\n");
        let e = private_key(&garbage).unwrap_err().to_string();
        assert!(e.contains("garbage.pem"), "{e}");
    }
}
