//! TLS for `cairn serve`'s ports (Thrift, HTTP, HBase native RPC).
//!
//! Owns: loading the PEM certificate chain, private key and client CA ([`pem`]); building a
//! rustls `ServerConfig` with optional client-certificate verification in HBase's three modes
//! NONE / WANT / NEED ([`settings`]); picking up changed certificate files for new connections
//! without a restart, and telling a TLS ClientHello from plaintext on the first byte
//! ([`acceptor`]); a blocking TLS stream that one reader thread and several writer threads
//! can share ([`stream`]); who a client certificate names ([`identity`]).
//!
//! Does not own: which port uses which settings, or the property names they come from (the
//! server's configuration does that), nor anything about the protocols spoken inside the
//! stream. Certificate revocation (CRL, OCSP) is not checked, and a client's certificate is
//! not matched against its address (HBase's `hbase.server.netty.tls.verify.client.hostname`).
//!
//! Only the `ring` crypto provider is used, passed explicitly, so the process never depends on
//! a process-wide default provider being installed.

pub mod acceptor;
pub mod identity;
pub mod pem;
pub mod settings;
pub mod stream;

pub use acceptor::{AcceptError, TlsAcceptor};
pub use identity::CertIdentity;
/// A certificate in DER, as a client showed it.
pub use rustls::pki_types::CertificateDer;
pub use settings::{ClientAuth, TlsSettings};
pub use stream::{Stream, TlsStream};

/// Why TLS could not be set up; each names the file at fault.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file's PEM does not hold what it should.
    #[error("{path}: {reason}")]
    Pem {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// rustls refused the certificate, key or CA (for example a key that does not match
    /// the certificate).
    #[error("{what}: {source}")]
    Rustls {
        /// Which files were being combined.
        what: String,
        /// rustls's reason.
        source: rustls::Error,
    },
}
