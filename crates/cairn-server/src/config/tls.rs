//! Which of `cairn serve`'s ports speak TLS, with what files, from `--tls-cert`, `--tls-key`,
//! `--tls-client-ca` (every port) and HBase's property names (one port each):
//!
//! | port | on/off | certificate and key (PEM) | client CA (PEM) |
//! |---|---|---|---|
//! | every | `--tls-cert` given | `--tls-cert`, `--tls-key` | `--tls-client-ca` |
//! | native RPC | `hbase.server.netty.tls.enabled` | `hbase.rpc.tls.keystore.location` | `hbase.rpc.tls.truststore.location` |
//! | Thrift | `hbase.thrift.ssl.enabled` | `hbase.thrift.ssl.keystore.store` | |
//! | HTTP | `hbase.ssl.enabled` | `ssl.server.keystore.location` | `ssl.server.truststore.location` |
//!
//! A port's own setting wins (`hbase.thrift.ssl.enabled=false` opts Thrift out while
//! `--tls-cert` is given). A keystore is one PEM file holding the PKCS#8 key and the chain,
//! as HBase's PEM keystore. `hbase.server.netty.tls.client.auth.mode` (NONE, WANT, NEED)
//! applies to every port; unset, it is NEED when a client CA is given and NONE otherwise.
//! `hbase.server.netty.tls.supportplaintext` lets the RPC port serve plaintext beside TLS
//! (HBase's default, true), except that with NEED it defaults to false: plaintext would let
//! clients in without a certificate. `hbase.rpc.tls.certReload` makes every port pick up
//! changed files for new connections.

use std::path::PathBuf;

use cairn_tls::{ClientAuth, TlsSettings};

use super::{bad, ConfigError};

/// One of the server's ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Port {
    /// The native HBase RPC port.
    Rpc,
    /// The Thrift1 port.
    Thrift,
    /// The HTTP (metrics) port.
    Http,
}

impl Port {
    /// The property that turns TLS on or off for this port.
    pub fn enable_key(self) -> &'static str {
        match self {
            Port::Rpc => "hbase.server.netty.tls.enabled",
            Port::Thrift => "hbase.thrift.ssl.enabled",
            Port::Http => "hbase.ssl.enabled",
        }
    }

    fn keystore_key(self) -> &'static str {
        match self {
            Port::Rpc => "hbase.rpc.tls.keystore.location",
            Port::Thrift => "hbase.thrift.ssl.keystore.store",
            Port::Http => "ssl.server.keystore.location",
        }
    }

    /// The name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Port::Rpc => "hbase rpc",
            Port::Thrift => "thrift",
            Port::Http => "http",
        }
    }
}

/// One port's own TLS settings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortTls {
    /// On or off; unset follows whether `--tls-cert` was given.
    pub enabled: Option<bool>,
    /// Key and chain in one PEM file; unset uses `--tls-cert` / `--tls-key`.
    pub keystore: Option<PathBuf>,
    /// Client CA; unset uses `--tls-client-ca`.
    pub truststore: Option<PathBuf>,
    /// Serve plaintext beside TLS (the RPC port only).
    pub plaintext: Option<bool>,
}

/// TLS for every port.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsConfig {
    /// `--tls-cert` (`cairn.tls.cert`): the certificate chain, PEM, leaf first.
    pub cert: Option<PathBuf>,
    /// `--tls-key` (`cairn.tls.key`): the private key, PEM; unset = in the `cert` file.
    pub key: Option<PathBuf>,
    /// `--tls-client-ca` (`cairn.tls.client.ca`): CA certificates for client certificates.
    pub client_ca: Option<PathBuf>,
    /// `hbase.server.netty.tls.client.auth.mode`.
    pub client_auth: Option<ClientAuth>,
    /// `hbase.rpc.tls.certReload`.
    pub reload: bool,
    /// The native RPC port's own settings.
    pub rpc: PortTls,
    /// The Thrift port's own settings.
    pub thrift: PortTls,
    /// The HTTP port's own settings.
    pub http: PortTls,
}

fn boolean(key: &str, v: &str) -> Result<bool, ConfigError> {
    match v.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(bad(key, v, "expected true or false")),
    }
}

fn path(v: &str) -> Option<PathBuf> {
    (!v.is_empty()).then(|| PathBuf::from(v))
}

