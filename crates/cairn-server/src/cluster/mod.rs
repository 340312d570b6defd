//! A region server of an HBase cluster (`cairn regionserver start`): it joins the active
//! HMaster as HBase's `HRegionServer` does, and holds the regions the master assigns it.
//!
//! **Owns:** the member's life — ZooKeeper session and `/hbase/rs/<server name>`
//! ([`crate::zookeeper::member`]), `RegionServerStartup`, the periodic `RegionServerReport`
//! with the load ([`load`]), running the master's open and close requests on a pool of
//! workers and reporting each with `ReportRegionStateTransition` (the procedure ids the
//! master sent), refusing the remote procedures cairn does not run yet with
//! `ReportProcedureDone`, and the orderly stop (every region closed, flushed and reported).
//!
//! **Does not own:** the regions themselves (cairn-region's [`RegionServer::open_assigned`],
//! [`RegionServer::close_assigned`]), the wire (the native RPC layer's `AdminService`
//! translates `ExecuteProcedures`, `OpenRegion`, `CloseRegion` into [`Member::submit`]).
//!
//! A lost ZooKeeper session, or a master that says this server is dead
//! (`YouAreDeadException`), aborts the server: the master is about to split its WAL and
//! reopen its regions elsewhere, so it must not take another write ([`Member::join`]'s
//! `on_abort`).

mod info;
pub mod load;
pub mod master_link;
mod process;
pub mod split_wal;

pub use process::{cluster_config, ClusterRegionServer};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cairn_region::{RegionInfo, RegionServer};
use cairn_rpc::pb;
use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;

use crate::rpc::meta::{region_info_pb, ServerNamePb};
use crate::zookeeper::{Identity, Membership, ZkConfig, ZkError};
use master_link::MasterLink;

use pb::region_state_transition::TransitionCode;

/// Where the native RPC layer finds the member once it has joined (set after the RPC
/// server is up: the master calls it as soon as it knows it).
pub type MemberSlot = Arc<OnceLock<Arc<Member>>>;

/// How the member talks to its cluster, with HBase's property names.
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// The quorum and base znode (`hbase.zookeeper.quorum`, `zookeeper.znode.parent`, ...).
    pub zk: ZkConfig,
    /// `hbase.regionserver.msginterval` (3 s): how often the load is reported.
    pub msg_interval: Duration,
    /// `hbase.regionserver.executor.openregion.threads` (3): regions opened at once.
    pub open_threads: usize,
    /// How long start-up waits for a master to register and accept this server
    /// (`cairn.regionserver.master.wait`, 10 min).
    pub master_wait: Duration,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            zk: ZkConfig::default(),
            msg_interval: Duration::from_secs(3),
            open_threads: 3,
            master_wait: Duration::from_secs(600),
        }
    }
}

/// Work the master handed over.
#[derive(Debug)]
pub enum Assignment {
    /// Open a region (`OpenRegionRequest.RegionOpenInfo`).
    Open {
        /// The region as the master sent it.
        region: pb::RegionInfo,
        /// `open_proc_id`, reported back (-1: none).
        proc_id: i64,
        /// The sending master's `initiating_master_active_time`, echoed in the report so a
        /// newer master can tell a report meant for an older one.
        master_time: Option<i64>,
    },
    /// Close a region (`CloseRegionRequest`).
    Close {
        /// The encoded region name.
        encoded: String,
        /// `close_proc_id`, reported back (-1: none).
        proc_id: i64,
        /// As for [`Assignment::Open`].
        master_time: Option<i64>,
    },
    /// A remote procedure (`RemoteProcedureRequest`): a WAL split runs
    /// ([`split_wal`]); any other is reported failed, so the master gives it to another
    /// server.
    Remote {
        /// The procedure id.
        proc_id: u64,
        /// Its class (`...SplitWALCallable`, ...).
        class: String,
        /// Its parameter.
        data: Option<Vec<u8>>,
        /// As for [`Assignment::Open`].
        master_time: Option<i64>,
    },
    /// Ask the master to split a region that grew past its policy's size (HBase's
    /// `SplitRequest`: `READY_TO_SPLIT` with the parent and the two daughters it proposes;
    /// the master runs `SplitTableRegionProcedure`, closing and opening through this server).
    RequestSplit {
        /// The parent.
        region: RegionInfo,
        /// The row the daughters meet at.
        row: Vec<u8>,
    },
    /// Ends a worker.
    Stop,
}

