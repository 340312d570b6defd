//! Who a client certificate names: the subject's common name, or one kind of its subject
//! alternative names, as the server's authorization is told to read it. The certificate has
//! already been verified against the client CA by the handshake; this only reads it.

use x509_parser::extensions::GeneralName;

/// Which part of a client certificate names its holder.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CertIdentity {
    /// The subject's first common name (CN).
    #[default]
    CommonName,
    /// The first DNS name among the subject alternative names.
    SanDns,
    /// The first e-mail address (rfc822Name) among the subject alternative names.
    SanEmail,
    /// The first URI among the subject alternative names.
    SanUri,
}

impl CertIdentity {
    /// From a setting's value: `CN`, `SAN_DNS`, `SAN_EMAIL` or `SAN_URI` (any case).
    pub fn parse(s: &str) -> Option<CertIdentity> {
        Some(match s.trim().to_ascii_uppercase().as_str() {
            "CN" => CertIdentity::CommonName,
            "SAN_DNS" => CertIdentity::SanDns,
            "SAN_EMAIL" => CertIdentity::SanEmail,
            "SAN_URI" => CertIdentity::SanUri,
            _ => return None,
        })
    }

    /// The name of the certificate (DER) holder, or `None` when the certificate does not
    /// parse or has no such field. An empty name is no name.
    pub fn of(self, der: &[u8]) -> Option<String> {
        let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
        let name = match self {
            CertIdentity::CommonName => cert
                .subject()
                .iter_common_name()
                .next()
                .and_then(|cn| cn.as_str().ok())
                .map(str::to_string),
            san => {
                let names = cert.subject_alternative_name().ok()??;
                names
                    .value
                    .general_names
                    .iter()
                    .find_map(|g| match (san, g) {
                        (CertIdentity::SanDns, GeneralName::DNSName(n))
                        | (CertIdentity::SanEmail, GeneralName::RFC822Name(n))
                        | (CertIdentity::SanUri, GeneralName::URI(n)) => Some(n.to_string()),
                        _ => None,
                    })
            }
        };
        name.filter(|n| !n.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cert(cn: Option<&str>, sans: Vec<rcgen::SanType>) -> Vec<u8> {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        p.distinguished_name = rcgen::DistinguishedName::new();
        if let Some(cn) = cn {
            p.distinguished_name.push(rcgen::DnType::CommonName, cn);
        }
        p.subject_alt_names = sans;
        p.self_signed(&key).unwrap().der().to_vec()
    }

    #[test]
    fn each_field_names_the_holder() {
        let der = cert(
            Some("alice"),
            vec![
                rcgen::SanType::DnsName("svc.example.com".try_into().unwrap()),
                rcgen::SanType::Rfc822Name("alice@example.com".try_into().unwrap()),
                rcgen::SanType::URI("spiffe://example.com/alice".try_into().unwrap()),
            ],
        );
        assert_eq!(CertIdentity::CommonName.of(&der).as_deref(), Some("alice"));
        assert_eq!(
            CertIdentity::SanDns.of(&der).as_deref(),
            Some("svc.example.com")
        );
        assert_eq!(
            CertIdentity::SanEmail.of(&der).as_deref(),
            Some("alice@example.com")
        );
        assert_eq!(
            CertIdentity::SanUri.of(&der).as_deref(),
            Some("spiffe://example.com/alice")
        );
        let bare = cert(None, vec![]);
        for f in [
            CertIdentity::CommonName,
            CertIdentity::SanDns,
            CertIdentity::SanEmail,
            CertIdentity::SanUri,
        ] {
            assert_eq!(f.of(&bare), None, "{f:?}");
        }
        assert_eq!(CertIdentity::CommonName.of(b"not a certificate"), None);
        assert_eq!(
            CertIdentity::parse("san_email"),
            Some(CertIdentity::SanEmail)
        );
        assert_eq!(CertIdentity::parse("CN"), Some(CertIdentity::CommonName));
        assert_eq!(CertIdentity::parse("DN"), None);
    }
}
