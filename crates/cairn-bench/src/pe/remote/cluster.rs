//! Which cluster a remote run talks to, from HBase's client properties, and how it finds the
//! cluster's master and `hbase:meta`: through ZooKeeper as HBase's default
//! `ZKConnectionRegistry` does (`<zookeeper.znode.parent>/meta-region-server` and `/master`,
//! each a metadata prefix, `PBUF` and a message), or by asking a bootstrap server's
//! `ClientMetaService` as HBase 2.6's `RpcConnectionRegistry` does.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use cairn_rpc::{pb, znode};

use super::conn::Conn;

/// `hbase.zookeeper.quorum`.
pub const QUORUM: &str = "hbase.zookeeper.quorum";
/// `hbase.zookeeper.property.clientPort`.
pub const CLIENT_PORT: &str = "hbase.zookeeper.property.clientPort";
/// `zookeeper.znode.parent`.
pub const ZNODE_PARENT: &str = "zookeeper.znode.parent";
/// `hbase.client.bootstrap.servers`.
pub const BOOTSTRAP_SERVERS: &str = "hbase.client.bootstrap.servers";
/// `hbase.client.registry.impl`.
pub const REGISTRY_IMPL: &str = "hbase.client.registry.impl";
/// HBase's RPC registry class, the value of [`REGISTRY_IMPL`] that selects bootstrap servers.
pub const RPC_REGISTRY: &str = "org.apache.hadoop.hbase.client.RpcConnectionRegistry";

/// HBase's default ZooKeeper client port.
const DEFAULT_CLIENT_PORT: u16 = 2181;
/// HBase's default base znode.
const DEFAULT_PARENT: &str = "/hbase";
/// How long a ZooKeeper session may take to open, and its timeout.
const ZK_TIMEOUT: Duration = Duration::from_secs(30);

/// How the client finds the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Registry {
    /// ZooKeeper: the connect string (every host with its port, then any chroot) and the base
    /// znode.
    ZooKeeper {
        /// `host:port,…[/chroot]`.
        connect: String,
        /// `zookeeper.znode.parent`.
        parent: String,
    },
    /// `ClientMetaService` on one of these `host:port`s.
    Bootstrap(Vec<String>),
}

/// A cluster to run against, from the client's properties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterConfig {
    /// Where the client looks the cluster up.
    pub registry: Registry,
}

impl ClusterConfig {
    /// The cluster that `get` (a property lookup) names, or `None` when it names none
    /// (neither a ZooKeeper quorum nor bootstrap servers). As in HBase 2.6, ZooKeeper is used
    /// unless `hbase.client.registry.impl` names `RpcConnectionRegistry`; bootstrap servers
    /// given without a quorum select it too.
    pub fn from_properties(get: impl Fn(&str) -> Option<String>) -> Result<Option<ClusterConfig>> {
        let nonempty = |k: &str| {
            get(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let quorum = nonempty(QUORUM);
        let bootstrap = nonempty(BOOTSTRAP_SERVERS);
        let rpc_registry = nonempty(REGISTRY_IMPL).is_some_and(|c| c == RPC_REGISTRY);
        if let Some(servers) = bootstrap.filter(|_| rpc_registry || quorum.is_none()) {
            let list: Vec<String> = servers
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            for s in &list {
                if !s.contains(':') {
                    bail!("{BOOTSTRAP_SERVERS}={servers}: {s:?} is not HOST:PORT");
                }
            }
            return Ok(Some(ClusterConfig {
                registry: Registry::Bootstrap(list),
            }));
        }
        if rpc_registry {
            bail!("{REGISTRY_IMPL}={RPC_REGISTRY} needs {BOOTSTRAP_SERVERS}=HOST:PORT,…");
        }
        let Some(quorum) = quorum else {
            return Ok(None);
        };
        let port = match nonempty(CLIENT_PORT) {
            None => DEFAULT_CLIENT_PORT,
            Some(p) => p
                .parse()
                .with_context(|| format!("{CLIENT_PORT}={p}: not a port number"))?,
        };
        let parent = nonempty(ZNODE_PARENT).unwrap_or_else(|| DEFAULT_PARENT.into());
        if !parent.starts_with('/') {
            bail!("{ZNODE_PARENT}={parent}: a znode path starts with /");
        }
        Ok(Some(ClusterConfig {
            registry: Registry::ZooKeeper {
                connect: cairn_rpc::znode::connect_string(&quorum, port),
                parent: parent.trim_end_matches('/').to_string(),
            },
        }))
    }

    /// The properties this module reads (the others a remote run ignores).
    pub fn reads(name: &str) -> bool {
        [
            QUORUM,
            CLIENT_PORT,
            ZNODE_PARENT,
            BOOTSTRAP_SERVERS,
            REGISTRY_IMPL,
        ]
        .contains(&name)
    }

    /// One line naming the cluster, for the report.
    pub fn describe(&self) -> String {
        match &self.registry {
            Registry::ZooKeeper { connect, parent } => format!("zookeeper {connect} {parent}"),
            Registry::Bootstrap(s) => format!("bootstrap servers {}", s.join(",")),
        }
    }

    /// The active master's and `hbase:meta`'s `host:port`.
    pub(crate) fn locate(&self) -> Result<Locations> {
        match &self.registry {
            Registry::ZooKeeper { connect, parent } => from_zookeeper(connect, parent),
            Registry::Bootstrap(servers) => {
                let mut last = None;
                for s in servers {
                    match from_bootstrap(s) {
                        Ok(l) => return Ok(l),
                        Err(e) => last = Some(e),
                    }
                }
                Err(last.expect("at least one bootstrap server"))
            }
        }
    }
}

/// Where the master and meta are.
#[derive(Clone, Debug)]
pub(crate) struct Locations {
    pub master: String,
    pub meta: String,
}

fn server_addr(sn: &pb::ServerName) -> String {
    format!("{}:{}", sn.host_name, sn.port.unwrap_or(0))
}

fn from_zookeeper(connect: &str, parent: &str) -> Result<Locations> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("cairn-pe-zookeeper")
        .enable_time()
        .build()
        .context("starting the ZooKeeper client's runtime")?;
    rt.block_on(async {
        // Fail at the first refused connection rather than retry for the whole timeout: a
        // benchmark pointed at the wrong port should say so at once.
        let client = tokio::time::timeout(
            ZK_TIMEOUT,
            zookeeper_client::Client::connector()
                .with_session_timeout(ZK_TIMEOUT)
                .with_fail_eagerly()
                .connect(connect),
        )
        .await
        .map_err(|_| anyhow::anyhow!("zookeeper {connect}: no session within {ZK_TIMEOUT:?}"))?
        .map_err(|e| anyhow::anyhow!("zookeeper {connect}: no session: {e}"))?;
        let read = |name: &'static str| {
            let path = format!("{parent}/{name}");
            let client = &client;
            async move {
                let (data, _) = client.get_data(&path).await.with_context(|| {
                    format!("zookeeper {connect}: reading {path} (is the cluster up?)")
                })?;
                anyhow::Ok((path, data))
            }
        };
        let found = async {
            let (path, data) = read("meta-region-server").await?;
            let meta = znode::parse_meta_region_server(&data)
                .with_context(|| format!("zookeeper {connect}: {path}"))?;
            let (path, data) = read("master").await?;
            let master = znode::parse_master(&data)
                .with_context(|| format!("zookeeper {connect}: {path}"))?;
            anyhow::Ok(Locations {
                master: server_addr(&master.master),
                meta: server_addr(&meta.server),
            })
        }
        .await;
        // Close the session now rather than leave it to expire on the server: dropping the
        // last handle closes it; wait (briefly) until it has.
        let mut state = client.state_watcher();
        drop(client);
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            while !state.changed().await.is_terminated() {}
        })
        .await;
        found
    })
}

