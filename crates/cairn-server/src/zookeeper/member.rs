//! The ZooKeeper session of a region server in an HBase cluster (`cairn regionserver`):
//! where the active master is (`/hbase/master`), and this server's ephemeral
//! `/hbase/rs/<host,port,startcode>`, which is how the master knows it is alive.
//!
//! Unlike [`super::Registration`] (cairn as a whole standalone cluster), a lost session is
//! not re-established: the master takes the znode's disappearance as this server's death and
//! has its WAL split and its regions reopened elsewhere, so the server must stop writing
//! (HBase's region server aborts). [`Membership::lost`] turns true and the callback given
//! to [`Membership::connect`] runs once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zookeeper_client as zk;

use super::registration::{connect, region_server_znode};
use super::{znode, Identity, ZkConfig, ZkError};

/// A region server's ZooKeeper session.
pub struct Membership {
    rt: tokio::runtime::Runtime,
    client: zk::Client,
    config: ZkConfig,
    lost: Arc<AtomicBool>,
}

/// Where the active master is, as `/hbase/master` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MasterAddress {
    /// Host name.
    pub host: String,
    /// RPC port.
    pub port: u16,
    /// The master's start code: a new one is a new master.
    pub start_code: u64,
}

impl MasterAddress {
    /// `host:port`, for connecting.
    pub fn addr(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

impl Membership {
    /// Opens a session (waiting at most the session timeout for ZooKeeper). `on_lost` runs
    /// once, on the session's thread, when the session ends for any reason other than
    /// [`Membership::close`].
    pub fn connect(
        config: ZkConfig,
        on_lost: impl FnOnce(String) + Send + 'static,
    ) -> Result<Membership, ZkError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("cairn-zookeeper")
            .enable_time()
            .build()
            .map_err(|e| ZkError::Thread(format!("starting its runtime: {e}")))?;
        let client = rt.block_on(connect(&config))?;
        let lost = Arc::new(AtomicBool::new(false));
        let mut watcher = client.state_watcher();
        let flag = lost.clone();
        let quorum = config.connect_string();
        rt.spawn(async move {
            let mut state = watcher.peek_state();
            while !state.is_terminated() {
                state = watcher.changed().await;
            }
            if !flag.swap(true, Ordering::AcqRel) {
                on_lost(format!("zookeeper session {state:?} (quorum {quorum})"));
            }
        });
        Ok(Membership {
            rt,
            client,
            config,
            lost,
        })
    }

    /// Whether the session has ended.
    pub fn lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// The active master, if one has registered.
    pub fn master(&self) -> Result<Option<MasterAddress>, ZkError> {
        let path = self.config.path("master");
        let data = match self.rt.block_on(self.client.get_data(&path)) {
            Ok((data, _)) => data,
            Err(zk::Error::NoNode) => return Ok(None),
            Err(e) => {
                return Err(ZkError::Op {
                    op: "get",
                    path,
                    source: e,
                })
            }
        };
        let m = znode::parse_master(&data).map_err(|e| ZkError::Thread(format!("{path}: {e}")))?;
        let sn = m.master;
        Ok(Some(MasterAddress {
            host: sn.host_name,
            port: sn.port.unwrap_or(0) as u16,
            start_code: sn.start_code.unwrap_or(0),
        }))
    }

    /// The data of znode `child` of the parent, `None` when it does not exist.
    fn data(&self, child: &str) -> Result<Option<Vec<u8>>, ZkError> {
        let path = self.config.path(child);
        match self.rt.block_on(self.client.get_data(&path)) {
            Ok((data, _)) => Ok(Some(data)),
            Err(zk::Error::NoNode) => Ok(None),
            Err(e) => Err(ZkError::Op {
                op: "get",
                path,
                source: e,
            }),
        }
    }

    /// The server names listed under znode `child` (`rs`, `backup-masters`): each child
    /// named `host,port,startcode`; others are skipped.
    fn server_names(&self, child: &str) -> Result<Vec<cairn_rpc::pb::ServerName>, ZkError> {
        let path = self.config.path(child);
        let names = match self.rt.block_on(self.client.get_children(&path)) {
            Ok((names, _)) => names,
            Err(zk::Error::NoNode) => Vec::new(),
            Err(e) => {
                return Err(ZkError::Op {
                    op: "list",
                    path,
                    source: e,
                })
            }
        };
        let mut out: Vec<_> = names.iter().filter_map(|n| parse_server_name(n)).collect();
        out.sort_by(|a, b| (&a.host_name, a.port).cmp(&(&b.host_name, b.port)));
        Ok(out)
    }

    /// The cluster id the master wrote (`/hbase/hbaseid`).
    pub fn cluster_id(&self) -> Result<Option<String>, ZkError> {
        let path = self.config.path("hbaseid");
        self.data("hbaseid")?
            .map(|d| {
                znode::parse_cluster_id(&d).map_err(|e| ZkError::Thread(format!("{path}: {e}")))
            })
            .transpose()
    }

    /// Where `hbase:meta` is open (`/hbase/meta-region-server`), if assigned.
    pub fn meta_location(&self) -> Result<Option<cairn_rpc::pb::ServerName>, ZkError> {
        let path = self.config.path("meta-region-server");
        self.data("meta-region-server")?
            .map(|d| {
                znode::parse_meta_region_server(&d)
                    .map(|m| m.server)
                    .map_err(|e| ZkError::Thread(format!("{path}: {e}")))
            })
            .transpose()
    }

    /// The backup masters (`/hbase/backup-masters`).
    pub fn backup_masters(&self) -> Result<Vec<cairn_rpc::pb::ServerName>, ZkError> {
        self.server_names("backup-masters")
    }

    /// The live region servers (`/hbase/rs`).
    pub fn region_servers(&self) -> Result<Vec<cairn_rpc::pb::ServerName>, ZkError> {
        self.server_names("rs")
    }

    /// Waits (polling) until a master has registered, at most `timeout`, or until `stop`.
    pub fn wait_for_master(
        &self,
        timeout: Duration,
        stop: &AtomicBool,
    ) -> Result<Option<MasterAddress>, ZkError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(m) = self.master()? {
                return Ok(Some(m));
            }
            if Instant::now() >= deadline || stop.load(Ordering::Acquire) || self.lost() {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Runs `on_down` once when `/hbase/running` goes away: the master's cluster shutdown
    /// (`Admin.shutdown`, `stop-hbase.sh`), on which HBase's region servers stop. Watched
    /// from now on; a znode missing already counts as down only once it has been seen.
    pub fn on_cluster_down(&self, on_down: impl FnOnce() + Send + 'static) {
        let client = self.client.clone();
        let path = self.config.path("running");
        self.rt.spawn(async move {
            let mut seen = false;
            loop {
                let Ok((stat, watcher)) = client.check_and_watch_stat(&path).await else {
                    // The session ended: that has its own handling.
                    return;
                };
                match stat {
                    Some(_) => seen = true,
                    None if seen => {
                        on_down();
                        return;
                    }
                    None => {}
                }
                watcher.changed().await;
            }
        });
    }

    /// Creates this server's ephemeral `/hbase/rs/<server name>`, as HBase's region server
    /// does once the master has accepted it.
    pub fn register(&self, identity: &Identity) -> Result<(), ZkError> {
        let path = self.config.path(&format!("rs/{}", identity.server_name()));
        let info = cairn_rpc::pb::RegionServerInfo {
            version_info: Some(crate::cluster::master_link::member_version()),
            ..region_server_znode(identity)
        };
        let data = znode::encode(
            &format!("regionserver:{}", identity.location.port),
            rand::random(),
            &info,
        );
        let ephemeral = zk::CreateMode::Ephemeral.with_acls(zk::Acls::anyone_all());
        let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
        self.rt.block_on(async {
            let parent = self.config.path("rs");
            match self.client.create(&parent, &[], &persistent).await {
                Ok(_) | Err(zk::Error::NodeExists) => {}
                Err(e) => {
                    return Err(ZkError::Op {
                        op: "create",
                        path: parent,
                        source: e,
                    })
                }
            }
            self.client
                .create(&path, &data, &ephemeral)
                .await
                .map(|_| ())
                .map_err(|e| ZkError::Op {
                    op: "create",
                    path: path.clone(),
                    source: e,
                })
        })
    }

    /// Ends the session: the ephemeral znode goes with it, which the master takes as this
    /// server having stopped (after an orderly stop it holds no regions).
    pub fn close(self) {
        self.lost.store(true, Ordering::Release);
        let Membership { rt, client, .. } = self;
        rt.block_on(super::registration::close(client));
        rt.shutdown_timeout(Duration::from_secs(2));
    }
}

/// A server name as HBase writes it in znode names, `host,port,startcode`.
fn parse_server_name(name: &str) -> Option<cairn_rpc::pb::ServerName> {
    let mut parts = name.rsplitn(3, ',');
    let start_code = parts.next()?.parse().ok()?;
    let port: u16 = parts.next()?.parse().ok()?;
    let host = parts.next().filter(|h| !h.is_empty())?;
    Some(cairn_rpc::pb::ServerName {
        host_name: host.to_string(),
        port: Some(u32::from(port)),
        start_code: Some(start_code),
    })
}

#[cfg(test)]
mod tests {
    use super::parse_server_name;

    #[test]
    fn server_names_parse_as_hbase_writes_them() {
        let sn = parse_server_name("rs1.example.com,16020,1700000000000").unwrap();
        assert_eq!(sn.host_name, "rs1.example.com");
        assert_eq!(sn.port, Some(16020));
        assert_eq!(sn.start_code, Some(1_700_000_000_000));
        for bad in ["", "h,1", ",16020,1", "h,port,1", "h,16020,x", "h,70000,1"] {
            assert!(parse_server_name(bad).is_none(), "{bad}");
        }
    }
}
