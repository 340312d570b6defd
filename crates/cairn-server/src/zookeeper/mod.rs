//! Registering `cairn serve` in ZooKeeper as an HBase master and region server do, so HBase
//! clients with the default ZooKeeper connection registry (`ZKConnectionRegistry`) find it.
//!
//! cairn is the master, the only region server and the host of `hbase:meta`, so it writes what
//! all three write in a real cluster, under `zookeeper.znode.parent` (default `/hbase`):
//!
//! | znode | kind | content |
//! |---|---|---|
//! | `/hbase`, `rs`, `draining`, `table`, `splitWAL`, `backup-masters` | persistent | empty |
//! | `hbaseid` | persistent | `ClusterId` (kept at stop, as HBase keeps it) |
//! | `master` | ephemeral | `Master` (server name, RPC version 0, info port) |
//! | `running` | persistent | `ClusterUp` (start date) |
//! | `rs/<host,port,startcode>` | ephemeral | `RegionServerInfo` (info port, version) |
//! | `meta-region-server` | persistent | `MetaRegionServer` (server name, state OPEN) |
//!
//! Byte formats are in [`znode`]; the session — connecting, taking over the master znode,
//! re-registering after the session expires, removing the znodes at an orderly stop — in
//! [`registration`]. The ZooKeeper client is async; it runs on a thread of its own, and this
//! module's interface is blocking like the rest of the server.

pub mod member;
pub mod registration;
pub use cairn_rpc::znode;

use std::time::Duration;

pub use crate::rpc::meta::Location;

pub use member::{MasterAddress, Membership};
pub use registration::Registration;
pub use znode::ZnodeError;

/// HBase's default `zookeeper.znode.parent`.
pub const DEFAULT_PARENT: &str = "/hbase";

/// HBase's default `hbase.zookeeper.property.clientPort`.
pub const DEFAULT_CLIENT_PORT: u16 = 2181;

/// HBase's default `zookeeper.session.timeout` (90 s; ZooKeeper caps it at 20 ticks).
pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(90);

/// Where to register, with HBase's property names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZkConfig {
    /// `hbase.zookeeper.quorum` or `--zookeeper`: `host[:port],…` with an optional chroot
    /// (`/path`) after the last host, as ZooKeeper's connect strings allow; empty = do not
    /// register.
    pub quorum: String,
    /// The port of hosts listed without one (`hbase.zookeeper.property.clientPort`).
    pub client_port: u16,
    /// The base znode (`zookeeper.znode.parent`).
    pub parent: String,
    /// The session timeout asked for (`zookeeper.session.timeout`); also how long start-up
    /// waits for ZooKeeper, or for another master's znode to go.
    pub session_timeout: Duration,
}

impl Default for ZkConfig {
    fn default() -> Self {
        ZkConfig {
            quorum: String::new(),
            client_port: DEFAULT_CLIENT_PORT,
            parent: DEFAULT_PARENT.into(),
            session_timeout: DEFAULT_SESSION_TIMEOUT,
        }
    }
}

impl ZkConfig {
    /// Whether a quorum was given.
    pub fn enabled(&self) -> bool {
        !self.quorum.trim().is_empty()
    }

    /// The quorum as a ZooKeeper connect string: every host with a port (the client port for
    /// those given without), then the chroot if any.
    pub fn connect_string(&self) -> String {
        cairn_rpc::znode::connect_string(&self.quorum, self.client_port)
    }

    /// The path of `child` under the base znode.
    pub fn path(&self, child: &str) -> String {
        format!("{}/{child}", self.parent.trim_end_matches('/'))
    }
}

/// Who registers: the native RPC server's location and what it advertises.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// Host, port and start code, exactly as the RPC server advertises them in `hbase:meta`,
    /// so ZooKeeper and meta name the same server; the start code tells this incarnation
    /// from earlier ones.
    pub location: Location,
    /// The cluster id (`hbaseid`), the same the RPC registry reports.
    pub cluster_id: String,
    /// The HTTP (web UI) port, if one is served.
    pub info_port: Option<u16>,
}

impl Identity {
    /// HBase's `ServerName` string, `host,port,startcode`.
    pub fn server_name(&self) -> String {
        self.location.name()
    }
}

/// Why registering or unregistering failed; each names the quorum or the znode and the
/// operation.
#[derive(Debug, thiserror::Error)]
pub enum ZkError {
    /// No session could be established in time.
    #[error("zookeeper quorum {quorum}: no session within {waited:?}: {reason}")]
    Connect {
        /// The connect string.
        quorum: String,
        /// How long it was tried.
        waited: Duration,
        /// The last failure.
        reason: String,
    },
    /// A ZooKeeper operation on a znode failed.
    #[error("zookeeper {op} {path}: {source}")]
    Op {
        /// `create`, `get`, `set`, `delete`, …
        op: &'static str,
        /// The znode's full path.
        path: String,
        /// The client's error.
        source: zookeeper_client::Error,
    },
    /// Another master's ephemeral znode stayed for the whole wait.
    #[error(
        "zookeeper {path}: another master at {holder} is active and its znode did not go within {waited:?}"
    )]
    AnotherMaster {
        /// The master znode.
        path: String,
        /// Who holds it, as its data says.
        holder: String,
        /// How long cairn waited.
        waited: Duration,
    },
    /// The registration thread could not run.
    #[error("zookeeper registration thread: {0}")]
    Thread(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_string_adds_the_client_port() {
        let mut c = ZkConfig {
            quorum: "zk1, zk2:2182,zk3".into(),
            client_port: 2281,
            ..ZkConfig::default()
        };
        assert_eq!(c.connect_string(), "zk1:2281,zk2:2182,zk3:2281");
        c.quorum = "a:1,b/chroot/x".into();
        assert_eq!(c.connect_string(), "a:1,b:2281/chroot/x");
        assert!(c.enabled());
        c.quorum = " ".into();
        assert!(!c.enabled());
    }

    #[test]
    fn paths_under_the_parent() {
        let mut c = ZkConfig::default();
        assert_eq!(c.path("master"), "/hbase/master");
        c.parent = "/x/y/".into();
        assert_eq!(c.path("rs/h,1,2"), "/x/y/rs/h,1,2");
    }

    #[test]
    fn identity_names_the_server_as_hbase_does() {
        let id = Identity {
            location: Location {
                host: "Host-A".into(),
                port: 16020,
                start_code: 1764115200000,
            },
            cluster_id: "cid".into(),
            info_port: Some(9095),
        };
        assert_eq!(id.server_name(), "Host-A,16020,1764115200000");
    }
}