/// Why joining failed.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// ZooKeeper could not be reached, or the znode not written.
    #[error(transparent)]
    ZooKeeper(#[from] ZkError),
    /// No master accepted this server in time.
    #[error("no master accepted this region server within {waited:?}: {last}")]
    NoMaster {
        /// How long it waited.
        waited: Duration,
        /// The last failure.
        last: String,
    },
    /// The master told this server to stop (e.g. `ClockOutOfSyncException`).
    #[error("the master refused this region server: {0}")]
    Refused(String),
    /// A thread could not start.
    #[error("starting the member's threads: {0}")]
    Thread(String),
}

/// A joined region server.
pub struct Member {
    rs: Arc<RegionServer>,
    zk: Membership,
    link: Mutex<MasterLink>,
    server: pb::ServerName,
    config: ClusterConfig,
    info_port: Option<u16>,
    work: Sender<Assignment>,
    stop: AtomicBool,
    threads: Mutex<Vec<JoinHandle<()>>>,
    aborted: OnceLock<String>,
    on_abort: AbortHook,
    /// When the last load report was made (ms); the server's start before the first.
    last_report: std::sync::atomic::AtomicU64,
    /// Regions a split was asked for, and when (ms): asked again only after a minute.
    split_asked: Mutex<std::collections::HashMap<String, u64>>,
    /// Why someone asked the server to stop (`StopServer`, as `Admin.stopRegionServer`
    /// sends it, or the cluster's shutdown): the process then stops as at SIGTERM.
    stop_requested: OnceLock<String>,
    /// The master shut the cluster down (`/hbase/running` went): nobody waits for region
    /// transitions any more, so closes are not reported.
    cluster_down: AtomicBool,
}

impl std::fmt::Debug for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Member")
            .field("server", &self.server)
            .field("aborted", &self.aborted.get())
            .finish()
    }
}

/// What runs when the server must stop at once.
struct AbortHook(Box<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for AbortHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AbortHook")
    }
}

