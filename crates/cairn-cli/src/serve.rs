//! `cairn serve`: HBase's Thrift1 gateway, native RPC and metrics over the embedded region
//! server, registered in ZooKeeper when asked, until SIGINT or SIGTERM, then an orderly stop
//! that leaves ZooKeeper and flushes every memstore.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use cairn_server::config::tls::Port;
use clap::Args;

const AFTER_HELP: &str = "\
HBase's Thrift server options: -p/--port, -b/--bind, --infoport as HBase's; -c/--compact and
-f/--framed are accepted and change nothing: cairn serves the binary and compact protocols,
buffered and framed, on the one port, telling them apart per connection. They apply after
--thrift and --http, which give whole addresses.";

#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct ServeArgs {
    /// Data directory (tables, WAL); created if missing [default: ./cairn-data].
    #[arg(long = "data", value_name = "DIR")]
    data: Option<PathBuf>,
    /// HBase's configuration directory: its core-site.xml and hbase-site.xml are read first
    /// (Hadoop's format: final properties, ${var} expansion) [default: $HBASE_CONF_DIR].
    #[arg(long = "conf", value_name = "DIR")]
    conf: Option<PathBuf>,
    /// TOML configuration (cairn's keys and HBase's property names), after --conf.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Thrift address [default: 127.0.0.1:9090]; port 0 picks a free port.
    #[arg(long, value_name = "HOST:PORT")]
    thrift: Option<String>,
    /// Thrift port (HBase's -p; hbase.regionserver.thrift.port).
    #[arg(short = 'p', long = "port", value_name = "PORT")]
    port: Option<u16>,
    /// Thrift bind address (HBase's -b; hbase.regionserver.thrift.ipaddress).
    #[arg(short = 'b', long = "bind", value_name = "ADDRESS")]
    bind: Option<String>,
    /// HBase native RPC address (HBase's Java client, Admin, hbase pe, YCSB) [default:
    /// 127.0.0.1:16020]; "" turns it off; port 0 picks a free port. Given twice, the last wins.
    #[arg(long, value_name = "HOST:PORT", overrides_with = "hbase")]
    hbase: Option<String>,
    /// Register in this ZooKeeper as HBase's master and region server, so clients with
    /// HBase's default ZooKeeper registry find cairn (hbase.zookeeper.quorum; a chroot may
    /// follow the last host: zk1:2181,zk2:2181/cairn). Without it, no ZooKeeper.
    #[arg(long, value_name = "HOST:PORT[,HOST:PORT...]")]
    zookeeper: Option<String>,
    /// The old HTTP address (the same pages as the info port, for one more release)
    /// [default: 127.0.0.1:9095]; "" turns it off.
    #[arg(long, value_name = "HOST:PORT")]
    http: Option<String>,
    /// Info-server address: the status page, /conf, /stacks, /logLevel, /metrics,
    /// /prometheus, /jmx, /health (hbase.regionserver.info.bindAddress and .port)
    /// [default: 127.0.0.1:16030]; "" turns it off; port 0 picks a free port.
    #[arg(long, value_name = "HOST:PORT")]
    info: Option<String>,
    /// HTTP port (HBase's web UI port, hbase.thrift.info.port); negative turns it off.
    #[arg(long = "infoport", value_name = "PORT", allow_negative_numbers = true)]
    infoport: Option<i32>,
    /// Compact protocol (HBase's -c): accepted; every protocol is served.
    #[arg(short = 'c', long = "compact")]
    compact: bool,
    /// Framed transport (HBase's -f): accepted; every transport is served.
    #[arg(short = 'f', long = "framed")]
    framed: bool,
    /// TLS (boxed: the subcommand enum stays small).
    #[command(flatten)]
    tls: Box<TlsArgs>,
    /// Any setting by name, after the config file: -D hbase.client.scanner.timeout.period=30000
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    define: Vec<String>,
}

