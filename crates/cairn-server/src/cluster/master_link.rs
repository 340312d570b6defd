//! This region server's calls to the active master's `RegionServerStatusService`: start-up,
//! load reports, region state transitions, fatal errors. One connection, re-opened to
//! whichever master ZooKeeper names when a call fails.

use cairn_rpc::client::{ClientError, RpcClient};
use cairn_rpc::pb;
use prost::Message;

use crate::zookeeper::{MasterAddress, Membership};

/// The service region servers call on the master.
pub const SERVICE: &str = "RegionServerStatusService";

/// The HBase version a cairn region server gives its master (connection headers, its
/// `/hbase/rs` znode): 2.0.0, older than any HBase 2.x region server beside it. HBase's
/// master keeps its system tables (`hbase:meta`, `hbase:namespace`) on the region servers of
/// the highest version (the rule for rolling upgrades), which keeps meta, which cairn does not
/// open yet, off cairn; and at 2.0 or above the master handles a region server's split
/// requests itself.
pub fn member_version() -> pb::VersionInfo {
    pb::VersionInfo {
        version: "2.0.0-cairn".into(),
        version_major: Some(2),
        version_minor: Some(0),
        ..cairn_rpc::client::version_info()
    }
}

/// A connection to the active master, opened on first use.
pub struct MasterLink {
    client: Option<(MasterAddress, RpcClient)>,
}

/// Why a call to the master failed.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// ZooKeeper names no master.
    #[error("no active master registered in zookeeper")]
    NoMaster,
    /// Reading `/hbase/master` failed.
    #[error(transparent)]
    ZooKeeper(#[from] crate::zookeeper::ZkError),
    /// The call failed (connection, or the master's exception).
    #[error(transparent)]
    Call(#[from] ClientError),
}

/// Master exceptions that mean this server must stop (`HRegionServer.tryRegionServerReport`).
const FATAL_FROM_MASTER: [&str; 2] = [
    "org.apache.hadoop.hbase.YouAreDeadException",
    "org.apache.hadoop.hbase.ClockOutOfSyncException",
];

impl LinkError {
    /// Whether the master's answer means this server must stop (declared dead, or a clock
    /// too far from the master's).
    pub fn is_fatal(&self) -> bool {
        self.remote_class()
            .is_some_and(|c| FATAL_FROM_MASTER.contains(&c))
    }

    /// The master's exception class, when it answered with one.
    pub fn remote_class(&self) -> Option<&str> {
        match self {
            LinkError::Call(ClientError::Remote { class, .. }) => Some(class),
            _ => None,
        }
    }
}

impl Default for MasterLink {
    fn default() -> Self {
        MasterLink::new()
    }
}

impl MasterLink {
    /// A link that connects on its first call.
    pub fn new() -> MasterLink {
        MasterLink { client: None }
    }

    /// The master the link is connected to.
    pub fn master(&self) -> Option<&MasterAddress> {
        self.client.as_ref().map(|(m, _)| m)
    }

    /// Calls `method` on the active master; on a failed connection or a call to a master
    /// that is no longer active, the next call connects again to the one ZooKeeper names.
    pub fn call<R: Message + Default>(
        &mut self,
        zk: &Membership,
        method: &str,
        param: &impl Message,
    ) -> Result<R, LinkError> {
        if self.client.is_none() {
            let master = zk.master()?.ok_or(LinkError::NoMaster)?;
            let client = RpcClient::connect_as(&master.addr(), SERVICE, member_version())?;
            self.client = Some((master, client));
        }
        let (_, client) = self.client.as_mut().expect("connected above");
        match client.call::<R>(method, param) {
            Ok(answer) => Ok(answer.message),
            Err(e) => {
                // A broken connection, or a master that stopped being the active one
                // (`PleaseHoldException`, `ServerNotRunningYetException`): connect again.
                self.client = None;
                Err(e.into())
            }
        }
    }
}

/// `ReportRegionStateTransition` for one region.
pub fn transition(
    server: &pb::ServerName,
    code: pb::region_state_transition::TransitionCode,
    region: pb::RegionInfo,
    open_seq_num: Option<u64>,
    proc_id: i64,
    master_time: Option<i64>,
) -> pb::ReportRegionStateTransitionRequest {
    pb::ReportRegionStateTransitionRequest {
        server: server.clone(),
        transition: vec![pb::RegionStateTransition {
            transition_code: code as i32,
            region_info: vec![region],
            open_seq_num,
            proc_id: if proc_id >= 0 { vec![proc_id] } else { vec![] },
            initiating_master_active_time: master_time,
        }],
    }
}
