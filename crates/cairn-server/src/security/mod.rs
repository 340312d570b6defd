//! Who may run admin operations, for both of the server's protocols, in one place.
//!
//! As in HBase, authorization is off unless `hbase.security.authorization=true`; then only
//! superusers — the users and `@group`s of `hbase.superuser`, plus the account the server runs
//! as — may run admin operations (create, delete, modify, enable, disable or truncate tables;
//! namespaces; splits, merges, flushes, compactions; bulk loads; balancer, normalizer and
//! other switches), and everyone else gets HBase's `AccessDeniedException` with the message
//! HBase's `AccessChecker` gives a global check. Reads and writes stay open to every caller:
//! cairn has no per-table ACLs (HBase's `grant`), so without them a user is either a superuser
//! or can only read and write.
//!
//! The caller is the holder of the TLS client certificate (its CN, or a subject alternative
//! name per `cairn.security.tls.identity`) when one was shown; otherwise, on the native RPC,
//! the SIMPLE user name the client puts in its connection header (a claim, not a proof); a
//! Thrift connection without a certificate has no user, and no user is never a superuser.
//! Names are compared as given, without Kerberos-style shortening. Groups are the operating
//! system's groups of the account with the user's name, as Hadoop's default shell mapping
//! finds them ([`groups`]).

pub mod groups;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use cairn_tls::CertIdentity;

use crate::metrics::Method;
use crate::rpc::Service;

/// `org.apache.hadoop.hbase.security.AccessDeniedException` (a `DoNotRetryIOException`).
pub const ACCESS_DENIED: &str = "org.apache.hadoop.hbase.security.AccessDeniedException";

/// Authorization settings, with HBase's property names.
#[derive(Clone, Debug)]
pub struct SecurityConfig {
    /// `hbase.security.authorization` (false).
    pub authorization: bool,
    /// `hbase.superuser`: user names, and group names written `@group`.
    pub superusers: Vec<String>,
    /// Which part of a client certificate names its holder (`cairn.security.tls.identity`:
    /// `CN`, `SAN_DNS`, `SAN_EMAIL`, `SAN_URI`; HBase 2.6 has no such setting).
    pub cert_identity: CertIdentity,
    /// How long a user's groups are remembered (`hadoop.security.groups.cache.secs`, 300 s).
    pub groups_cache: Duration,
}

impl Default for SecurityConfig {
    fn default() -> Self {
        SecurityConfig {
            authorization: false,
            superusers: Vec::new(),
            cert_identity: CertIdentity::CommonName,
            groups_cache: groups::DEFAULT_CACHE,
        }
    }
}

/// Who is calling, as one connection established it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Caller {
    /// No identity: a Thrift connection without a client certificate, or a native RPC
    /// connection header without a user.
    #[default]
    Nobody,
    /// A user name (from a certificate or a SIMPLE connection header).
    User(Arc<str>),
}

impl Caller {
    /// The name, if there is one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Caller::Nobody => None,
            Caller::User(u) => Some(u),
        }
    }
}

/// An admin operation refused: HBase's `AccessDeniedException` message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denied(pub String);

impl std::fmt::Display for Denied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Decides who may run admin operations; shared by both protocols.
pub struct Authorizer {
    enabled: bool,
    users: HashSet<String>,
    groups: HashSet<String>,
    cert_identity: CertIdentity,
    lookups: groups::Groups,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("enabled", &self.enabled)
            .field("users", &self.users)
            .field("groups", &self.groups)
            .finish_non_exhaustive()
    }
}

impl Authorizer {
    /// From the settings; the account the server runs as is a superuser, as in HBase.
    pub fn new(config: &SecurityConfig) -> Authorizer {
        let mut users = HashSet::new();
        let mut groups = HashSet::new();
        if let Some(me) = groups::current_user() {
            users.insert(me);
        }
        for entry in config.superusers.iter().map(|s| s.trim()) {
            match entry.strip_prefix('@') {
                Some(g) if !g.is_empty() => {
                    groups.insert(g.to_string());
                }
                Some(_) => {}
                None if !entry.is_empty() => {
                    users.insert(entry.to_string());
                }
                None => {}
            }
        }
        Authorizer {
            enabled: config.authorization,
            users,
            groups,
            cert_identity: config.cert_identity,
            lookups: groups::Groups::new(config.groups_cache),
        }
    }