/// TLS for every port.
#[derive(Args)]
struct TlsArgs {
    /// TLS on every port: the certificate chain (PEM, leaf first). A port opts out with its
    /// own setting (-D hbase.thrift.ssl.enabled=false, hbase.ssl.enabled,
    /// hbase.server.netty.tls.enabled).
    #[arg(long = "tls-cert", value_name = "FILE")]
    tls_cert: Option<PathBuf>,
    /// The private key for --tls-cert (PEM); default: in the --tls-cert file.
    #[arg(long = "tls-key", value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Only clients with a certificate from this CA (PEM) get in, on every TLS port
    /// (hbase.server.netty.tls.client.auth.mode=WANT admits clients without one too).
    #[arg(long = "tls-client-ca", value_name = "FILE", requires = "tls_cert")]
    tls_client_ca: Option<PathBuf>,
}

/// The server's configuration: defaults, HBase's configuration directory, the TOML file,
/// `-D`s, then the options.
fn config(a: &ServeArgs) -> anyhow::Result<cairn_server::Config> {
    let mut config = cairn_server::Config::default();
    let site = load_site(&mut config, "serve", a.conf.as_deref(), &a.define)?;
    if let Some(path) = &a.config {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        config.apply_toml(&text, &path.display().to_string())?;
    }
    apply_defines(&mut config, &site)?;
    if let Some(d) = &a.data {
        config.data_dir = d.clone();
    }
    if let Some(t) = &a.thrift {
        config.thrift_addr = t.clone();
    }
    if let Some(h) = &a.http {
        config.http_addr = (!h.is_empty()).then(|| h.clone());
    }
    if let Some(i) = &a.info {
        config.info_addr = (!i.is_empty()).then(|| i.clone());
    }
    if let Some(h) = &a.hbase {
        config.set("hbase", h)?;
    }
    if let Some(z) = &a.zookeeper {
        config.set("zookeeper", z)?;
    }
    if let Some(b) = &a.bind {
        config.set("hbase.regionserver.thrift.ipaddress", b)?;
    }
    if let Some(p) = a.port {
        config.set("hbase.regionserver.thrift.port", &p.to_string())?;
    }
    if let Some(p) = a.infoport {
        config.set("hbase.thrift.info.port", &p.to_string())?;
    }
    for (key, file) in [
        ("cairn.tls.cert", &a.tls.tls_cert),
        ("cairn.tls.key", &a.tls.tls_key),
        ("cairn.tls.client.ca", &a.tls.tls_client_ca),
    ] {
        if let Some(f) = file {
            config.set(key, &f.to_string_lossy())?;
        }
    }
    // -c and -f: the server detects the protocol and transport of each connection.
    let _ = (a.compact, a.framed);
    Ok(config)
}

/// Reads HBase's configuration directory (`--conf`, else `$HBASE_CONF_DIR`, if either) and
/// the `-D`s, and applies the files' properties to `config`, each naming its file when
/// refused; the `-D`s are for [`apply_defines`], after whatever comes between.
pub(crate) fn load_site(
    config: &mut cairn_server::Config,
    tool: &str,
    conf: Option<&std::path::Path>,
    defines: &[String],
) -> anyhow::Result<crate::site::Site> {
    let site = crate::site::Site::load(tool, conf, defines, cairn_server::Config::reads_property)?;
    for p in site.file_properties()? {
        config
            .set(&p.name, &p.value)
            .with_context(|| format!("{}: property {}", p.source, p.name))?;
    }
    Ok(site)
}

/// Applies the `-D`s of `site`, in command-line order.
pub(crate) fn apply_defines(
    config: &mut cairn_server::Config,
    site: &crate::site::Site,
) -> anyhow::Result<()> {
    for p in site.defines()? {
        config.set(&p.name, &p.value).with_context(|| p.origin())?;
    }
    Ok(())
}

