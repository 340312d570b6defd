//! Calls slower or larger than the operator's limits, as HBase's `RpcServer` reports them: a
//! `(responseTooSlow): {json}` or `(responseTooLarge): {json}` warning with HBase's fields
//! (`hbase.ipc.warn.response.time`, default 10 s; `hbase.ipc.warn.response.size`, default
//! 100 MiB; `-1` turns either off), and the most recent of them kept in a bounded ring
//! (`hbase.regionserver.slowlog.ringbuffer.size`, default 256) that the status page shows.
//! Both front ends (native RPC and Thrift) record into one log.
//!
//! The check is two comparisons on every call; only a call past a limit builds an entry.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use parking_lot::Mutex;

/// The limits and the ring's size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlowLogConfig {
    /// A call processed for longer than this is slow (`hbase.ipc.warn.response.time`);
    /// `None` never.
    pub warn_time: Option<Duration>,
    /// A call whose response is larger than this is large (`hbase.ipc.warn.response.size`);
    /// `None` never.
    pub warn_size: Option<u64>,
    /// How many recent slow or large calls are kept
    /// (`hbase.regionserver.slowlog.ringbuffer.size`).
    pub capacity: usize,
}

impl Default for SlowLogConfig {
    fn default() -> Self {
        // HBase's defaults (RpcServer.DEFAULT_WARN_RESPONSE_TIME/SIZE,
        // HConstants.DEFAULT_SLOW_LOG_RING_BUFFER_SIZE).
        SlowLogConfig {
            warn_time: Some(Duration::from_secs(10)),
            warn_size: Some(100 << 20),
            capacity: 256,
        }
    }
}

/// Why a call was recorded; a large response is named first, as HBase tags it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowKind {
    /// Its response passed `hbase.ipc.warn.response.size`.
    TooLarge,
    /// It ran longer than `hbase.ipc.warn.response.time`.
    TooSlow,
}

impl SlowKind {
    /// HBase's tag: `TooLarge` or `TooSlow`.
    pub fn tag(self) -> &'static str {
        match self {
            SlowKind::TooLarge => "TooLarge",
            SlowKind::TooSlow => "TooSlow",
        }
    }
}

/// One recorded call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlowCall {
    /// Why it was recorded.
    pub kind: SlowKind,
    /// When it started running.
    pub start: SystemTime,
    /// The front end: `HBase RPC` or `Thrift`.
    pub protocol: &'static str,
    /// The method (`Get`, `Multi`, `getRowWithColumns`, ...).
    pub method: String,
    /// What it asked for, shortly (region and row where the request names them).
    pub param: String,
    /// The client's address, when the front end knows it.
    pub client: String,
    /// Time running.
    pub processing: Duration,
    /// Time queued before it ran.
    pub queue: Duration,
    /// Bytes of its response.
    pub response_size: u64,
}

/// The log: the limits, the ring, and how many calls passed a limit since start.
#[derive(Debug)]
pub struct SlowLog {
    config: SlowLogConfig,
    recent: Mutex<VecDeque<SlowCall>>,
    recorded: AtomicU64,
}

impl Default for SlowLog {
    fn default() -> Self {
        SlowLog::new(SlowLogConfig::default())
    }
}

impl SlowLog {
    /// An empty log with these limits.
    pub fn new(config: SlowLogConfig) -> SlowLog {
        SlowLog {
            recent: Mutex::new(VecDeque::with_capacity(config.capacity.min(1024))),
            config,
            recorded: AtomicU64::new(0),
        }
    }

    /// The limits.
    pub fn config(&self) -> &SlowLogConfig {
        &self.config
    }

    /// Whether a call that ran `processing` and answered `response_size` bytes passes a
    /// limit, and which (a large response first, as HBase tags it).
    #[inline]
    pub fn check(&self, processing: Duration, response_size: u64) -> Option<SlowKind> {
        if self.config.warn_size.is_some_and(|l| response_size > l) {
            Some(SlowKind::TooLarge)
        } else if self.config.warn_time.is_some_and(|l| processing > l) {
            Some(SlowKind::TooSlow)
        } else {
            None
        }
    }

