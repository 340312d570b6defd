//! The ZooKeeper session of a registered `cairn serve`: connect, write the znodes, keep them
//! through session expiry, remove them at an orderly stop.
//!
//! The client (`zookeeper-client`) is async and spawns its session task on the current tokio
//! runtime; here that is a current-thread runtime on a thread of its own, kept running (so
//! the session pings) until [`Registration::stop`]. The rest of the server only sees the
//! blocking [`Registration::start`] and [`Registration::stop`].
//!
//! The master znode is taken as HBase's `ActiveMasterManager` takes it: created as an
//! ephemeral node; if one exists and names this server's own host and port, it is an earlier
//! incarnation killed before its session expired, so it is deleted and taken over; if it names
//! another server, cairn waits for it to go, up to the session timeout, then gives up.

use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cairn_rpc::pb;
use tokio::sync::oneshot;
use zookeeper_client as zk;

use super::{znode, Identity, ZkConfig, ZkError};
use crate::rpc::meta::ServerNamePb;

/// The empty persistent znodes an HBase master creates under the base znode.
const BASE_CHILDREN: &[&str] = &["rs", "draining", "table", "splitWAL", "backup-masters"];

/// Longest pause between attempts to reach ZooKeeper.
const RETRY_PAUSE: Duration = Duration::from_secs(1);

/// How long an orderly stop may spend removing znodes and closing the session.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// The RPC version HBase writes into its location znodes (`HConstants.RPC_CURRENT_VERSION`).
const RPC_VERSION: u32 = 0;

/// A registration in ZooKeeper, kept until [`Registration::stop`] (or drop).
pub struct Registration {
    connect_string: String,
    parent: String,
    session_id: i64,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<Result<(), ZkError>>>,
}

impl Registration {
    /// Connects to the quorum and writes every znode, blocking until done. Waits at most the
    /// session timeout for ZooKeeper to answer, and as long again for another master's znode
    /// to go.
    pub fn start(config: ZkConfig, identity: Identity) -> Result<Registration, ZkError> {
        let connect_string = config.connect_string();
        let parent = config.parent.clone();
        let (ready_tx, ready_rx) = mpsc::channel();
        let (stop_tx, stop_rx) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("cairn-zookeeper".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_time()
                    .build()
                    .map_err(|e| ZkError::Thread(format!("starting its runtime: {e}")));
                let rt = match rt {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return Ok(());
                    }
                };
                rt.block_on(session(config, identity, ready_tx, stop_rx))
            })
            .map_err(|e| ZkError::Thread(e.to_string()))?;
        match ready_rx.recv() {
            Ok(Ok(session_id)) => Ok(Registration {
                connect_string,
                parent,
                session_id,
                stop: Some(stop_tx),
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => Err(match thread.join() {
                Ok(Err(e)) => e,
                _ => ZkError::Thread("ended before registering".into()),
            }),
        }
    }

    /// The connect string registered at (hosts with ports, chroot).
    pub fn connect_string(&self) -> &str {
        &self.connect_string
    }

    /// The base znode.
    pub fn parent(&self) -> &str {
        &self.parent
    }

    /// The first session's id (a new one follows a session expiry).
    pub fn session_id(&self) -> i64 {
        self.session_id
    }

    /// Removes the master, meta location, running and region server znodes (the cluster id
    /// stays, as HBase leaves it) and closes the session.
    pub fn stop(mut self) -> Result<(), ZkError> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Result<(), ZkError> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        match self.thread.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err(ZkError::Thread("panicked".into()))),
            None => Ok(()),
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Err(e) = self.stop_inner() {
            tracing::warn!("unregistering from zookeeper: {e}");
        }
    }
}

/// The registration thread's whole life: register, tell the starter, keep registered until
/// told to stop, unregister.
async fn session(
    config: ZkConfig,
    identity: Identity,
    ready: mpsc::Sender<Result<i64, ZkError>>,
    stop: oneshot::Receiver<()>,
) -> Result<(), ZkError> {
    let client = match register(&config, &identity).await {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(e));
            return Ok(());
        }
    };
    let _ = ready.send(Ok(client.session_id().0));
    let shared = Arc::new(tokio::sync::Mutex::new(client));
    let keeper = tokio::spawn(keep_registered(
        shared.clone(),
        config.clone(),
        identity.clone(),
    ));
    // A dropped sender means the same as a stop.
    let _ = stop.await;
    keeper.abort();
    let _ = keeper.await;
    let client = match Arc::try_unwrap(shared) {
        Ok(m) => m.into_inner(),
        Err(shared) => shared.lock().await.clone(),
    };
    let result =
        match tokio::time::timeout(STOP_TIMEOUT, unregister(&client, &config, &identity)).await {
            Ok(r) => r,
            Err(_) => Err(ZkError::Connect {
                quorum: config.connect_string(),
                waited: STOP_TIMEOUT,
                reason: "removing the znodes timed out".into(),
            }),
        };
    close(client).await;
    result
}

