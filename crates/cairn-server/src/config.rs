//! `cairn serve`'s configuration: cairn's own keys and HBase's property names, from a TOML
//! file and `-D name=value` overrides.
//!
//! ```toml
//! data = "./cairn-data"              # or hbase.rootdir = "file:///var/lib/cairn"
//! thrift = "127.0.0.1:9090"          # or hbase.regionserver.thrift.ipaddress / .port
//! http = "127.0.0.1:9095"            # or hbase.thrift.info.bindAddress / .port; "" = off
//! info = "127.0.0.1:16030"           # status page; or hbase.regionserver.info.bindAddress / .port; "" = off
//! hbase = "127.0.0.1:16020"          # native RPC; or hbase.regionserver.ipc.address / .port; "" = off
//! zookeeper = "zk1:2181,zk2:2181"    # register there; or hbase.zookeeper.quorum; absent = no ZooKeeper
//! "hbase.regionserver.thrift.framed.max_frame_size_in_mb" = 2
//! "hbase.client.scanner.timeout.period" = 60000
//! "hfile.block.cache.size" = 268435456
//!
//! [properties]                       # the same names may also go in this table
//! "hbase.regionserver.maxlogs" = 32
//! ```
//!
//! Property names cairn does not know are ignored, as HBase ignores them; a known name with a
//! malformed value is an error naming it.

use std::path::PathBuf;
use std::time::Duration;

use cairn_blockcache::BlockCacheConfig;
use cairn_region::ServerConfig;
use cairn_thrift::Limits;

pub mod tls;

use crate::handler::HandlerConfig;
use crate::rpc::RpcConfig;
use crate::security::SecurityConfig;
use crate::zookeeper::ZkConfig;

/// Everything `cairn serve` needs.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where tables, store files and the WAL live (`data`, or HBase's `hbase.rootdir`).
    pub data_dir: PathBuf,
    /// Thrift1 listen address (`host:port`; port 0 picks a free one), or HBase's
    /// `hbase.regionserver.thrift.ipaddress` and `hbase.regionserver.thrift.port`.
    pub thrift_addr: String,
    /// Info-server address for `/metrics`, `/jmx`, `/health` (`hbase.thrift.info.bindAddress`,
    /// `hbase.thrift.info.port`; a negative port turns it off); `None` = no HTTP server.
    pub http_addr: Option<String>,
    /// The region server's info server: the status page and every page of the HTTP port
    /// (`hbase.regionserver.info.bindAddress`, `hbase.regionserver.info.port`, 16030; a
    /// negative port turns it off); `None` = off. The HTTP port above serves the same pages,
    /// for one release, as an alias.
    pub info_addr: Option<String>,
    /// What `cairn_build_info` and the status page say about the binary.
    pub build: crate::metrics::BuildInfo,
    /// The log filter `/logLevel` shows and changes; `None`: the page says it cannot.
    pub log_level: Option<std::sync::Arc<dyn crate::server::LogLevel>>,
    /// HBase's native RPC (`--hbase`, `hbase.regionserver.port`, `hbase.master.port`,
    /// `hbase.regionserver.ipc.address`); `None` = off.
    pub rpc: Option<RpcConfig>,
    /// Per-connection input bounds; the frame size is
    /// `hbase.regionserver.thrift.framed.max_frame_size_in_mb`.
    pub limits: Limits,
    /// Thrift connections open at once (`hbase.thrift.maxWorkerThreads`, 1000): at the cap
    /// the quietest connection with no call in flight is closed to make room.
    pub max_connections: usize,
    /// A Thrift connection whose client sends nothing for this long is closed
    /// (`hbase.thrift.server.socket.read.timeout`, 60 s; 0 = never), as HBase's Thrift
    /// server closes it.
    pub thrift_read_timeout: Option<Duration>,
    /// Who may run admin operations, on both protocols (`hbase.security.authorization`,
    /// `hbase.superuser`, `cairn.security.tls.identity`).
    pub security: SecurityConfig,
    /// What the Thrift1 handler needs: scanner lease (`hbase.client.scanner.timeout.period`),
    /// open-scanner and per-call row limits.
    pub handler: HandlerConfig,
    /// Where to register as HBase's master and region server (`--zookeeper`,
    /// `hbase.zookeeper.quorum`, `hbase.zookeeper.property.clientPort`,
    /// `zookeeper.znode.parent`, `zookeeper.session.timeout`); no quorum = no ZooKeeper.
    pub zookeeper: ZkConfig,
    /// TLS on each port (`--tls-cert` and friends, HBase's TLS properties); plaintext by
    /// default.
    pub tls: tls::TlsConfig,
    /// Which calls are logged and kept as slow or large (`hbase.ipc.warn.response.time`,
    /// `hbase.ipc.warn.response.size`, `hbase.regionserver.slowlog.ringbuffer.size`).
    pub slow_log: crate::slow_log::SlowLogConfig,
    /// Every `name = value` given, in order, for the region server and block cache.
    pub properties: Vec<(String, String)>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            data_dir: PathBuf::from("./cairn-data"),
            thrift_addr: "127.0.0.1:9090".into(),
            http_addr: Some("127.0.0.1:9095".into()),
            info_addr: Some("127.0.0.1:16030".into()),
            build: crate::metrics::BuildInfo::default(),
            log_level: None,
            rpc: Some(RpcConfig::default()),
            limits: Limits::default(),
            max_connections: 1000,
            thrift_read_timeout: Some(Duration::from_secs(60)),
            security: SecurityConfig::default(),
            handler: HandlerConfig::default(),
            zookeeper: ZkConfig::default(),
            tls: tls::TlsConfig::default(),
            slow_log: crate::slow_log::SlowLogConfig::default(),
            properties: Vec::new(),
        }
    }
}