    /// Logs `call` as HBase does and keeps it, dropping the oldest kept call when full.
    pub fn record(&self, call: SlowCall) {
        self.recorded.fetch_add(1, Ordering::Relaxed);
        tracing::warn!("(response{}): {}", call.kind.tag(), json(&call));
        if self.config.capacity == 0 {
            return;
        }
        let mut recent = self.recent.lock();
        while recent.len() >= self.config.capacity {
            recent.pop_front();
        }
        recent.push_back(call);
    }

    /// The kept calls, newest first.
    pub fn recent(&self) -> Vec<SlowCall> {
        self.recent.lock().iter().rev().cloned().collect()
    }

    /// Calls that passed a limit since start (kept or not).
    pub fn recorded(&self) -> u64 {
        self.recorded.load(Ordering::Relaxed)
    }
}

/// HBase's warning body: `starttimems`, `processingtimems`, `queuetimems`, `responsesize`,
/// `client`, `class`, `method`, `call` and `param`.
fn json(call: &SlowCall) -> String {
    let ms = |d: Duration| d.as_millis() as u64;
    let start = call
        .start
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, ms);
    serde_json::json!({
        "starttimems": start,
        "processingtimems": ms(call.processing),
        "queuetimems": ms(call.queue),
        "responsesize": call.response_size,
        "client": call.client,
        "class": "HRegionServer",
        "method": call.method,
        "call": format!("{} ({})", call.method, call.protocol),
        "param": call.param,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(method: &str, ms: u64) -> SlowCall {
        SlowCall {
            kind: SlowKind::TooSlow,
            start: SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_000),
            protocol: "HBase RPC",
            method: method.into(),
            param: "region= t,,1.abc., row=r1".into(),
            client: "127.0.0.1:5000".into(),
            processing: Duration::from_millis(ms),
            queue: Duration::from_millis(2),
            response_size: 10,
        }
    }

    #[test]
    fn limits_are_exclusive_and_a_large_response_is_named_first() {
        let log = SlowLog::new(SlowLogConfig {
            warn_time: Some(Duration::from_millis(100)),
            warn_size: Some(1000),
            capacity: 4,
        });
        assert_eq!(log.check(Duration::from_millis(100), 1000), None);
        assert_eq!(
            log.check(Duration::from_millis(101), 10),
            Some(SlowKind::TooSlow)
        );
        assert_eq!(log.check(Duration::ZERO, 1001), Some(SlowKind::TooLarge));
        assert_eq!(
            log.check(Duration::from_secs(5), 5000),
            Some(SlowKind::TooLarge)
        );
    }

    #[test]
    fn minus_one_turns_a_limit_off() {
        let log = SlowLog::new(SlowLogConfig {
            warn_time: None,
            warn_size: None,
            capacity: 4,
        });
        assert_eq!(log.check(Duration::from_secs(3600), u64::MAX), None);
    }

    #[test]
    fn the_ring_keeps_the_newest_calls_newest_first() {
        let log = SlowLog::new(SlowLogConfig {
            capacity: 3,
            ..SlowLogConfig::default()
        });
        for i in 0..5 {
            log.record(call(&format!("Get{i}"), 20_000));
        }
        let methods: Vec<_> = log.recent().into_iter().map(|c| c.method).collect();
        assert_eq!(methods, ["Get4", "Get3", "Get2"]);
        assert_eq!(log.recorded(), 5);
        let off = SlowLog::new(SlowLogConfig {
            capacity: 0,
            ..SlowLogConfig::default()
        });
        off.record(call("Get", 20_000));
        assert!(off.recent().is_empty());
        assert_eq!(off.recorded(), 1);
    }

    #[test]
    fn the_warning_carries_hbase_fields() {
        let v: serde_json::Value = serde_json::from_str(&json(&call("Mutate", 12_345))).unwrap();
        assert_eq!(v["processingtimems"], 12_345);
        assert_eq!(v["queuetimems"], 2);
        assert_eq!(v["starttimems"], 1_700_000_000_000u64);
        assert_eq!(v["responsesize"], 10);
        assert_eq!(v["method"], "Mutate");
        assert_eq!(v["client"], "127.0.0.1:5000");
        assert_eq!(v["param"], "region= t,,1.abc., row=r1");
    }
}