/// Watches the session; when it ends (expired, or closed by the server) the ephemeral znodes
/// are gone with it, so a new session writes them again.
async fn keep_registered(
    shared: Arc<tokio::sync::Mutex<zk::Client>>,
    config: ZkConfig,
    identity: Identity,
) {
    loop {
        let mut watcher = shared.lock().await.state_watcher();
        let mut state = watcher.peek_state();
        while !state.is_terminated() {
            state = watcher.changed().await;
        }
        tracing::warn!(
            "zookeeper session {state:?} (quorum {}): registering again in a new session",
            config.connect_string()
        );
        // Retried every second until it works; the first failure is logged, not each.
        let mut logged = false;
        loop {
            match register(&config, &identity).await {
                Ok(client) => {
                    tracing::info!(
                        "registered in zookeeper again (session 0x{:x})",
                        client.session_id().0
                    );
                    *shared.lock().await = client;
                    break;
                }
                Err(e) => {
                    if !logged {
                        tracing::warn!("registering in zookeeper again: {e}; retrying");
                        logged = true;
                    }
                    tokio::time::sleep(RETRY_PAUSE).await;
                }
            }
        }
    }
}

/// Ends the session and waits (briefly) until the server has closed it, so the ephemeral
/// znodes are gone by the time the process exits.
pub(super) async fn close(client: zk::Client) {
    let mut watcher = client.state_watcher();
    drop(client);
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while !watcher.changed().await.is_terminated() {}
    })
    .await;
}

fn op<'a>(op: &'static str, path: &'a str) -> impl FnOnce(zk::Error) -> ZkError + 'a {
    move |source| ZkError::Op {
        op,
        path: path.to_string(),
        source,
    }
}

fn master_identifier(identity: &Identity) -> String {
    format!("master:{}", identity.location.port)
}

/// `/hbase/master`'s content.
pub fn master_znode(identity: &Identity) -> pb::Master {
    pb::Master {
        master: identity.location.server_name(),
        rpc_version: Some(RPC_VERSION),
        info_port: Some(identity.info_port.map_or(0, u32::from)),
    }
}

/// `/hbase/meta-region-server`'s content: meta is open here.
pub fn meta_znode(identity: &Identity) -> pb::MetaRegionServer {
    pb::MetaRegionServer {
        server: identity.location.server_name(),
        rpc_version: Some(RPC_VERSION),
        state: Some(pb::region_state::State::Open as i32),
    }
}

/// `/hbase/rs/<server name>`'s content. The version is the HBase version cairn's RPC
/// reports (the `ClusterStatus` of `MasterService`), so tools comparing versions see one.
pub fn region_server_znode(identity: &Identity) -> pb::RegionServerInfo {
    pb::RegionServerInfo {
        info_port: Some(identity.info_port.map_or(-1, i32::from)),
        version_info: Some(cairn_rpc::client::version_info()),
    }
}

/// `/hbase/running`'s content: the start time as Java's `Date.toString` prints it (in UTC).
pub fn running_znode(start_ms: u64) -> pb::ClusterUp {
    let date = i64::try_from(start_ms)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map(|d| d.format("%a %b %d %H:%M:%S UTC %Y").to_string())
        .unwrap_or_default();
    pb::ClusterUp { start_date: date }
}