impl Member {
    /// Joins the cluster as `identity` (the RPC server's host, port and start code): opens a
    /// ZooKeeper session, waits for the active master, calls `RegionServerStartup` until
    /// the master accepts (it answers `PleaseHoldException` while it initializes), writes
    /// `/hbase/rs/<server name>`, then starts the load reports and the workers. `on_abort`
    /// runs once when the server must stop at once (session lost, declared dead).
    pub fn join(
        rs: Arc<RegionServer>,
        identity: &Identity,
        config: ClusterConfig,
        on_abort: impl Fn(&str) + Send + Sync + 'static,
    ) -> Result<Arc<Member>, JoinError> {
        let on_abort: Arc<dyn Fn(&str) + Send + Sync> = Arc::new(on_abort);
        let lost = on_abort.clone();
        let zk = Membership::connect(config.zk.clone(), move |why| {
            tracing::error!("aborting: {why}; the master will split this server's WAL");
            lost(&why);
        })?;
        let server = identity.location.server_name();
        let mut link = MasterLink::new();
        let deadline = Instant::now() + config.master_wait;
        let never = AtomicBool::new(false);
        let mut last = String::from("no master registered");
        loop {
            if zk
                .wait_for_master(deadline.saturating_duration_since(Instant::now()), &never)?
                .is_none()
            {
                return Err(JoinError::NoMaster {
                    waited: config.master_wait,
                    last,
                });
            }
            let req = pb::RegionServerStartupRequest {
                port: u32::from(identity.location.port),
                server_start_code: identity.location.start_code,
                server_current_time: now_ms(),
                use_this_hostname_instead: Some(identity.location.host.clone()),
            };
            match link.call::<pb::RegionServerStartupResponse>(&zk, "RegionServerStartup", &req) {
                Ok(resp) => {
                    for e in &resp.map_entries {
                        tracing::debug!("master's configuration: {} = {}", e.name, e.value);
                    }
                    break;
                }
                Err(e) if e.is_fatal() => {
                    return Err(JoinError::Refused(e.to_string()));
                }
                Err(e) => {
                    // The master answers PleaseHoldException until it has initialized.
                    tracing::debug!("RegionServerStartup: {e}");
                    last = e.to_string();
                }
            }
            if Instant::now() >= deadline {
                return Err(JoinError::NoMaster {
                    waited: config.master_wait,
                    last,
                });
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        zk.register(identity)?;
        tracing::info!(
            "joined the cluster as {} (master {})",
            identity.server_name(),
            link.master().map(|m| m.addr()).unwrap_or_default()
        );
        let (tx, rx) = crossbeam_channel::unbounded();
        let member = Arc::new(Member {
            rs,
            zk,
            link: Mutex::new(link),
            server,
            info_port: identity.info_port,
            work: tx,
            stop: AtomicBool::new(false),
            threads: Mutex::new(Vec::new()),
            aborted: OnceLock::new(),
            on_abort: AbortHook(Box::new(move |why| on_abort(why))),
            last_report: std::sync::atomic::AtomicU64::new(identity.location.start_code),
            split_asked: Mutex::new(std::collections::HashMap::new()),
            stop_requested: OnceLock::new(),
            cluster_down: AtomicBool::new(false),
            config,
        });
        member.start_threads(rx)?;
        let down = Arc::downgrade(&member);
        member.zk.on_cluster_down(move || {
            if let Some(m) = down.upgrade() {
                m.cluster_down.store(true, Ordering::Release);
                m.request_stop("the cluster is shutting down (/hbase/running is gone)");
            }
        });
        let weak = Arc::downgrade(&member);
        member.rs.set_split_requester(Box::new(move |region, row| {
            if let Some(m) = weak.upgrade() {
                m.ask_split(region, row);
            }
        }));
        // The first report at once: the master counts this server in only after it.
        member.report_load();
        Ok(member)
    }

    fn start_threads(self: &Arc<Self>, rx: Receiver<Assignment>) -> Result<(), JoinError> {
        let mut threads = self.threads.lock();
        for i in 0..self.config.open_threads.max(1) {
            let m = Arc::downgrade(self);
            let rx = rx.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("cairn-assign-{i}"))
                    .spawn(move || {
                        while let Ok(work) = rx.recv() {
                            if matches!(work, Assignment::Stop) {
                                return;
                            }
                            let Some(m) = m.upgrade() else { return };
                            m.run(work);
                        }
                    })
                    .map_err(|e| JoinError::Thread(e.to_string()))?,
            );
        }
        let m = Arc::downgrade(self);
        let interval = self.config.msg_interval;
        threads.push(
            std::thread::Builder::new()
                .name("cairn-rs-report".into())
                .spawn(move || loop {
                    std::thread::park_timeout(interval);
                    let Some(m) = m.upgrade() else { return };
                    if m.stop.load(Ordering::Acquire) {
                        return;
                    }
                    m.report_load();
                })
                .map_err(|e| JoinError::Thread(e.to_string()))?,
        );
        Ok(())
    }

    /// The ZooKeeper session: where the cluster's master, meta and region servers are.
    pub fn zookeeper(&self) -> &Membership {
        &self.zk
    }

    /// This server's name as the master knows it.
    pub fn server_name(&self) -> &pb::ServerName {
        &self.server
    }

    /// Why the server aborted, once it has.
    pub fn aborted(&self) -> Option<&str> {
        self.aborted.get().map(String::as_str)
    }

    /// Asks for the orderly stop (`AdminService.StopServer`); the process notices it through
    /// [`Member::stop_requested`].
    pub fn request_stop(&self, reason: &str) {
        if self.stop_requested.set(reason.to_string()).is_ok() {
            tracing::info!("asked to stop: {reason}");
        }
    }

    /// Why the server was asked to stop, once it has been.
    pub fn stop_requested(&self) -> Option<&str> {
        self.stop_requested.get().map(String::as_str)
    }

    /// Queues work the master sent; it runs on the workers and is reported when done.
    pub fn submit(&self, work: Assignment) {
        if self.stop.load(Ordering::Acquire) {
            return;
        }
        let _ = self.work.send(work);
    }

