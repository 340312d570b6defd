//! cairn-conf against Hadoop's own `Configuration` (Hadoop 3.4 from HBase 2.6.1's interop
//! classpath, `dev.cairn.interop.ConfDump`): the same files, the same `-D`s, the same value
//! (or the same error, or the same absence) for every name. Skipped without the interop jars
//! unless `CAIRN_REQUIRE_HBASE_INTEROP=1`.

#[path = "../../cairn-hfile/tests/support/hbase.rs"]
#[allow(dead_code)]
mod hbase;

use cairn_conf::Configuration;

const CORE: &str = r#"<?xml version="1.0"?>
<?xml-stylesheet type="text/xsl" href="configuration.xsl"?>
<configuration>
  <property><name>a</name><value>core</value><final>true</final></property>
  <property><name>b</name><value>core</value></property>
  <property><name>tmp</name><value>${java.io.tmpdir}/hbase-${user.name}</value></property>
  <property><name>home</name><value>${user.home}/x</value></property>
  <property><name>envd</name><value>${env.CAIRN_CONF_ITEST_UNSET:-fallback}</value></property>
  <property><name>enve</name><value>[${env.CAIRN_CONF_ITEST_EMPTY-d}]</value></property>
  <property><name>envs</name><value>${env.CAIRN_CONF_ITEST_SET}</value></property>
  <property><name>envcolon</name><value>${env.CAIRN:CONF}</value></property>
</configuration>"#;

fn site() -> String {
    let mut s = String::from(
        r#"<?xml version="1.0"?>
<!DOCTYPE configuration>
<configuration xmlns:xi="http://www.w3.org/2001/XInclude">
  <property><name>a</name><value>site</value></property>
  <property><name> b </name><value>site</value></property>
  <property><name>c</name><value>${b}-${a}</value></property>
  <property><name>loop</name><value>x${loop}</value></property>
  <property><name>unbound</name><value>${nope}/x/${a}</value></property>
  <property><name>odd</name><value>$${a} ${ a} ${a b} {a} ${}</value></property>
  <property name="short" value="v" final="true"/>
  <property><name>short</name><value>overridden</value></property>
  <property><name>space</name><value>  padded  </value></property>
  <property><name>amp</name><value>a&amp;b&lt;c</value></property>
  <property><name>novalue</name></property>
  <property><name>final.lower</name><value>1</value><final>TRUE</final></property>
  <xi:include href="extra.xml"/>
  <xi:include href="absent.xml"><xi:fallback/></xi:include>
  <property><name>final.lower</name><value>2</value></property>
"#,
    );
    s.push_str("  <property><name>deep0</name><value>end</value></property>\n");
    for i in 1..=25 {
        s.push_str(&format!(
            "  <property><name>deep{i}</name><value>${{deep{}}}</value></property>\n",
            i - 1
        ));
    }
    s.push_str("</configuration>\n");
    s
}

const EXTRA: &str = r#"<configuration>
  <property><name>inc</name><value>from ${b}</value></property>
</configuration>"#;

const NAMES: &[&str] = &[
    "a",
    "b",
    "c",
    "tmp",
    "home",
    "envd",
    "enve",
    "envs",
    "envcolon",
    "loop",
    "unbound",
    "odd",
    "short",
    "space",
    "amp",
    "novalue",
    "final.lower",
    "inc",
    "deep18",
    "deep19",
    "deep20",
    "deep25",
    "missing",
    "cli",
];

#[test]
fn hadoop_and_cairn_read_the_same_configuration() {
    let Some(cp) = hbase::classpath_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let core = dir.path().join("core-site.xml");
    let site_path = dir.path().join("hbase-site.xml");
    std::fs::write(&core, CORE).unwrap();
    std::fs::write(&site_path, site()).unwrap();
    std::fs::write(dir.path().join("extra.xml"), EXTRA).unwrap();
    let env = [
        ("CAIRN_CONF_ITEST_SET", "set"),
        ("CAIRN_CONF_ITEST_EMPTY", ""),
    ];
    for (k, v) in env {
        std::env::set_var(k, v);
    }
    std::env::remove_var("CAIRN_CONF_ITEST_UNSET");
    let defines = ["b=cli", "cli=${a}+${b}"];

    let mut args: Vec<String> = Vec::new();
    for d in defines {
        args.push("-D".into());
        args.push(d.into());
    }
    args.push(core.display().to_string());
    args.push(site_path.display().to_string());
    args.push("--".into());
    args.extend(NAMES.iter().map(|n| n.to_string()));
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = hbase::java(&cp, "ConfDump", &arg_refs);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hadoop = String::from_utf8(out.stdout).unwrap();

    let mut c = Configuration::new();
    c.load_dir(dir.path()).unwrap();
    c.set_defines(&defines).unwrap();
    let mut cairn = String::new();
    for n in NAMES {
        match c.get(n) {
            Ok(Some(v)) => cairn.push_str(&format!("{n}={}\n", v.replace('\n', "\\n"))),
            Ok(None) => cairn.push_str(&format!("{n}?\n")),
            Err(_) => cairn.push_str(&format!("{n}!ERROR\n")),
        }
    }
    assert_eq!(cairn, hadoop, "cairn (left) and Hadoop (right) differ");
    // The comparison is not vacuous: these were expanded, overridden or refused.
    // (deep20's value needs 20 substitutions: one past Hadoop's limit.)
    for want in [
        "a=core",
        "b=cli",
        "c=cli-core",
        "envd=fallback",
        "deep19=end",
        "deep20!ERROR",
        "cli=core+cli",
    ] {
        assert!(
            hadoop.lines().any(|l| l == want),
            "{want} not in:\n{hadoop}"
        );
    }
}
