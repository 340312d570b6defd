//! The running region server of a cluster: its RPC port bound first (the port names the
//! server, and the server names its WAL directory), the region store opened on the
//! cluster's root holding no region, the native RPC served, then the cluster joined.

use std::sync::Arc;
use std::time::Duration;

use cairn_region::ServerName;
use cairn_region::{Hosting, RegionServer};

use super::{ClusterConfig, Member, MemberSlot};
use crate::config::Config;
use crate::rpc::{RpcConfig, RpcMetrics, RpcServer};
use crate::server::ServeError;
use crate::zookeeper::{Identity, Location};

/// A region server that has joined its cluster.
pub struct ClusterRegionServer {
    rs: Arc<RegionServer>,
    rpc: RpcServer,
    member: Arc<Member>,
    info: Option<super::info::InfoServer>,
}

/// The cluster settings in `config`'s properties, HBase's names and defaults.
pub fn cluster_config(config: &Config) -> Result<ClusterConfig, ServeError> {
    let mut c = ClusterConfig {
        zk: config.zookeeper.clone(),
        ..ClusterConfig::default()
    };
    for (k, v) in &config.properties {
        let ms = || -> Result<Duration, ServeError> {
            v.parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .map(Duration::from_millis)
                .ok_or_else(|| {
                    ServeError::Cluster(format!("{k}={v}: not a positive number of milliseconds"))
                })
        };
        match k.as_str() {
            "hbase.regionserver.msginterval" => c.msg_interval = ms()?,
            "cairn.regionserver.master.wait" => c.master_wait = ms()?,
            "hbase.regionserver.executor.openregion.threads" => {
                c.open_threads =
                    v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                        ServeError::Cluster(format!("{k}={v}: not a positive number"))
                    })?
            }
            _ => {}
        }
    }
    if !c.zk.enabled() {
        return Err(ServeError::Cluster(
            "a region server of a cluster needs hbase.zookeeper.quorum".into(),
        ));
    }
    Ok(c)
}

impl ClusterRegionServer {
    /// Starts and joins. `on_abort` runs (once, on some thread) if the server must stop at
    /// once: the caller should end the process without flushing anything.
    pub fn start(
        config: &Config,
        on_abort: impl Fn(&str) + Send + Sync + 'static,
    ) -> Result<ClusterRegionServer, ServeError> {
        let cluster = cluster_config(config)?;
        let rc = config
            .rpc
            .clone()
            .ok_or_else(|| ServeError::Cluster("a region server needs its RPC port".into()))?;
        let listen = |source| ServeError::Listen {
            what: "hbase rpc",
            addr: rc.addr.clone(),
            source,
        };
        let listener = crate::connections::bind(&rc.addr).map_err(listen)?;
        let addr = listener.local_addr().map_err(listen)?;
        let host = rc.hostname.clone().unwrap_or_else(|| {
            // HBase's region server names itself by host name; on loopback, "localhost".
            if addr.ip().is_loopback() || addr.ip().is_unspecified() {
                "localhost".to_string()
            } else {
                addr.ip().to_string()
            }
        });
        let start_code = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_millis() as u64);
        let location = Location {
            host: host.clone(),
            port: addr.port(),
            start_code,
        };
        let mut sc = config.server_config()?;
        sc.hosting = Hosting::Assigned;
        sc.server_name = ServerName::parse(&location.name())
            .map_err(|e| ServeError::Cluster(format!("server name: {e}")))?;
        let rs = RegionServer::open(sc).map_err(|source| ServeError::Open {
            dir: config.data_dir.display().to_string(),
            source,
        })?;
        let slow_log = Arc::new(crate::slow_log::SlowLog::new(config.slow_log.clone()));
        let rpc_metrics = Arc::new(RpcMetrics::new(slow_log.clone()));
        let info = match &config.info_addr {
            Some(a) => {
                let registry = crate::metrics::Registry::new();
                registry.register(Arc::new(crate::metrics::RegionServerSource(rs.clone())));
                registry.register(rpc_metrics.clone());
                Some(
                    super::info::InfoServer::start(
                        a,
                        rs.clone(),
                        registry,
                        slow_log,
                        config,
                        location.name(),
                        addr,
                    )
                    .map_err(|source| ServeError::Listen {
                        what: "info",
                        addr: a.clone(),
                        source,
                    })?,
                )
            }
            None => None,
        };
        let info_port = info.as_ref().map(|i| i.addr().port());
        let slot = MemberSlot::default();
        let rpc = RpcServer::start_on(
            listener,
            rs.clone(),
            RpcConfig {
                hostname: Some(host),
                start_code: Some(start_code),
                cluster: Some(slot.clone()),
                ..rc
            },
            info_port,
            rpc_metrics,
        )
        .map_err(|source| ServeError::Listen {
            what: "hbase rpc",
            addr: addr.to_string(),
            source,
        })?;
        let cluster_id = rs.cluster_id().unwrap_or_default();
        let identity = Identity {
            location,
            cluster_id,
            info_port,
        };
        let member = Member::join(rs.clone(), &identity, cluster, on_abort)
            .map_err(|e| ServeError::Cluster(format!("joining the cluster: {e}")))?;
        let _ = slot.set(member.clone());
        Ok(ClusterRegionServer {
            rs,
            rpc,
            member,
            info,
        })
    }

    /// `host,port,startcode`.
    pub fn server_name(&self) -> String {
        self.rpc.server_name()
    }

    /// The RPC address.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.rpc.addr()
    }

    /// The info port's address, if it serves one.
    pub fn info_addr(&self) -> Option<std::net::SocketAddr> {
        self.info.as_ref().map(|i| i.addr())
    }

    /// The member (its state, for status pages and tests).
    pub fn member(&self) -> &Arc<Member> {
        &self.member
    }

    /// The orderly stop: every region closed (flushed) and reported to the master, the RPC
    /// port closed, the WAL rolled and retired, the ZooKeeper session ended.
    pub fn shutdown(self) -> Result<(), ServeError> {
        let ClusterRegionServer {
            rs,
            mut rpc,
            member,
            info,
        } = self;
        drop(info);
        member.stop();
        rpc.stop();
        drop(rpc);
        let closed = rs.close().map_err(ServeError::Close);
        member.leave();
        closed
    }
}