/// A session with every znode written.
async fn register(config: &ZkConfig, identity: &Identity) -> Result<zk::Client, ZkError> {
    let client = connect(config).await?;
    let open = zk::Acls::anyone_all();
    let persistent = zk::CreateMode::Persistent.with_acls(open);
    let ephemeral = zk::CreateMode::Ephemeral.with_acls(open);
    let master_id = master_identifier(identity);

    client
        .mkdir(&config.parent, &persistent)
        .await
        .map_err(op("create", &config.parent))?;
    for child in BASE_CHILDREN {
        let path = config.path(child);
        match client.create(&path, &[], &persistent).await {
            Ok(_) | Err(zk::Error::NodeExists) => {}
            Err(e) => return Err(op("create", &path)(e)),
        }
    }

    take_master(&client, config, identity).await?;

    let id = pb::ClusterId {
        cluster_id: identity.cluster_id.clone(),
    };
    put(
        &client,
        &config.path("hbaseid"),
        &znode::encode(&master_id, rand::random(), &id),
    )
    .await?;
    put(
        &client,
        &config.path("running"),
        &znode::encode(&master_id, rand::random(), &running_znode(now_ms())),
    )
    .await?;

    let rs_path = config.path(&format!("rs/{}", identity.server_name()));
    let rs_data = znode::encode(
        &format!("regionserver:{}", identity.location.port),
        rand::random(),
        &region_server_znode(identity),
    );
    loop {
        match client.create(&rs_path, &rs_data, &ephemeral).await {
            Ok(_) => break,
            Err(zk::Error::NodeExists) => {
                // The same start code in another session: only a session of ours that ended
                // while its znode was being written; replace it.
                match client.delete(&rs_path, None).await {
                    Ok(()) | Err(zk::Error::NoNode) => continue,
                    Err(e) => return Err(op("delete", &rs_path)(e)),
                }
            }
            Err(e) => return Err(op("create", &rs_path)(e)),
        }
    }

    // Last, so clients are sent here only once the rest is in place.
    put(
        &client,
        &config.path("meta-region-server"),
        &znode::encode(&master_id, rand::random(), &meta_znode(identity)),
    )
    .await?;
    Ok(client)
}

/// A new session, retried until the session timeout.
pub(super) async fn connect(config: &ZkConfig) -> Result<zk::Client, ZkError> {
    let quorum = config.connect_string();
    let waited = config.session_timeout;
    let deadline = Instant::now() + waited;
    let failed = |reason: String| ZkError::Connect {
        quorum: quorum.clone(),
        waited,
        reason,
    };
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let attempt = zk::Client::connector()
            .with_session_timeout(config.session_timeout)
            .with_fail_eagerly()
            .connect(&quorum);
        let reason = match tokio::time::timeout(remaining, attempt).await {
            Ok(Ok(client)) => return Ok(client),
            // A connect string that cannot work: retrying would not help.
            Ok(Err(e @ zk::Error::BadArguments(_))) => return Err(failed(e.to_string())),
            Ok(Err(e)) => e.to_string(),
            Err(_) => "timed out".to_string(),
        };
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(failed(reason));
        }
        tokio::time::sleep(remaining.min(RETRY_PAUSE)).await;
    }
}

/// Writes a persistent znode, creating it if missing.
async fn put(client: &zk::Client, path: &str, data: &[u8]) -> Result<(), ZkError> {
    let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    loop {
        match client.set_data(path, data, None).await {
            Ok(_) => return Ok(()),
            Err(zk::Error::NoNode) => {}
            Err(e) => return Err(op("set", path)(e)),
        }
        match client.create(path, data, &persistent).await {
            Ok(_) => return Ok(()),
            // Created meanwhile: set it.
            Err(zk::Error::NodeExists) => {}
            Err(e) => return Err(op("create", path)(e)),
        }
    }
}

/// Who a master znode names, and whether that is this server's host and port.
fn master_holder(data: &[u8], identity: &Identity) -> (String, bool) {
    match znode::parse_master(data) {
        Ok(m) => {
            let sn = &m.master;
            let port = sn.port.unwrap_or(0);
            let ours = sn.host_name.eq_ignore_ascii_case(&identity.location.host)
                && port == u32::from(identity.location.port);
            (
                format!("{},{},{}", sn.host_name, port, sn.start_code.unwrap_or(0)),
                ours,
            )
        }
        Err(e) => (format!("<unreadable: {e}>"), false),
    }
}

/// Creates the ephemeral master znode, taking it over from an earlier incarnation at the same
/// address, or waiting (up to the session timeout) for another master's to go.
async fn take_master(
    client: &zk::Client,
    config: &ZkConfig,
    identity: &Identity,
) -> Result<(), ZkError> {
    let path = config.path("master");
    let data = znode::encode(
        &master_identifier(identity),
        rand::random(),
        &master_znode(identity),
    );
    let ephemeral = zk::CreateMode::Ephemeral.with_acls(zk::Acls::anyone_all());
    let mut waiting_since: Option<Instant> = None;
    loop {
        match client.create(&path, &data, &ephemeral).await {
            Ok(_) => return Ok(()),
            Err(zk::Error::NodeExists) => {}
            Err(e) => return Err(op("create", &path)(e)),
        }
        let (existing, stat, watcher) = match client.get_and_watch_data(&path).await {
            Ok(x) => x,
            Err(zk::Error::NoNode) => continue,
            Err(e) => return Err(op("get", &path)(e)),
        };
        if stat.ephemeral_owner == client.session_id().0 {
            return Ok(());
        }
        let (holder, ours) = master_holder(&existing, identity);
        if ours {
            tracing::info!(
                "zookeeper {path}: replacing the znode of an earlier cairn at this address ({holder})"
            );
            match client.delete(&path, Some(stat.version)).await {
                Ok(()) | Err(zk::Error::NoNode) | Err(zk::Error::BadVersion) => continue,
                Err(e) => return Err(op("delete", &path)(e)),
            }
        }
        let since = *waiting_since.get_or_insert_with(|| {
            println!(
                "cairn serve: another master at {holder} is active; waiting for its znode {path} to go"
            );
            Instant::now()
        });
        let remaining = (since + config.session_timeout).saturating_duration_since(Instant::now());
        if remaining.is_zero()
            || tokio::time::timeout(remaining, watcher.changed())
                .await
                .is_err()
        {
            return Err(ZkError::AnotherMaster {
                path,
                holder,
                waited: config.session_timeout,
            });
        }
    }
}