    /// Authorization off: everything allowed, as HBase without its AccessController.
    pub fn off() -> Authorizer {
        Authorizer::new(&SecurityConfig::default())
    }

    /// Whether admin operations are checked.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The caller of a connection: the client certificate's holder when a certificate was
    /// shown, else `claimed` (a SIMPLE user name), else nobody.
    pub fn caller(
        &self,
        certificates: Option<&[cairn_tls::CertificateDer<'_>]>,
        claimed: Option<&str>,
    ) -> Caller {
        if let Some(leaf) = certificates.and_then(|c| c.first()) {
            // A verified certificate that names no one in the chosen field names no one:
            // falling back to a claim would let a holder choose who they are.
            return match self.cert_identity.of(leaf) {
                Some(name) => Caller::User(name.into()),
                None => Caller::Nobody,
            };
        }
        match claimed.filter(|u| !u.is_empty()) {
            Some(u) => Caller::User(u.into()),
            None => Caller::Nobody,
        }
    }

    /// Whether `caller` is a superuser: named in `hbase.superuser` or the server's own
    /// account, or in one of its `@group`s.
    pub fn is_superuser(&self, caller: &Caller) -> bool {
        let Some(name) = caller.name() else {
            return false;
        };
        if self.users.contains(name) {
            return true;
        }
        !self.groups.is_empty()
            && self
                .lookups
                .of(name)
                .iter()
                .any(|g| self.groups.contains(g))
    }

    /// Allows an admin operation to `caller`, or refuses it as HBase's global ADMIN check
    /// does (`AccessChecker.requireGlobalPermission`).
    pub fn require_admin(&self, caller: &Caller) -> Result<(), Denied> {
        if !self.enabled || self.is_superuser(caller) {
            return Ok(());
        }
        Err(Denied(format!(
            "Insufficient permissions for user '{}' (global, action=ADMIN)",
            caller.name().unwrap_or("null")
        )))
    }
}

/// Whether a native RPC method changes the cluster (an admin operation) rather than reading
/// or writing data. Everything the master service does is admin except the look-ups clients
/// make, so a method added later is guarded until it is listed here as a read.
pub fn rpc_is_admin(service: Service, method: &str) -> bool {
    match service {
        Service::ClientMeta => false,
        Service::Client => matches!(
            method,
            "PrepareBulkLoad" | "BulkLoadHFile" | "CleanupBulkLoad"
        ),
        Service::Admin => !matches!(
            method,
            "GetRegionInfo" | "GetOnlineRegion" | "GetServerInfo" | "GetRegionLoad"
        ),
        Service::Master => !matches!(
            method,
            "IsMasterRunning"
                | "GetTableDescriptors"
                | "GetTableNames"
                | "GetTableState"
                | "IsProcedureDone"
                | "getProcedureResult"
                | "ListNamespaceDescriptors"
                | "ListNamespaces"
                | "GetNamespaceDescriptor"
                | "GetClusterStatus"
                | "IsMasterInMaintenanceMode"
                | "ListTableDescriptorsByNamespace"
                | "ListTableNamesByNamespace"
                | "IsBalancerEnabled"
                | "IsSplitOrMergeEnabled"
                | "IsNormalizerEnabled"
                | "IsCatalogJanitorEnabled"
                | "IsCleanerChoreEnabled"
                | "IsSnapshotCleanupEnabled"
                | "IsRpcThrottleEnabled"
                | "GetSchemaAlterStatus"
                | "TableExists"
        ),
    }
}

/// Whether a Thrift method is an admin operation.
pub fn thrift_is_admin(method: Method) -> bool {
    matches!(
        method,
        Method::EnableTable
            | Method::DisableTable
            | Method::Compact
            | Method::MajorCompact
            | Method::CreateTable
            | Method::DeleteTable
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn authz(superusers: &[&str]) -> Authorizer {
        Authorizer::new(&SecurityConfig {
            authorization: true,
            superusers: superusers.iter().map(|s| s.to_string()).collect(),
            ..SecurityConfig::default()
        })
    }

    fn user(u: &str) -> Caller {
        Caller::User(u.into())
    }

    #[test]
    fn superusers_by_name_group_and_the_servers_own_account() {
        let me = groups::current_user().unwrap();
        let my_group = groups::os_groups(&me).remove(0);
        let a = authz(&["alice", " bob ", "@admins", "", "@"]);
        assert!(a.require_admin(&user("alice")).is_ok());
        assert!(a.require_admin(&user("bob")).is_ok(), "entries are trimmed");
        assert!(a.require_admin(&user(&me)).is_ok(), "the server's account");
        assert_eq!(
            a.require_admin(&user("mallory")).unwrap_err().0,
            "Insufficient permissions for user 'mallory' (global, action=ADMIN)"
        );
        assert_eq!(
            a.require_admin(&Caller::Nobody).unwrap_err().0,
            "Insufficient permissions for user 'null' (global, action=ADMIN)"
        );
        assert!(a.require_admin(&user("Alice")).is_err(), "names are exact");
        // A group: every account in it is a superuser, others are not.
        let g = authz(&[&format!("@{my_group}")]);
        assert!(g.is_superuser(&user(&me)));
        assert!(!g.is_superuser(&user("no-such-user-for-cairn-tests")));
        // Off: everyone may.
        let off = Authorizer::off();
        assert!(!off.enabled());
        assert!(off.require_admin(&Caller::Nobody).is_ok());
        assert!(off.require_admin(&user("mallory")).is_ok());
    }

    #[test]
    fn the_caller_is_the_certificate_else_the_claim() {
        let a = authz(&[]);
        assert_eq!(a.caller(None, Some("bob")), user("bob"));
        assert_eq!(a.caller(None, Some("")), Caller::Nobody);
        assert_eq!(a.caller(None, None), Caller::Nobody);
        let key = rcgen::KeyPair::generate().unwrap();
        let mut p = rcgen::CertificateParams::new(vec!["svc.example".to_string()]).unwrap();
        p.distinguished_name
            .push(rcgen::DnType::CommonName, "alice");
        let der = p.self_signed(&key).unwrap().der().clone();
        let chain = [der];
        assert_eq!(a.caller(Some(&chain), Some("root")), user("alice"));
        let by_dns = Authorizer::new(&SecurityConfig {
            authorization: true,
            cert_identity: CertIdentity::SanEmail,
            ..SecurityConfig::default()
        });
        assert_eq!(
            by_dns.caller(Some(&chain), Some("root")),
            Caller::Nobody,
            "no e-mail SAN: nobody, not the claim"
        );
    }

    #[test]
    fn admin_methods() {
        for m in [
            "CreateTable",
            "DeleteTable",
            "ModifyTable",
            "CreateNamespace",
            "Balance",
            "SetBalancerRunning",
            "SplitRegion",
            "MergeTableRegions",
            "FlushTable",
            "truncateTable",
            "EnableTable",
            "DisableTable",
            "SetNormalizerRunning",
            "SetSplitOrMergeEnabled",
        ] {
            assert!(rpc_is_admin(Service::Master, m), "{m}");
        }
        for m in [
            "GetTableDescriptors",
            "GetTableNames",
            "IsMasterRunning",
            "GetClusterStatus",
            "ListNamespaces",
        ] {
            assert!(!rpc_is_admin(Service::Master, m), "{m}");
        }
        assert!(rpc_is_admin(Service::Admin, "FlushRegion"));
        assert!(rpc_is_admin(Service::Admin, "CompactRegion"));
        assert!(!rpc_is_admin(Service::Admin, "GetRegionInfo"));
        for m in ["PrepareBulkLoad", "BulkLoadHFile", "CleanupBulkLoad"] {
            assert!(rpc_is_admin(Service::Client, m), "{m}");
        }
        for m in ["Get", "Mutate", "Multi", "Scan"] {
            assert!(!rpc_is_admin(Service::Client, m), "{m}");
        }
        assert!(!rpc_is_admin(Service::ClientMeta, "GetClusterId"));
        assert!(thrift_is_admin(Method::DeleteTable));
        assert!(thrift_is_admin(Method::MajorCompact));
        assert!(!thrift_is_admin(Method::MutateRows));
        assert!(!thrift_is_admin(Method::GetTableNames));
    }
}