fn from_bootstrap(addr: &str) -> Result<Locations> {
    let mut c = Conn::open(addr, "ClientMetaService")?;
    let meta = c
        .call::<pb::GetMetaRegionLocationsResponse>(
            "GetMetaRegionLocations",
            &pb::GetMetaRegionLocationsRequest {},
            &[],
        )?
        .message;
    let meta = meta
        .meta_locations
        .iter()
        .find(|l| l.region_info.replica_id.unwrap_or(0) == 0)
        .and_then(|l| l.server_name.as_ref())
        .map(server_addr)
        .with_context(|| format!("bootstrap server {addr}: no location of hbase:meta"))?;
    let master = c
        .call::<pb::GetActiveMasterResponse>(
            "GetActiveMaster",
            &pb::GetActiveMasterRequest {},
            &[],
        )?
        .message
        .server_name
        .as_ref()
        .map(server_addr)
        .with_context(|| format!("bootstrap server {addr}: no active master"))?;
    Ok(Locations { master, meta })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(pairs: &[(&str, &str)]) -> Result<Option<ClusterConfig>> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ClusterConfig::from_properties(|k| {
            pairs
                .iter()
                .rev()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn a_quorum_selects_zookeeper_with_hbases_defaults() {
        let c = conf(&[(QUORUM, "zk1,zk2:2182/chroot")]).unwrap().unwrap();
        assert_eq!(
            c.registry,
            Registry::ZooKeeper {
                connect: "zk1:2181,zk2:2182/chroot".into(),
                parent: "/hbase".into()
            }
        );
        let c = conf(&[(QUORUM, "h"), (CLIENT_PORT, "2281"), (ZNODE_PARENT, "/x/")])
            .unwrap()
            .unwrap();
        assert_eq!(c.describe(), "zookeeper h:2281 /x");
        assert!(conf(&[(QUORUM, "h"), (CLIENT_PORT, "port")]).is_err());
        assert!(conf(&[("hbase.other", "1")]).unwrap().is_none());
    }

    #[test]
    fn bootstrap_servers_as_hbase_2_6_picks_them() {
        let c = conf(&[(BOOTSTRAP_SERVERS, "a:1, b:2")]).unwrap().unwrap();
        assert_eq!(
            c.registry,
            Registry::Bootstrap(vec!["a:1".into(), "b:2".into()])
        );
        // With a quorum too, ZooKeeper unless the registry class says otherwise.
        let c = conf(&[(BOOTSTRAP_SERVERS, "a:1"), (QUORUM, "z")])
            .unwrap()
            .unwrap();
        assert!(matches!(c.registry, Registry::ZooKeeper { .. }));
        let c = conf(&[
            (BOOTSTRAP_SERVERS, "a:1"),
            (QUORUM, "z"),
            (REGISTRY_IMPL, RPC_REGISTRY),
        ])
        .unwrap()
        .unwrap();
        assert!(matches!(c.registry, Registry::Bootstrap(_)));
        let e = conf(&[(BOOTSTRAP_SERVERS, "a")]).unwrap_err().to_string();
        assert!(e.contains("not HOST:PORT"), "{e}");
        assert!(conf(&[(REGISTRY_IMPL, RPC_REGISTRY)]).is_err());
    }
}