/// Removes what routes clients here — the meta location and master (when they name this
/// server), the region server znode, `running` — trying each even when one fails.
async fn unregister(
    client: &zk::Client,
    config: &ZkConfig,
    identity: &Identity,
) -> Result<(), ZkError> {
    let mut first_error = None;
    let mut note = |r: Result<(), ZkError>| {
        if let Err(e) = r {
            tracing::warn!("unregistering: {e}");
            first_error.get_or_insert(e);
        }
    };
    let me = identity.location.server_name();
    let meta = config.path("meta-region-server");
    note(
        delete_if(client, &meta, |data, _| {
            znode::parse_meta_region_server(data).is_ok_and(|m| m.server == me)
        })
        .await,
    );
    let session = client.session_id().0;
    let master = config.path("master");
    note(delete_if(client, &master, |_, stat| stat.ephemeral_owner == session).await);
    let rs = config.path(&format!("rs/{}", identity.server_name()));
    note(delete_if(client, &rs, |_, _| true).await);
    let running = config.path("running");
    note(delete_if(client, &running, |_, _| true).await);
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Deletes `path` if it exists and `keep` says it is ours (a missing znode is fine).
async fn delete_if(
    client: &zk::Client,
    path: &str,
    ours: impl Fn(&[u8], &zk::Stat) -> bool,
) -> Result<(), ZkError> {
    let (data, stat) = match client.get_data(path).await {
        Ok(x) => x,
        Err(zk::Error::NoNode) => return Ok(()),
        Err(e) => return Err(op("get", path)(e)),
    };
    if !ours(&data, &stat) {
        return Ok(());
    }
    match client.delete(path, Some(stat.version)).await {
        Ok(()) | Err(zk::Error::NoNode) => Ok(()),
        Err(e) => Err(op("delete", path)(e)),
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zookeeper::Location;

    fn me() -> Identity {
        Identity {
            location: Location {
                host: "127.0.0.1".into(),
                port: 16020,
                start_code: 1_764_115_200_000,
            },
            cluster_id: "cid".into(),
            info_port: Some(9095),
        }
    }

    #[test]
    fn running_date_is_javas_date_format() {
        // 2025-11-26T00:00:00Z was a Wednesday.
        assert_eq!(
            running_znode(1_764_115_200_000).start_date,
            "Wed Nov 26 00:00:00 UTC 2025"
        );
    }

    #[test]
    fn a_master_znode_at_our_address_is_ours() {
        let mut earlier = me();
        earlier.location.start_code -= 5000;
        let data = znode::encode("master:16020", 1, &master_znode(&earlier));
        let (holder, ours) = master_holder(&data, &me());
        assert!(ours);
        assert_eq!(holder, "127.0.0.1,16020,1764115195000");
        let mut other = me();
        other.location.port = 16000;
        let data = znode::encode("master:16000", 1, &master_znode(&other));
        assert!(!master_holder(&data, &me()).1);
        let (holder, ours) = master_holder(b"garbage", &me());
        assert!(!ours && holder.contains("unreadable"), "{holder}");
    }

    #[test]
    fn znode_contents() {
        let m = master_znode(&me());
        assert_eq!(m.rpc_version, Some(0));
        assert_eq!(m.info_port, Some(9095));
        let meta = meta_znode(&me());
        assert_eq!(meta.state, Some(3), "RegionState.State.OPEN is 3");
        let mut no_http = me();
        no_http.info_port = None;
        assert_eq!(region_server_znode(&no_http).info_port, Some(-1));
        assert_eq!(master_znode(&no_http).info_port, Some(0));
    }
}