    /// Queues a split request for `region` at `row`, unless one was sent in the last
    /// minute (the policy asks after every flush and compaction until the master acts).
    fn ask_split(&self, region: &cairn_region::Region, row: Vec<u8>) {
        let now = now_ms();
        let mut asked = self.split_asked.lock();
        asked.retain(|_, at| now.saturating_sub(*at) < 60_000);
        if asked.contains_key(&region.info.encoded_name) {
            return;
        }
        asked.insert(region.info.encoded_name.clone(), now);
        drop(asked);
        self.submit(Assignment::RequestSplit {
            region: region.info.clone(),
            row,
        });
    }

    fn abort(&self, why: &str) {
        if self.aborted.set(why.to_string()).is_err() {
            return;
        }
        tracing::error!("aborting region server {}: {why}", self.server.host_name);
        let req = pb::ReportRsFatalErrorRequest {
            server: self.server.clone(),
            error_message: why.to_string(),
        };
        let _ = self.link.lock().call::<pb::ReportRsFatalErrorResponse>(
            &self.zk,
            "ReportRSFatalError",
            &req,
        );
        (self.on_abort.0)(why);
    }

    fn report_load(&self) {
        let now = now_ms();
        let since = self.last_report.swap(now, Ordering::AcqRel);
        let req = pb::RegionServerReportRequest {
            server: self.server.clone(),
            load: Some(load::server_load(&self.rs, self.info_port, since)),
        };
        let r = self.link.lock().call::<pb::RegionServerReportResponse>(
            &self.zk,
            "RegionServerReport",
            &req,
        );
        match r {
            Ok(_) => {}
            Err(e) if e.is_fatal() => {
                self.abort(&format!("the master declared this server dead: {e}"));
            }
            Err(e) => tracing::debug!("load report: {e}"),
        }
    }

    /// Calls `method` on the master until it answers, pausing longer after each failure (up
    /// to 2 s), or until `give_up` says so of a failure, which is then returned.
    fn call_master<R: prost::Message + Default>(
        &self,
        method: &str,
        req: &impl prost::Message,
        give_up: impl Fn(&master_link::LinkError) -> bool,
    ) -> Result<R, master_link::LinkError> {
        let mut pause = Duration::from_millis(100);
        loop {
            match self.link.lock().call::<R>(&self.zk, method, req) {
                Ok(r) => return Ok(r),
                Err(e) if give_up(&e) => return Err(e),
                Err(e) => tracing::debug!("{method}: {e}; retrying"),
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_secs(2));
        }
    }

    /// Reports a transition, retrying while the master cannot be reached (HBase's region
    /// server retries until it stops); false if the master refused it.
    fn report_transition(&self, req: &pb::ReportRegionStateTransitionRequest) -> bool {
        let down = || self.cluster_down.load(Ordering::Acquire);
        if down() {
            return false;
        }
        let r = self.call_master::<pb::ReportRegionStateTransitionResponse>(
            "ReportRegionStateTransition",
            req,
            |e| e.is_fatal() || down() || self.aborted().is_some() || self.zk.lost(),
        );
        match r {
            Ok(resp) => match resp.error_message {
                Some(m) => {
                    tracing::warn!("the master refused a region transition: {m}");
                    false
                }
                None => true,
            },
            Err(e) if e.is_fatal() => {
                self.abort(&format!("the master declared this server dead: {e}"));
                false
            }
            Err(_) => false,
        }
    }