/// How a port's TLS is described on its start-up line.
fn tls_note(s: Option<cairn_tls::TlsSettings>) -> String {
    let Some(s) = s else {
        return String::new();
    };
    let auth = match s.client_auth {
        cairn_tls::ClientAuth::None => "no client certificates",
        cairn_tls::ClientAuth::Want => "client certificates checked when shown",
        cairn_tls::ClientAuth::Need => "client certificates required",
    };
    format!(
        " with TLS ({auth}{}{})",
        if s.plaintext {
            ", plaintext also accepted"
        } else {
            ""
        },
        if s.reload {
            ", certificates reloaded when changed"
        } else {
            ""
        }
    )
}

pub fn run(a: ServeArgs, log: crate::log_control::LogControl) -> anyhow::Result<ExitCode> {
    let mut config = config(&a)?;
    config.build = cairn_server::metrics::BuildInfo {
        version: env!("CARGO_PKG_VERSION").into(),
        commit: env!("CAIRN_COMMIT").into(),
        features: crate::FEATURES.into(),
    };
    config.log_level = Some(Arc::new(log));
    // Each connection holds a descriptor: the soft limit goes up to the hard one first (the
    // function logs what it did).
    let _ = cairn_server::connections::raise_open_files_limit();
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing signal handlers")?;
    }
    let data = config.data_dir.display().to_string();
    let server = cairn_server::Server::start(config)?;
    let rec = &server.region_server().recovery;
    println!(
        "cairn serve: data {data} ({} tables, {} regions, {} WAL edits replayed)",
        rec.tables, rec.regions, rec.edits_replayed
    );
    let tls = |port| tls_note(server.tls(port));
    println!(
        "cairn serve: thrift on {} (binary or compact protocol, buffered or framed transport){}",
        server.thrift_addr(),
        tls(Port::Thrift)
    );
    match server.rpc() {
        Some(r) => println!(
            "cairn serve: hbase rpc on {}{} (server name {}, cluster id {}; Java clients: hbase.client.bootstrap.servers={})",
            r.addr(),
            tls(Port::Rpc),
            r.server_name(),
            r.cluster_id(),
            r.addr()
        ),
        None => println!("cairn serve: hbase rpc off"),
    }
    match server.info_addr() {
        Some(h) => println!(
            "cairn serve: info server on {h}{} (status page /rs-status, /conf, /stacks, /logLevel, /metrics, /prometheus, /jmx, /health)",
            tls(Port::Http)
        ),
        None => println!("cairn serve: info server off"),
    }
    match server.http_addr() {
        Some(h) => println!(
            "cairn serve: http on {h}{} (the info server's pages; this port is deprecated, use the info port)",
            tls(Port::Http)
        ),
        None => println!("cairn serve: http off"),
    }
    if let (Some(z), Some(r)) = (server.zookeeper(), server.rpc()) {
        println!(
            "cairn serve: registered in zookeeper {} under {} (master and region server {}, session 0x{:x})",
            z.connect_string(),
            z.parent(),
            r.server_name(),
            z.session_id()
        );
    }
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    if server.zookeeper().is_some() {
        println!("cairn serve: stopping (leaving zookeeper, flushing memstores)");
    } else {
        println!("cairn serve: stopping (flushing memstores)");
    }
    server.shutdown()?;
    println!("cairn serve: stopped");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Serve {
        #[command(flatten)]
        a: ServeArgs,
    }

    fn config_of(args: &[&str]) -> cairn_server::Config {
        let p = Serve::try_parse_from(std::iter::once("serve").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        config(&p.a).unwrap()
    }

    #[test]
    fn hbase_site_xml_is_read_before_the_toml_file_and_defines() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("hbase-site.xml"),
            r#"<configuration>
  <property><name>hbase.regionserver.thrift.port</name><value>${thrift.base}1</value></property>
  <property><name>thrift.base</name><value>919</value></property>
  <property><name>hbase.thrift.info.port</name><value>9197</value></property>
</configuration>"#,
        )
        .unwrap();
        let conf = dir.path().to_str().unwrap();
        let c = config_of(&["--conf", conf]);
        assert_eq!(c.thrift_addr, "127.0.0.1:9191");
        assert_eq!(c.http_addr.as_deref(), Some("127.0.0.1:9197"));
        let c = config_of(&["--conf", conf, "-D", "hbase.regionserver.thrift.port=9292"]);
        assert_eq!(c.thrift_addr, "127.0.0.1:9292");
        // A bad value in the file names the file and the property.
        std::fs::write(
            dir.path().join("hbase-site.xml"),
            "<configuration><property><name>hbase.regionserver.thrift.port</name>\
             <value>x</value></property></configuration>",
        )
        .unwrap();
        let p = Serve::try_parse_from(["serve", "--conf", conf]).unwrap();
        let e = format!("{:#}", config(&p.a).unwrap_err());
        assert!(
            e.contains("hbase-site.xml: property hbase.regionserver.thrift.port"),
            "{e}"
        );
        let p = Serve::try_parse_from(["serve", "--conf", "/no/such/dir"]).unwrap();
        assert!(format!("{:#}", config(&p.a).unwrap_err()).contains("/no/such/dir"));
    }

    /// The server-wide settings HBase takes from its configuration come from hbase-site.xml
    /// (final in core-site.xml, expanded) and -D, through to the region server's.
    #[test]
    fn region_server_defaults_come_from_the_site_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("core-site.xml"),
            "<configuration><property><name>hbase.hregion.memstore.flush.size</name>\
             <value>${flush}</value><final>true</final></property>\
             <property><name>flush</name><value>65536</value></property></configuration>",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("hbase-site.xml"),
            "<configuration><property><name>hbase.hregion.memstore.flush.size</name>\
             <value>1</value></property><property><name>hbase.hstore.compaction.min</name>\
             <value>7</value></property></configuration>",
        )
        .unwrap();
        let conf = dir.path().to_str().unwrap();
        let sc = config_of(&["--conf", conf]).server_config().unwrap();
        assert_eq!(sc.region.flush_size, 65536);
        assert_eq!(sc.region.compaction.min_files, 7);
        let c = config_of(&["--conf", conf, "-D", "hbase.hstore.compaction.min=4"]);
        assert_eq!(c.server_config().unwrap().region.compaction.min_files, 4);
        // A -D wins over a final property, as Hadoop's set does.
        let c = config_of(&[
            "--conf",
            conf,
            "-D",
            "hbase.hregion.memstore.flush.size=99999",
        ]);
        assert_eq!(c.server_config().unwrap().region.flush_size, 99999);
    }

    #[test]
    fn hbase_thrift_server_options() {
        let c = config_of(&["-p", "9191", "--infoport", "9196", "-c", "-f"]);
        assert_eq!(c.thrift_addr, "127.0.0.1:9191");
        assert_eq!(c.http_addr.as_deref(), Some("127.0.0.1:9196"));
        let c = config_of(&[
            "--bind",
            "0.0.0.0",
            "--port",
            "9292",
            "--compact",
            "--framed",
        ]);
        assert_eq!(c.thrift_addr, "0.0.0.0:9292");
        let c = config_of(&["-b", "10.1.2.3", "--thrift", "127.0.0.1:7000"]);
        assert_eq!(c.thrift_addr, "10.1.2.3:7000");
        let c = config_of(&["--infoport", "-1"]);
        assert_eq!(c.http_addr, None);
        // The info port is HBase's region server's, apart from the Thrift server's.
        assert_eq!(c.info_addr.as_deref(), Some("127.0.0.1:16030"));
        let c = config_of(&["-D", "hbase.regionserver.info.port=16031"]);
        assert_eq!(c.info_addr.as_deref(), Some("127.0.0.1:16031"));
        let c = config_of(&[
            "-D",
            "hbase.regionserver.info.bindAddress=0.0.0.0",
            "-D",
            "hbase.regionserver.info.port=-1",
        ]);
        assert_eq!(c.info_addr, None);
        let c = config_of(&["-D", "hbase.regionserver.info.bindAddress=10.0.0.1"]);
        assert_eq!(c.info_addr.as_deref(), Some("10.0.0.1:16030"));
        let c = config_of(&["--info", "127.0.0.1:0"]);
        assert_eq!(c.info_addr.as_deref(), Some("127.0.0.1:0"));
        assert_eq!(config_of(&["--info", ""]).info_addr, None);
        // -c is the compact protocol now: it takes no file.
        assert!(Serve::try_parse_from(["serve", "-c", "cairn.toml"]).is_err());
    }

    #[test]
    fn hbase_rpc_address() {
        let c = config_of(&[]);
        assert_eq!(c.rpc.unwrap().addr, "127.0.0.1:16020");
        let c = config_of(&["--hbase", "0.0.0.0:6020"]);
        assert_eq!(c.rpc.unwrap().addr, "0.0.0.0:6020");
        let c = config_of(&["--hbase", ""]);
        assert!(c.rpc.is_none());
        let c = config_of(&["-D", "hbase.regionserver.port=16030"]);
        assert_eq!(c.rpc.unwrap().addr, "127.0.0.1:16030");
        // A wrapper's default first, the caller's choice after it.
        let c = config_of(&["--hbase", "127.0.0.1:0", "--hbase", "127.0.0.1:16040"]);
        assert_eq!(c.rpc.unwrap().addr, "127.0.0.1:16040");
    }

    #[test]
    fn zookeeper_quorum() {
        assert!(!config_of(&[]).zookeeper.enabled());
        let c = config_of(&["--zookeeper", "zk1,zk2:2182"]);
        assert_eq!(c.zookeeper.connect_string(), "zk1:2181,zk2:2182");
        let c = config_of(&[
            "-D",
            "hbase.zookeeper.quorum=a",
            "-D",
            "hbase.zookeeper.property.clientPort=2999",
        ]);
        assert_eq!(c.zookeeper.connect_string(), "a:2999");
        // The option wins over the property.
        let c = config_of(&["-D", "hbase.zookeeper.quorum=a", "--zookeeper", "b:1"]);
        assert_eq!(c.zookeeper.connect_string(), "b:1");
    }

    #[test]
    fn tls_options_reach_every_port() {
        let c = config_of(&[
            "--tls-cert",
            "/c.pem",
            "--tls-key",
            "/k.pem",
            "--tls-client-ca",
            "/ca.pem",
        ]);
        for port in [Port::Rpc, Port::Thrift, Port::Http] {
            let s = c.tls.settings(port).unwrap().unwrap();
            assert_eq!(s.cert, PathBuf::from("/c.pem"));
            assert_eq!(s.key, PathBuf::from("/k.pem"));
            assert_eq!(s.client_ca, Some(PathBuf::from("/ca.pem")));
            assert_eq!(s.client_auth, cairn_tls::ClientAuth::Need);
        }
        let c = config_of(&[
            "--tls-cert",
            "/c.pem",
            "-D",
            "hbase.thrift.ssl.enabled=false",
        ]);
        assert!(c.tls.settings(Port::Thrift).unwrap().is_none());
        assert!(c.tls.settings(Port::Http).unwrap().is_some());
        assert!(config_of(&[]).tls.settings(Port::Rpc).unwrap().is_none());
        assert!(Serve::try_parse_from(["serve", "--tls-key", "/k.pem"]).is_err());
    }

    #[test]
    fn config_file_is_a_long_option() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("cairn.toml");
        std::fs::write(&f, "thrift = \"127.0.0.1:7777\"\n").unwrap();
        let c = config_of(&["--config", f.to_str().unwrap()]);
        assert_eq!(c.thrift_addr, "127.0.0.1:7777");
        // The options apply after the file.
        let c = config_of(&["--config", f.to_str().unwrap(), "-p", "7778"]);
        assert_eq!(c.thrift_addr, "127.0.0.1:7778");
    }
}