/// Why a configuration was refused; each names the property or file at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A known property with a value it cannot take.
    #[error("{key} = {value:?}: {reason}")]
    Bad {
        /// The property name as given (cairn's or HBase's).
        key: String,
        /// The value as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A TOML file that does not parse or has a value of the wrong shape.
    #[error("config file {path}: {reason}")]
    File {
        /// The file's path.
        path: String,
        /// The parse error, or which key has the wrong shape.
        reason: String,
    },
}

fn bad(key: &str, value: &str, reason: &str) -> ConfigError {
    ConfigError::Bad {
        key: key.into(),
        value: value.into(),
        reason: reason.into(),
    }
}

fn split_host_port(addr: &str) -> (String, String) {
    match addr.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), p.to_string()),
        None => (addr.to_string(), String::new()),
    }
}

/// The names [`Config::set`] itself reads (cairn's short keys and HBase's properties).
const SET_PROPERTIES: &[&str] = &[
    "data",
    "data_dir",
    "hbase.rootdir",
    "thrift",
    "thrift_addr",
    "http",
    "http_addr",
    "hbase.regionserver.thrift.port",
    "hbase.regionserver.thrift.ipaddress",
    "hbase",
    "hbase_addr",
    "hbase.regionserver.port",
    "hbase.master.port",
    "hbase.regionserver.ipc.address",
    "hbase.master.ipc.address",
    "hbase.regionserver.hostname",
    "hbase.regionserver.handler.count",
    "hbase.ipc.server.max.callqueue.length",
    "hbase.ipc.server.max.callqueue.size",
    "cairn.ipc.server.max.connections",
    "cairn.ipc.server.header.timeout",
    "cairn.ipc.server.idle.timeout",
    "cairn.ipc.server.max.open.scanners",
    "hbase.thrift.server.socket.read.timeout",
    "hbase.security.authorization",
    "hbase.superuser",
    "cairn.security.tls.identity",
    "hadoop.security.groups.cache.secs",
    "hbase.ipc.max.request.size",
    "hbase.server.scanner.max.result.size",
    "hbase.region.server.rpc.minimum.scan.time.limit.delta",
    "hbase.thrift.info.port",
    "info",
    "info_addr",
    "hbase.regionserver.info.port",
    "hbase.regionserver.info.bindAddress",
    "hbase.thrift.info.bindAddress",
    "hbase.regionserver.thrift.framed.max_frame_size_in_mb",
    "cairn.thrift.max.request.bytes",
    "hbase.thrift.maxWorkerThreads",
    "max_connections",
    "hbase.client.scanner.timeout.period",
    "zookeeper",
    "hbase.zookeeper.quorum",
    "hbase.zookeeper.property.clientPort",
    "zookeeper.znode.parent",
    "zookeeper.session.timeout",
    "cairn.thrift.max.open.scanners",
    "cairn.thrift.max.rows.per.call",
    "cairn.thrift.scanner.read_ahead.bytes",
    "hbase.ipc.warn.response.time",
    "hbase.ipc.warn.response.size",
    "hbase.regionserver.slowlog.ringbuffer.size",
];