    fn run(&self, work: Assignment) {
        match work {
            Assignment::Open {
                region,
                proc_id,
                master_time,
            } => self.open(region, proc_id, master_time),
            Assignment::Close {
                encoded,
                proc_id,
                master_time,
            } => self.close(&encoded, proc_id, master_time),
            Assignment::Remote {
                proc_id,
                class,
                data,
                master_time,
            } => {
                let outcome = if class == split_wal::SPLIT_WAL_CALLABLE {
                    self.split_wal(data.as_deref())
                } else {
                    Err(format!(
                        "cairn does not run the remote procedure {class} yet"
                    ))
                };
                self.report_procedure(proc_id, &class, outcome, master_time);
            }
            Assignment::RequestSplit { region, row } => {
                let now = now_ms();
                let a = RegionInfo::new(region.table.clone(), &region.start_key, &row, now);
                let b = RegionInfo::new(region.table.clone(), &row, &region.end_key, now);
                tracing::info!(
                    "asking the master to split {} at {}",
                    region.region_name(),
                    cairn_cell::Escaped(&row)
                );
                let req = pb::ReportRegionStateTransitionRequest {
                    server: self.server.clone(),
                    transition: vec![pb::RegionStateTransition {
                        transition_code: TransitionCode::ReadyToSplit as i32,
                        region_info: vec![
                            region_info_pb(&region),
                            region_info_pb(&a),
                            region_info_pb(&b),
                        ],
                        open_seq_num: None,
                        proc_id: vec![],
                        initiating_master_active_time: None,
                    }],
                };
                self.report_transition(&req);
            }
            Assignment::Stop => {}
        }
    }

    /// `ReportProcedureDone` for one remote procedure.
    fn report_procedure(
        &self,
        proc_id: u64,
        class: &str,
        outcome: Result<(), String>,
        master_time: Option<i64>,
    ) {
        let (status, error) = match outcome {
            Ok(()) => (pb::remote_procedure_result::Status::Success, None),
            Err(message) => {
                tracing::warn!("remote procedure {proc_id} ({class}) failed: {message}");
                (
                    pb::remote_procedure_result::Status::Error,
                    Some(pb::ForeignExceptionMessage {
                        source: Some(self.server.host_name.clone()),
                        generic_exception: Some(pb::GenericExceptionMessage {
                            class_name: Some("java.io.IOException".into()),
                            message: Some(message),
                            ..Default::default()
                        }),
                    }),
                )
            }
        };
        let req = pb::ReportProcedureDoneRequest {
            result: vec![pb::RemoteProcedureResult {
                proc_id,
                status: status as i32,
                error,
                initiating_master_active_time: master_time,
            }],
        };
        let r = self.call_master::<pb::ReportProcedureDoneResponse>(
            "ReportProcedureDone",
            &req,
            |_| self.aborted().is_some() || self.zk.lost() || self.stop.load(Ordering::Acquire),
        );
        if let Err(e) = r {
            tracing::warn!("reporting procedure {proc_id} ({class}): {e}");
        }
    }

    /// Splits one WAL file of a dead server into its regions' recovered edits.
    fn split_wal(&self, data: Option<&[u8]>) -> Result<(), String> {
        let param = split_wal::parameter(data)?;
        let (wal_fs, wal_root) = self.rs.wal_root();
        let path = cairn_wal::names::split_wal_file(&param.wal_path, &wal_root)?;
        // HDFS: the dead writer's lease, so the file's length is final.
        let _ = wal_fs.recover_lease(&path);
        let root = self.rs.root().to_path_buf();
        let fs = self.rs.fs().clone();
        let report = cairn_wal::split::split_file(
            &*wal_fs,
            &path,
            &*fs,
            |edit| split_wal::region_dir(&*fs, &root, &edit.table, &edit.region),
            |region| self.last_flushed(region),
        )
        .map_err(|e| format!("splitting {}: {e}", path.display()))?;
        if let Some(d) = &report.dropped {
            tracing::warn!("WAL split: {d}; the entries before it were split");
        }
        tracing::info!(
            "split {}: {} edits into {} recovered edits files, {} skipped",
            path.display(),
            report.edits_written,
            report.files.len(),
            report.edits_skipped
        );
        Ok(())
    }

    /// What the master says region `encoded` has flushed (0 when it does not know, so
    /// nothing is skipped).
    fn last_flushed(&self, encoded: &[u8]) -> u64 {
        let req = pb::GetLastFlushedSequenceIdRequest {
            region_name: encoded.to_vec(),
        };
        self.link
            .lock()
            .call::<pb::GetLastFlushedSequenceIdResponse>(
                &self.zk,
                "GetLastFlushedSequenceId",
                &req,
            )
            .map(|r| r.last_flushed_sequence_id)
            .unwrap_or(0)
    }

