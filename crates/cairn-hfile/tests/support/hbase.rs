//! Running HBase's own code (the jars `interop/hbase` builds from Maven Central) from tests
//! and benchmarks.

use std::path::Path;
use std::process::{Command, Output};

/// What HBase 2.6 needs on Java 17 (`../shared/FACTS.md`).
pub const JAVA_FLAGS: &[&str] = &[
    "-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true",
    "--add-modules",
    "jdk.unsupported",
    "--add-opens",
    "java.base/java.nio=ALL-UNNAMED",
    "--add-opens",
    "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.lang=ALL-UNNAMED",
    "--add-opens",
    "java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.util=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-exports",
    "java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports",
    "java.base/sun.net.dns=ALL-UNNAMED",
    "--add-exports",
    "java.base/sun.net.util=ALL-UNNAMED",
    "-Xmx2g",
];

/// The interop classpath, if `mvn -f interop/hbase/pom.xml package` has run.
pub fn classpath() -> Option<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop/hbase/target");
    let jar = dir.join("cairn-hbase-interop-0.1.0.jar");
    let lib = dir.join("lib");
    if !jar.exists() || !lib.exists() {
        return None;
    }
    Some(format!("{}:{}/*", jar.display(), lib.display()))
}

/// Runs `dev.cairn.interop.<class>` with `args`.
pub fn java(cp: &str, class: &str, args: &[&str]) -> Output {
    Command::new("java")
        .args(JAVA_FLAGS)
        .arg("-cp")
        .arg(cp)
        .arg(format!("dev.cairn.interop.{class}"))
        .args(args)
        .output()
        .expect("run java")
}

/// The interop classpath, or `None` (the caller skips its test) when the jars are not built,
/// unless `CAIRN_REQUIRE_HBASE_INTEROP` is set (the test script sets it): then a panic.
#[allow(dead_code)] // not every test target that includes this module skips this way
pub fn classpath_or_skip() -> Option<String> {
    let cp = classpath();
    if cp.is_none() {
        assert!(
            std::env::var_os("CAIRN_REQUIRE_HBASE_INTEROP").is_none(),
            "HBase interop jars are missing: run mvn -f interop/hbase/pom.xml package"
        );
        eprintln!("skipped: HBase interop jars not built (mvn -f interop/hbase/pom.xml package)");
    }
    cp
}