/// The block cache's properties (`BlockCacheConfig::from_properties`).
const BLOCK_CACHE_PROPERTIES: &[&str] = &[
    "hfile.block.cache.size",
    "cairn.blockcache.l1.bytes",
    "hbase.bucketcache.ioengine",
    "hbase.bucketcache.size",
    "hbase.bucketcache.persistent.path",
    "hbase.bucketcache.writer.threads",
    "hbase.bucketcache.writer.queuelength",
    "hbase.bucketcache.bucket.sizes",
    "cairn.blockcache.verify.memory.hits",
];

/// Read from the properties by the server's start (`cairn.checksum.accounting`) and by a
/// cluster's region server (`cluster_config`).
const OTHER_PROPERTIES: &[&str] = &[
    "cairn.checksum.accounting",
    "hbase.regionserver.msginterval",
    "cairn.regionserver.master.wait",
    "hbase.regionserver.executor.openregion.threads",
];

impl Config {
    /// Whether a server (`cairn serve`, `cairn regionserver`) reads the property `name`: its
    /// own settings, TLS's, the region server's and the block cache's.
    pub fn reads_property(name: &str) -> bool {
        SET_PROPERTIES.contains(&name)
            || BLOCK_CACHE_PROPERTIES.contains(&name)
            || OTHER_PROPERTIES.contains(&name)
            || ServerConfig::reads_property(name)
            // TLS's names: `set` says whether it took the name (a bad value is an error).
            || !matches!(tls::TlsConfig::default().set(name, ""), Ok(false))
    }
}