    fn open(&self, region: pb::RegionInfo, proc_id: i64, master_time: Option<i64>) {
        let opened = decode_region(&region).and_then(|info| {
            // Meta's cells sort by its own comparator, which cairn's stores do not have yet:
            // refused, the master opens it on another server.
            if info.table.namespace == "hbase" && info.table.qualifier == "meta" {
                return Err("hbase:meta is not served by cairn region servers yet".to_string());
            }
            self.rs
                .open_assigned(&info)
                .map_err(|e| format!("opening {}: {e}", info.region_name()))
        });
        let req = match opened {
            Ok(o) => {
                tracing::info!(
                    "opened region {} (open sequence id {}, {} recovered edits)",
                    region_name(&region),
                    o.open_sequence_id,
                    o.recovered_edits
                );
                master_link::transition(
                    &self.server,
                    TransitionCode::Opened,
                    region,
                    Some(o.open_sequence_id),
                    proc_id,
                    master_time,
                )
            }
            Err(e) => {
                tracing::warn!("{e}");
                master_link::transition(
                    &self.server,
                    TransitionCode::FailedOpen,
                    region,
                    None,
                    proc_id,
                    master_time,
                )
            }
        };
        self.report_transition(&req);
    }

    fn close(&self, encoded: &str, proc_id: i64, master_time: Option<i64>) {
        let Some(r) = self.rs.hosted_region(encoded) else {
            // Not here (closed already, or never opened): nothing to report, as HBase's
            // `UnassignRegionHandler` reports nothing for a region it does not hold.
            tracing::info!("asked to close {encoded}, which is not open here");
            return;
        };
        let info = region_info_pb(&r.info);
        drop(r);
        if let Err(e) = self.rs.close_assigned(encoded) {
            // An edit that cannot be flushed must not be lost: the master splits the WAL.
            self.abort(&format!("closing region {encoded} failed: {e}"));
            return;
        }
        tracing::info!("closed region {}", region_name(&info));
        self.report_transition(&master_link::transition(
            &self.server,
            TransitionCode::Closed,
            info,
            None,
            proc_id,
            master_time,
        ));
    }

    /// The orderly stop (SIGTERM): no more work is taken, every region is closed (flushed)
    /// and reported closed, the load reports end, and the ZooKeeper session closes. The
    /// caller then closes the region server (which leaves nothing in the WAL).
    pub fn stop(&self) {
        if self.stop.swap(true, Ordering::AcqRel) {
            return;
        }
        let threads: Vec<_> = self.threads.lock().drain(..).collect();
        for _ in 0..threads.len() {
            let _ = self.work.send(Assignment::Stop);
        }
        for t in &threads {
            t.thread().unpark();
        }
        for t in threads {
            let _ = t.join();
        }
        if self.aborted().is_some() {
            return;
        }
        for r in self.rs.hosted_regions() {
            self.close(&r.info.encoded_name.clone(), -1, None);
        }
    }

    /// Ends the ZooKeeper session (after [`Member::stop`] and the region server's close).
    pub fn leave(self: Arc<Self>) {
        match Arc::try_unwrap(self) {
            Ok(m) => m.zk.close(),
            Err(_) => tracing::debug!(
                "member still referenced at exit; its session ends with the process"
            ),
        }
    }
}

fn region_name(r: &pb::RegionInfo) -> String {
    decode_region(r)
        .map(|i| i.region_name())
        .unwrap_or_else(|_| format!("region id {}", r.region_id))
}

/// A region as the master names it, checked as every name a peer sends is (HBase's table
/// name rules); region replicas are not served.
pub fn decode_region(r: &pb::RegionInfo) -> Result<RegionInfo, String> {
    use prost::Message;
    if r.replica_id.unwrap_or(0) != 0 {
        return Err(format!(
            "region replica {} of region id {}: cairn serves no region replicas",
            r.replica_id.unwrap_or(0),
            r.region_id
        ));
    }
    let bytes = [&b"PBUF"[..], &r.encode_to_vec()].concat();
    cairn_region::layout::decode_region_info_bytes(
        &bytes,
        std::path::Path::new("the master's request"),
    )
    .map_err(|e| e.to_string())
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