impl TlsConfig {
    /// Applies `key = v` if it is a TLS setting; `Ok(false)` if it is not one.
    pub fn set(&mut self, key: &str, v: &str) -> Result<bool, ConfigError> {
        match key {
            "cairn.tls.cert" => self.cert = path(v),
            "cairn.tls.key" => self.key = path(v),
            "cairn.tls.client.ca" => self.client_ca = path(v),
            "hbase.server.netty.tls.client.auth.mode" => {
                self.client_auth = if v.is_empty() {
                    None
                } else {
                    Some(
                        ClientAuth::parse(v)
                            .ok_or_else(|| bad(key, v, "expected NONE, WANT or NEED"))?,
                    )
                };
            }
            "hbase.rpc.tls.certReload" => self.reload = boolean(key, v)?,
            "hbase.server.netty.tls.enabled" => self.rpc.enabled = Some(boolean(key, v)?),
            "hbase.server.netty.tls.supportplaintext" => {
                self.rpc.plaintext = Some(boolean(key, v)?)
            }
            "hbase.rpc.tls.keystore.location" => self.rpc.keystore = path(v),
            "hbase.rpc.tls.truststore.location" => self.rpc.truststore = path(v),
            "hbase.thrift.ssl.enabled" => self.thrift.enabled = Some(boolean(key, v)?),
            "hbase.thrift.ssl.keystore.store" => self.thrift.keystore = path(v),
            "hbase.ssl.enabled" => self.http.enabled = Some(boolean(key, v)?),
            "ssl.server.keystore.location" => self.http.keystore = path(v),
            "ssl.server.truststore.location" => self.http.truststore = path(v),
            // Only PEM files are read; a password would be for an encrypted key or a JKS /
            // PKCS#12 store, neither of which cairn reads: say so rather than fail later.
            "hbase.rpc.tls.keystore.type"
            | "hbase.rpc.tls.truststore.type"
            | "hbase.thrift.ssl.keystore.type"
            | "ssl.server.keystore.type"
            | "ssl.server.truststore.type" => {
                if !v.is_empty() && !v.eq_ignore_ascii_case("PEM") {
                    return Err(bad(key, v, "cairn reads PEM files only"));
                }
            }
            "hbase.rpc.tls.keystore.password"
            | "hbase.thrift.ssl.keystore.password"
            | "hbase.thrift.ssl.keystore.keypassword"
            | "ssl.server.keystore.password"
            | "ssl.server.keystore.keypassword" => {
                if !v.is_empty() {
                    return Err(bad(
                        key,
                        "***",
                        "encrypted keys are not supported: give an unencrypted PKCS#8 key (PEM) with file permissions guarding it",
                    ));
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn port(&self, port: Port) -> &PortTls {
        match port {
            Port::Rpc => &self.rpc,
            Port::Thrift => &self.thrift,
            Port::Http => &self.http,
        }
    }

    /// The TLS settings of `port`, or `None` when it serves plaintext only.
    pub fn settings(&self, port: Port) -> Result<Option<TlsSettings>, ConfigError> {
        let p = self.port(port);
        if !p.enabled.unwrap_or(self.cert.is_some()) {
            return Ok(None);
        }
        let (cert, key) = match (&p.keystore, &self.cert) {
            (Some(ks), _) => (ks.clone(), ks.clone()),
            (None, Some(c)) => (c.clone(), self.key.clone().unwrap_or_else(|| c.clone())),
            (None, None) => {
                return Err(bad(
                    port.enable_key(),
                    "true",
                    &format!(
                        "TLS on the {} port needs a certificate: give --tls-cert or {}",
                        port.name(),
                        port.keystore_key()
                    ),
                ))
            }
        };
        let client_ca = p.truststore.clone().or_else(|| self.client_ca.clone());
        let client_auth = self.client_auth.unwrap_or(if client_ca.is_some() {
            ClientAuth::Need
        } else {
            ClientAuth::None
        });
        if client_auth != ClientAuth::None && client_ca.is_none() {
            return Err(bad(
                "hbase.server.netty.tls.client.auth.mode",
                &format!("{client_auth:?}").to_uppercase(),
                &format!(
                    "client certificates on the {} port need a CA: give --tls-client-ca",
                    port.name()
                ),
            ));
        }
        let plaintext = port == Port::Rpc && p.plaintext.unwrap_or(client_auth != ClientAuth::Need);
        Ok(Some(TlsSettings {
            cert,
            key,
            client_ca,
            client_auth,
            reload: self.reload,
            plaintext,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(c: &mut TlsConfig, kvs: &[(&str, &str)]) {
        for (k, v) in kvs {
            assert!(c.set(k, v).unwrap(), "{k} is a TLS setting");
        }
    }

    #[test]
    fn flags_cover_every_port_and_a_port_opts_out() {
        let mut c = TlsConfig::default();
        assert_eq!(c.settings(Port::Rpc).unwrap(), None, "plaintext by default");
        set(
            &mut c,
            &[("cairn.tls.cert", "/c.pem"), ("cairn.tls.key", "/k.pem")],
        );
        for port in [Port::Rpc, Port::Thrift, Port::Http] {
            let s = c.settings(port).unwrap().unwrap();
            assert_eq!(
                (s.cert.to_str(), s.key.to_str()),
                (Some("/c.pem"), Some("/k.pem"))
            );
            assert_eq!(s.client_auth, ClientAuth::None);
            assert_eq!(s.plaintext, port == Port::Rpc, "{port:?}");
        }
        set(
            &mut c,
            &[
                ("hbase.thrift.ssl.enabled", "false"),
                ("cairn.tls.client.ca", "/ca.pem"),
            ],
        );
        assert_eq!(c.settings(Port::Thrift).unwrap(), None);
        let rpc = c.settings(Port::Rpc).unwrap().unwrap();
        assert_eq!(rpc.client_auth, ClientAuth::Need, "a CA means NEED");
        assert!(
            !rpc.plaintext,
            "NEED refuses plaintext unless told otherwise"
        );
        set(
            &mut c,
            &[("hbase.server.netty.tls.supportplaintext", "true")],
        );
        assert!(c.settings(Port::Rpc).unwrap().unwrap().plaintext);
        set(
            &mut c,
            &[("hbase.server.netty.tls.client.auth.mode", "want")],
        );
        assert_eq!(
            c.settings(Port::Http).unwrap().unwrap().client_auth,
            ClientAuth::Want
        );
    }

    #[test]
    fn hbase_names_for_one_port() {
        let mut c = TlsConfig::default();
        set(
            &mut c,
            &[
                ("hbase.server.netty.tls.enabled", "true"),
                ("hbase.rpc.tls.keystore.location", "/ks.pem"),
                ("hbase.rpc.tls.truststore.location", "/ts.pem"),
                ("hbase.rpc.tls.certReload", "true"),
                ("hbase.rpc.tls.keystore.type", "pem"),
            ],
        );
        let s = c.settings(Port::Rpc).unwrap().unwrap();
        assert_eq!(
            (s.cert.to_str(), s.key.to_str()),
            (Some("/ks.pem"), Some("/ks.pem"))
        );
        assert_eq!(
            s.client_ca.as_deref().and_then(|p| p.to_str()),
            Some("/ts.pem")
        );
        assert!(s.reload);
        assert_eq!(c.settings(Port::Thrift).unwrap(), None, "only the RPC port");
        set(&mut c, &[("hbase.thrift.ssl.enabled", "true")]);
        let e = c.settings(Port::Thrift).unwrap_err().to_string();
        assert!(
            e.contains("hbase.thrift.ssl.enabled") && e.contains("--tls-cert"),
            "{e}"
        );
        set(&mut c, &[("hbase.thrift.ssl.keystore.store", "/t.pem")]);
        let t = c.settings(Port::Thrift).unwrap().unwrap();
        assert_eq!(t.cert.to_str(), Some("/t.pem"));
        assert_eq!(t.client_auth, ClientAuth::None, "no CA for thrift");
        let e = c
            .set("hbase.rpc.tls.keystore.type", "JKS")
            .unwrap_err()
            .to_string();
        assert!(e.contains("PEM files only"), "{e}");
        let e = c
            .set("hbase.rpc.tls.keystore.password", "secret")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("secret") && e.contains("encrypted"), "{e}");
        let e = c.set("hbase.ssl.enabled", "yes").unwrap_err().to_string();
        assert!(e.contains("hbase.ssl.enabled"), "{e}");
        let mut need = TlsConfig::default();
        set(
            &mut need,
            &[
                ("cairn.tls.cert", "/c.pem"),
                ("hbase.server.netty.tls.client.auth.mode", "NEED"),
            ],
        );
        let e = need.settings(Port::Http).unwrap_err().to_string();
        assert!(e.contains("--tls-client-ca"), "{e}");
        assert!(!need.set("hbase.regionserver.port", "1").unwrap());
    }
}