impl Config {
    /// Applies one setting by cairn's or HBase's name.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let v = value.trim();
        let int = || -> Result<i64, ConfigError> {
            v.parse::<i64>()
                .map_err(|_| bad(key, value, "not a whole number"))
        };
        let positive = || -> Result<usize, ConfigError> {
            let n = int()?;
            if n <= 0 {
                return Err(bad(key, value, "must be positive"));
            }
            Ok(n as usize)
        };
        let non_negative = || -> Result<usize, ConfigError> {
            let n = int()?;
            if n < 0 {
                return Err(bad(key, value, "must not be negative"));
            }
            Ok(n as usize)
        };
        match key {
            "data" | "data_dir" => self.data_dir = PathBuf::from(v),
            // A local path, file:///dir or hdfs://host:port/dir (HDFS needs the `hdfs` feature;
            // resolved when the server opens).
            "hbase.rootdir" => self.data_dir = PathBuf::from(v),
            "thrift" | "thrift_addr" => self.thrift_addr = v.to_string(),
            "http" | "http_addr" => {
                self.http_addr = (!v.is_empty()).then(|| v.to_string());
            }
            // HBase's RpcServer: a limit of -1 (any negative) turns the warning off.
            "hbase.ipc.warn.response.time" => {
                let ms = int()?;
                self.slow_log.warn_time = (ms >= 0).then(|| Duration::from_millis(ms as u64));
            }
            "hbase.ipc.warn.response.size" => {
                let n = int()?;
                self.slow_log.warn_size = (n >= 0).then_some(n as u64);
            }
            "hbase.regionserver.slowlog.ringbuffer.size" => {
                self.slow_log.capacity = non_negative()?;
            }
            "hbase.regionserver.thrift.port" => {
                let (h, _) = split_host_port(&self.thrift_addr);
                self.thrift_addr = format!("{h}:{}", int()?);
            }
            "hbase.regionserver.thrift.ipaddress" => {
                let (_, p) = split_host_port(&self.thrift_addr);
                self.thrift_addr = format!("{v}:{p}");
            }
            "hbase" | "hbase_addr" => {
                if v.is_empty() {
                    self.rpc = None;
                } else {
                    self.rpc.get_or_insert_with(RpcConfig::default).addr = v.to_string();
                }
            }
            // One port serves the master's and the region server's services, as HBase's
            // standalone mode does: either name sets it.
            "hbase.regionserver.port" | "hbase.master.port" => {
                let port = int()?;
                let rpc = self.rpc.get_or_insert_with(RpcConfig::default);
                let (h, _) = split_host_port(&rpc.addr);
                rpc.addr = format!("{h}:{port}");
            }
            "hbase.regionserver.ipc.address" | "hbase.master.ipc.address" => {
                let rpc = self.rpc.get_or_insert_with(RpcConfig::default);
                let (_, p) = split_host_port(&rpc.addr);
                rpc.addr = format!("{v}:{p}");
            }
            "hbase.regionserver.hostname" => {
                if let Some(rpc) = self.rpc.as_mut() {
                    rpc.hostname = (!v.is_empty()).then(|| v.to_string());
                }
            }
            "hbase.regionserver.handler.count" => {
                let n = positive()?;
                if let Some(rpc) = self.rpc.as_mut() {
                    rpc.handlers = n;
                    rpc.max_queue_length = n * 10;
                }
            }
            "hbase.ipc.server.max.callqueue.length" => {
                let n = positive()?;
                if let Some(rpc) = self.rpc.as_mut() {
                    rpc.max_queue_length = n;
                }
            }
            "hbase.ipc.server.max.callqueue.size" => {
                let n = positive()?;
                if let Some(rpc) = self.rpc.as_mut() {
                    rpc.max_queue_bytes = n;
                }
            }
            "cairn.ipc.server.max.connections" => {
                let n = positive()?;
                if let Some(rpc) = self.rpc.as_mut() {
                    rpc.max_connections = n;
                }
            }
            "cairn.ipc.server.header.timeout" => {
                let ms = positive()?;
                if let Some(rpc) = self.rpc.as_mut() {
                    rpc.header_timeout = Duration::from_millis(ms as u64);
                }
            }
            "cairn.ipc.server.idle.timeout" => {
                let ms = non_negative()?;
                if let Some(rpc) = self.rpc.as_mut() {
                    rpc.idle_timeout = Duration::from_millis(ms as u64);
                }
            }
            "cairn.ipc.server.max.open.scanners" => {
                let n = positive()?;
                if let Some(rpc) = self.rpc.as_mut() {
                    rpc.max_open_scanners = n;
                }
            }
            "hbase.thrift.server.socket.read.timeout" => {
                let ms = non_negative()?;
                self.thrift_read_timeout = (ms > 0).then(|| Duration::from_millis(ms as u64));
            }
            "hbase.security.authorization" => {
                self.security.authorization = match v.to_ascii_lowercase().as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(bad(key, value, "expected true or false")),
                };
            }
            "hbase.superuser" => {
                self.security.superusers = v
                    .split(',')
                    .map(str::trim)
                    .filter(|u| !u.is_empty())
                    .map(str::to_string)
                    .collect();
            }
            "cairn.security.tls.identity" => {
                self.security.cert_identity = cairn_tls::CertIdentity::parse(v)
                    .ok_or_else(|| bad(key, value, "expected CN, SAN_DNS, SAN_EMAIL or SAN_URI"))?;
            }
            "hadoop.security.groups.cache.secs" => {
                self.security.groups_cache = Duration::from_secs(non_negative()? as u64);
            }
            "hbase.ipc.max.request.size" => {
                let n = positive()?;
                if let Some(rpc) = self.rpc.as_mut() {
                    rpc.max_request_size = n;
                }
            }
            "hbase.server.scanner.max.result.size" => {
                let n = positive()?;
                if let Some(rpc) = self.rpc.as_mut() {
                    rpc.max_result_size = n;
                }
            }
            "hbase.region.server.rpc.minimum.scan.time.limit.delta" => {
                let ms = non_negative()?;
                if let Some(rpc) = self.rpc.as_mut() {
                    rpc.min_scan_time_limit = Duration::from_millis(ms as u64);
                }
            }
            "hbase.thrift.info.port" => {
                let port = int()?;
                if port < 0 {
                    self.http_addr = None;
                } else {
                    let host = self
                        .http_addr
                        .as_deref()
                        .map(|a| split_host_port(a).0)
                        .unwrap_or_else(|| "127.0.0.1".into());
                    self.http_addr = Some(format!("{host}:{port}"));
                }
            }
            "info" | "info_addr" => {
                self.info_addr = (!v.is_empty()).then(|| v.to_string());
            }
            "hbase.regionserver.info.port" => {
                let port = int()?;
                if port < 0 {
                    self.info_addr = None;
                } else if port > i64::from(u16::MAX) {
                    return Err(bad(key, value, "not a port"));
                } else {
                    let host = self
                        .info_addr
                        .as_deref()
                        .map(|a| split_host_port(a).0)
                        .unwrap_or_else(|| "127.0.0.1".into());
                    self.info_addr = Some(format!("{host}:{port}"));
                }
            }
            "hbase.regionserver.info.bindAddress" => {
                let port = self
                    .info_addr
                    .as_deref()
                    .map(|a| split_host_port(a).1)
                    .unwrap_or_else(|| "16030".into());
                self.info_addr = Some(format!("{v}:{port}"));
            }
            "hbase.thrift.info.bindAddress" => {
                let port = self
                    .http_addr
                    .as_deref()
                    .map(|a| split_host_port(a).1)
                    .unwrap_or_else(|| "9095".into());
                self.http_addr = Some(format!("{v}:{port}"));
            }
            "hbase.regionserver.thrift.framed.max_frame_size_in_mb" => {
                self.limits.max_frame_bytes = positive()?.saturating_mul(1 << 20);
            }
            "cairn.thrift.max.request.bytes" => self.limits.max_request_bytes = positive()?,
            "hbase.thrift.maxWorkerThreads" | "max_connections" => {
                self.max_connections = positive()?
            }
            "hbase.client.scanner.timeout.period" => {
                let lease = Duration::from_millis(positive()? as u64);
                self.handler.scanner_lease = lease;
                if let Some(rpc) = self.rpc.as_mut() {
                    rpc.scanner_lease = lease;
                }
            }
            "zookeeper" | "hbase.zookeeper.quorum" => {
                if v.split('/')
                    .next()
                    .unwrap_or("")
                    .split(',')
                    .any(|h| h.trim().is_empty())
                    && !v.is_empty()
                {
                    return Err(bad(key, value, "an empty host in the quorum"));
                }
                self.zookeeper.quorum = v.to_string();
            }
            "hbase.zookeeper.property.clientPort" => {
                let port = positive()?;
                self.zookeeper.client_port =
                    u16::try_from(port).map_err(|_| bad(key, value, "not a port (1 to 65535)"))?;
            }
            "zookeeper.znode.parent" => {
                if !v.starts_with('/') || (v.len() > 1 && v.ends_with('/')) || v.contains("//") {
                    return Err(bad(
                        key,
                        value,
                        "a znode path: starts with /, no empty parts, no trailing /",
                    ));
                }
                self.zookeeper.parent = v.to_string();
            }
            "zookeeper.session.timeout" => {
                self.zookeeper.session_timeout = Duration::from_millis(positive()? as u64);
            }
            k if self.tls.set(k, v)? => {}
            "cairn.thrift.max.open.scanners" => self.handler.max_open_scanners = positive()?,
            "cairn.thrift.max.rows.per.call" => self.handler.max_rows_per_call = positive()?,
            "cairn.thrift.scanner.read_ahead.bytes" => {
                self.handler.scanner_read_ahead_bytes = non_negative()?
            }
            _ => {}
        }
        self.properties.push((key.to_string(), v.to_string()));
        Ok(())
    }

    /// Applies a TOML document (top-level keys and a `[properties]` table).
    pub fn apply_toml(&mut self, text: &str, path: &str) -> Result<(), ConfigError> {
        let doc: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ConfigError::File {
                path: path.into(),
                reason: e.to_string(),
            })?;
        fn scalar(v: &toml::Value) -> Option<String> {
            match v {
                toml::Value::String(s) => Some(s.clone()),
                toml::Value::Integer(i) => Some(i.to_string()),
                toml::Value::Float(f) => Some(f.to_string()),
                toml::Value::Boolean(b) => Some(b.to_string()),
                _ => None,
            }
        }
        for (k, v) in &doc {
            if k == "properties" {
                let toml::Value::Table(t) = v else {
                    return Err(ConfigError::File {
                        path: path.into(),
                        reason: "properties must be a table".into(),
                    });
                };
                for (pk, pv) in t {
                    let s = scalar(pv).ok_or_else(|| ConfigError::File {
                        path: path.into(),
                        reason: format!("properties.{pk}: expected a string, number or boolean"),
                    })?;
                    self.set(pk, &s)?;
                }
                continue;
            }
            let s = scalar(v).ok_or_else(|| ConfigError::File {
                path: path.into(),
                reason: format!("{k}: expected a string, number or boolean"),
            })?;
            self.set(k, &s)?;
        }
        Ok(())
    }

    /// The region server's configuration: the data directory, the block cache and every
    /// property it knows.
    pub fn server_config(&self) -> Result<ServerConfig, ConfigError> {
        let root = self.data_dir.to_string_lossy();
        let mut sc =
            ServerConfig::from_uri(&root).map_err(|e| bad("data", &root, &e.to_string()))?;
        for (k, v) in &self.properties {
            sc.set_property(k, v)
                .map_err(|e| bad(k, v, &e.to_string()))?;
        }
        let cache = BlockCacheConfig::from_properties(
            self.properties
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        )
        .map_err(|e| ConfigError::Bad {
            key: e.key.clone(),
            value: e.value.clone(),
            reason: e.reason.clone(),
        })?;
        sc.block_cache = Some(cache);
        Ok(sc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lists follow what the server reads: a listed name refuses a malformed value in
    /// `set`, in the region server's or block cache's configuration, or in the cluster's
    /// (the names taking any value excepted).
    #[test]
    fn every_listed_property_is_read() {
        let free_form = [
            "data",
            "data_dir",
            "hbase.rootdir",
            "thrift",
            "thrift_addr",
            "http",
            "http_addr",
            "hbase",
            "hbase_addr",
            "hbase.regionserver.thrift.ipaddress",
            "hbase.regionserver.ipc.address",
            "hbase.master.ipc.address",
            "hbase.regionserver.hostname",
            "hbase.superuser",
            "info",
            "info_addr",
            "hbase.regionserver.info.bindAddress",
            "hbase.thrift.info.bindAddress",
            "zookeeper",
            "hbase.zookeeper.quorum",
            "hbase.bucketcache.persistent.path",
            "cairn.blockcache.verify.memory.hits",
            "cairn.checksum.accounting",
        ];
        let all = SET_PROPERTIES
            .iter()
            .chain(BLOCK_CACHE_PROPERTIES)
            .chain(OTHER_PROPERTIES);
        for name in all.filter(|n| !free_form.contains(n)) {
            let mut c = Config::default();
            let refused = c.set(name, "not-a-value").is_err()
                || c.server_config().is_err()
                || crate::cluster::cluster_config(&c).is_err_and(|e| e.to_string().contains(name));
            assert!(refused, "{name}");
            assert!(Config::reads_property(name), "{name}");
        }
        // The free-form ones change the configuration.
        for name in free_form {
            assert!(Config::reads_property(name), "{name}");
        }
        assert!(Config::reads_property("hbase.hregion.memstore.flush.size"));
        // Every one is documented, with its default.
        let doc = include_str!("../../../docs/configuration.md");
        let region = cairn_region::server::SERVER_PROPERTIES;
        let every = SET_PROPERTIES
            .iter()
            .chain(BLOCK_CACHE_PROPERTIES)
            .chain(OTHER_PROPERTIES)
            .chain(region);
        for name in every {
            assert!(
                doc.contains(&format!("`{name}`")),
                "{name} is not in configuration.md"
            );
        }
        assert!(Config::reads_property("hbase.server.netty.tls.enabled"));
        assert!(!Config::reads_property("hbase.regionserver.thrift.prot"));
    }

    #[test]
    fn slow_call_limits_take_hbase_names_and_minus_one() {
        let mut c = Config::default();
        assert_eq!(c.slow_log, crate::slow_log::SlowLogConfig::default());
        c.set("hbase.ipc.warn.response.time", "250").unwrap();
        c.set("hbase.ipc.warn.response.size", "-1").unwrap();
        c.set("hbase.regionserver.slowlog.ringbuffer.size", "8")
            .unwrap();
        assert_eq!(c.slow_log.warn_time, Some(Duration::from_millis(250)));
        assert_eq!(c.slow_log.warn_size, None);
        assert_eq!(c.slow_log.capacity, 8);
        c.set("hbase.ipc.warn.response.time", "-1").unwrap();
        c.set("hbase.ipc.warn.response.size", "0").unwrap();
        assert_eq!(c.slow_log.warn_time, None);
        assert_eq!(c.slow_log.warn_size, Some(0));
        assert!(c.set("hbase.ipc.warn.response.time", "soon").is_err());
        assert!(c
            .set("hbase.regionserver.slowlog.ringbuffer.size", "-3")
            .is_err());
    }

    #[test]
    fn toml_with_cairn_and_hbase_names() {
        let mut c = Config::default();
        c.apply_toml(
            r#"
data = "/tmp/x"
"hbase.regionserver.thrift.port" = 9191
"hbase.thrift.info.port" = -1
"hbase.regionserver.thrift.framed.max_frame_size_in_mb" = 4
[properties]
"hbase.client.scanner.timeout.period" = 1500
"hbase.regionserver.maxlogs" = 7
"some.unknown.name" = "kept, ignored"
"#,
            "test.toml",
        )
        .unwrap();
        assert_eq!(c.data_dir, PathBuf::from("/tmp/x"));
        assert_eq!(c.thrift_addr, "127.0.0.1:9191");
        assert_eq!(c.http_addr, None);
        assert_eq!(c.limits.max_frame_bytes, 4 << 20);
        assert_eq!(c.handler.scanner_lease, Duration::from_millis(1500));
        assert_eq!(c.server_config().unwrap().max_wal_segments, 7);
        assert_eq!(
            c.rpc.as_ref().unwrap().scanner_lease,
            Duration::from_millis(1500)
        );
    }

    #[test]
    fn the_rpc_port_by_cairn_and_hbase_names() {
        let mut c = Config::default();
        assert_eq!(c.rpc.as_ref().unwrap().addr, "127.0.0.1:16020");
        c.set("hbase.master.port", "16000").unwrap();
        assert_eq!(c.rpc.as_ref().unwrap().addr, "127.0.0.1:16000");
        c.set("hbase.regionserver.ipc.address", "0.0.0.0").unwrap();
        c.set("hbase.regionserver.port", "6020").unwrap();
        assert_eq!(c.rpc.as_ref().unwrap().addr, "0.0.0.0:6020");
        c.set("hbase.regionserver.handler.count", "4").unwrap();
        assert_eq!(c.rpc.as_ref().unwrap().handlers, 4);
        assert_eq!(c.rpc.as_ref().unwrap().max_queue_length, 40);
        c.set("hbase", "").unwrap();
        assert!(c.rpc.is_none());
        c.set("hbase", "127.0.0.1:0").unwrap();
        assert_eq!(c.rpc.as_ref().unwrap().addr, "127.0.0.1:0");
    }

    #[test]
    fn limits_and_authorization_by_name() {
        let mut c = Config::default();
        let rpc = c.rpc.as_ref().unwrap();
        assert_eq!(rpc.max_queue_bytes, 1 << 30, "HBase's 1 GiB");
        assert_eq!(rpc.max_connections, 4000);
        assert_eq!(rpc.idle_timeout, Duration::from_secs(300));
        assert_eq!(c.thrift_read_timeout, Some(Duration::from_secs(60)));
        assert!(!c.security.authorization, "off by default, as in HBase");
        for (k, v) in [
            ("hbase.ipc.server.max.callqueue.size", "1048576"),
            ("cairn.ipc.server.max.connections", "50"),
            ("cairn.ipc.server.header.timeout", "2000"),
            ("cairn.ipc.server.idle.timeout", "0"),
            ("cairn.ipc.server.max.open.scanners", "7"),
            ("hbase.thrift.server.socket.read.timeout", "0"),
            ("hbase.security.authorization", "TRUE"),
            ("hbase.superuser", " alice, @admins ,,bob "),
            ("cairn.security.tls.identity", "san_email"),
            ("hadoop.security.groups.cache.secs", "0"),
        ] {
            c.set(k, v).unwrap();
        }
        let rpc = c.rpc.as_ref().unwrap();
        assert_eq!(rpc.max_queue_bytes, 1 << 20);
        assert_eq!(rpc.max_connections, 50);
        assert_eq!(rpc.header_timeout, Duration::from_secs(2));
        assert_eq!(rpc.effective_idle_timeout(), Duration::ZERO, "0: never");
        assert_eq!(rpc.max_open_scanners, 7);
        assert_eq!(c.thrift_read_timeout, None);
        assert!(c.security.authorization);
        assert_eq!(c.security.superusers, ["alice", "@admins", "bob"]);
        assert_eq!(c.security.cert_identity, cairn_tls::CertIdentity::SanEmail);
        assert_eq!(c.security.groups_cache, Duration::ZERO);
        // The idle timeout never undercuts a scanner read at its lease's pace.
        c.set("cairn.ipc.server.idle.timeout", "1000").unwrap();
        assert_eq!(
            c.rpc.as_ref().unwrap().effective_idle_timeout(),
            Duration::from_secs(120),
            "twice the 60 s lease"
        );
        for (k, v) in [
            ("hbase.security.authorization", "yes"),
            ("cairn.security.tls.identity", "DN"),
            ("hbase.ipc.server.max.callqueue.size", "0"),
            ("hbase.thrift.server.socket.read.timeout", "-1"),
        ] {
            let e = c.set(k, v).unwrap_err().to_string();
            assert!(e.contains(k), "{e}");
        }
    }

    #[test]
    fn zookeeper_by_hbase_names() {
        let mut c = Config::default();
        assert!(
            !c.zookeeper.enabled(),
            "no ZooKeeper unless a quorum is given"
        );
        c.apply_toml(
            r#"
[properties]
"hbase.zookeeper.quorum" = "zk1,zk2:2182"
"hbase.zookeeper.property.clientPort" = 2281
"zookeeper.znode.parent" = "/cairn"
"zookeeper.session.timeout" = 30000
"#,
            "zk.toml",
        )
        .unwrap();
        assert!(c.zookeeper.enabled());
        assert_eq!(c.zookeeper.connect_string(), "zk1:2281,zk2:2182");
        assert_eq!(c.zookeeper.path("master"), "/cairn/master");
        assert_eq!(c.zookeeper.session_timeout, Duration::from_secs(30));
        c.set("zookeeper", "127.0.0.1:2181/chroot").unwrap();
        assert_eq!(c.zookeeper.connect_string(), "127.0.0.1:2181/chroot");
        for (k, v) in [
            ("hbase.zookeeper.property.clientPort", "70000"),
            ("hbase.zookeeper.property.clientPort", "0"),
            ("zookeeper.znode.parent", "hbase"),
            ("zookeeper.znode.parent", "/hbase/"),
            ("zookeeper.session.timeout", "-1"),
            ("hbase.zookeeper.quorum", "a,,b"),
        ] {
            let e = c.set(k, v).unwrap_err().to_string();
            assert!(e.contains(k), "{e}");
        }
    }

    #[test]
    fn bad_values_name_the_key() {
        let mut c = Config::default();
        let e = c
            .set("hbase.client.scanner.timeout.period", "soon")
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("hbase.client.scanner.timeout.period"),
            "{e}"
        );
        let e = c.apply_toml("data = [1]", "f.toml").unwrap_err();
        assert!(
            e.to_string().contains("f.toml") && e.to_string().contains("data"),
            "{e}"
        );
        let e = c.set("hbase.regionserver.port", "x").unwrap_err();
        assert!(e.to_string().contains("hbase.regionserver.port"), "{e}");
        c.set("hbase.regionserver.maxlogs", "many").unwrap();
        let e = c.server_config().unwrap_err();
        assert!(e.to_string().contains("hbase.regionserver.maxlogs"), "{e}");
        c.set("hbase.rootdir", "s3://bucket/hbase").unwrap();
        let e = c.server_config().unwrap_err().to_string();
        assert!(
            e.contains("s3://bucket/hbase") && e.contains("unsupported scheme"),
            "{e}"
        );
    }
}
