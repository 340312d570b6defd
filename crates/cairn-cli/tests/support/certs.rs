// Shared by several test files, each using a part of it.
#![allow(dead_code)]
//! Certificates for the TLS tests, made fresh by each test (no key is ever committed): a CA,
//! a server certificate it signed for 127.0.0.1 and localhost, a client certificate it
//! signed, and a client certificate from an unrelated CA.

use std::path::{Path, PathBuf};

/// The files of one test's certificates, all PEM.
pub struct Certs {
    /// The CA certificate (servers' client CA, clients' trust).
    pub ca: PathBuf,
    /// The server's certificate chain.
    pub server_cert: PathBuf,
    /// The server's private key (PKCS#8).
    pub server_key: PathBuf,
    /// A client's key and certificate in one file (HBase's PEM keystore).
    pub client: PathBuf,
    /// The same client's certificate alone, and its key alone (for curl).
    pub client_cert: PathBuf,
    /// See `client_cert`.
    pub client_key: PathBuf,
    /// A client certificate (key and certificate) from another CA.
    pub stranger: PathBuf,
    /// The CA's key, to issue a renewed server certificate.
    issuer: Ca,
}

struct Ca {
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
    pem: String,
}

fn ca(name: &str) -> Ca {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    p.distinguished_name.push(rcgen::DnType::CommonName, name);
    let cert = p.self_signed(&key).unwrap();
    Ca {
        issuer: rcgen::Issuer::new(p, key),
        pem: cert.pem(),
    }
}

/// A certificate `ca` signed for `names`: (certificate PEM, key PEM).
fn leaf(ca: &Ca, cn: &str, names: &[&str]) -> (String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut p =
        rcgen::CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap();
    p.distinguished_name.push(rcgen::DnType::CommonName, cn);
    let cert = p.signed_by(&key, &ca.issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

impl Certs {
    /// Makes every file in `dir`.
    pub fn make(dir: &Path) -> Certs {
        let ca1 = ca("cairn test CA");
        let other = ca("some other CA");
        let (server, server_key) = leaf(&ca1, "cairn server", &["127.0.0.1", "localhost"]);
        let (client, client_key) = leaf(&ca1, "cairn client", &["client"]);
        let (stranger, stranger_key) = leaf(&other, "stranger", &["client"]);
        let w = |name: &str, text: String| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        Certs {
            ca: w("ca.pem", ca1.pem.clone()),
            server_cert: w("server.pem", server),
            server_key: w("server.key", server_key),
            client: w("client.pem", format!("{client_key}{client}")),
            client_cert: w("client.crt", client),
            client_key: w("client.key", client_key),
            stranger: w("stranger.pem", format!("{stranger_key}{stranger}")),
            issuer: ca1,
        }
    }

    /// A client certificate from the test CA for `cn` (key and certificate in one PEM, as
    /// HBase's keystore and thriftpy2 take it), written to `dir`; returns its path.
    pub fn client_named(&self, dir: &Path, cn: &str) -> PathBuf {
        let (cert, key) = leaf(&self.issuer, cn, &["client"]);
        let p = dir.join(format!("{cn}.pem"));
        std::fs::write(&p, format!("{key}{cert}")).unwrap();
        p
    }

    /// Writes a new server certificate and key from the same CA over the server files;
    /// returns the new certificate's DER.
    pub fn renew_server(&self) -> Vec<u8> {
        let (cert, key) = leaf(
            &self.issuer,
            "cairn server, renewed",
            &["127.0.0.1", "localhost"],
        );
        // Key first: the server keeps its old pair until both files match again.
        std::fs::write(&self.server_key, key).unwrap();
        std::fs::write(&self.server_cert, &cert).unwrap();
        pem_der(&cert)
    }
}

/// The DER of the first CERTIFICATE in `pem`.
pub fn pem_der(pem: &str) -> Vec<u8> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::from_pem_slice(pem.as_bytes())
        .unwrap()
        .to_vec()
}
