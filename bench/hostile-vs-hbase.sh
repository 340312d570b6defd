#!/usr/bin/env bash
# The hostile requests of issue 33, sent raw to HBase 2.6.1 standalone and to `cairn serve`,
# answers side by side: a one-off check that cairn refuses what HBase refuses (a script, not a
# test: HBase standalone takes a minute to start). The requests are sent by
# crates/cairn-server/examples/hostile_probe.rs with cairn's own protobuf client, since HBase's
# Java client refuses most of them before sending.
#
# usage: bench/hostile-vs-hbase.sh        # writes OUT/report.md (default
#                                          # bench/results/<date>-hostile-vs-hbase)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
OUT=${OUT:-bench/results/$(date -u +%F)-hostile-vs-hbase}
case "$OUT" in /*) ;; *) OUT="$root/$OUT" ;; esac
mkdir -p "$OUT/logs"

work=$(mktemp -d /tmp/hostile-vs-hbase.XXXXXX)
server_pid=
stop_server() {
    [ -n "$server_pid" ] || return 0
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 120); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
}
trap 'stop_server; rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

cargo build --locked -p cairn-cli
cargo build --locked -p cairn-server --example hostile_probe
probe="$root/target/debug/examples/hostile_probe"
cairn="$root/target/debug/cairn"
interop=interop/hbase/target/cairn-hbase-interop-0.1.0.jar
[ -f "$interop" ] || mvn -q -B -f interop/hbase/pom.xml package -DskipTests
jars="$root/$interop:$root/interop/hbase/target/lib/*"
jvm=(-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
    --add-modules jdk.unsupported --add-opens java.base/java.nio=ALL-UNNAMED
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED
    --add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens java.base/java.util=ALL-UNNAMED --add-opens java.base/java.util.concurrent=ALL-UNNAMED
    --add-exports java.base/jdk.internal.misc=ALL-UNNAMED --add-exports java.base/sun.net.dns=ALL-UNNAMED
    --add-exports java.base/sun.net.util=ALL-UNNAMED)

# ---- HBase 2.6.1 standalone ---------------------------------------------------------------
mkdir -p "$work/hbase-conf" "$work/hbase/work"
zk=$(free_port); master=$(free_port); rs=$(free_port)
cat >"$work/hbase-conf/hbase-site.xml" <<EOF
<configuration>
  <property><name>hbase.cluster.distributed</name><value>false</value></property>
  <property><name>hbase.rootdir</name><value>file://$work/hbase/root</value></property>
  <property><name>hbase.tmp.dir</name><value>$work/hbase/tmp</value></property>
  <property><name>hbase.zookeeper.property.dataDir</name><value>$work/hbase/zk</value></property>
  <property><name>hbase.zookeeper.property.clientPort</name><value>$zk</value></property>
  <property><name>hbase.master.port</name><value>$master</value></property>
  <property><name>hbase.regionserver.port</name><value>$rs</value></property>
  <property><name>hbase.unsafe.stream.capability.enforce</name><value>false</value></property>
  <property><name>hbase.wal.provider</name><value>filesystem</value></property>
  <property><name>hbase.master.info.port</name><value>-1</value></property>
  <property><name>hbase.regionserver.info.port</name><value>-1</value></property>
</configuration>
EOF
cat >"$work/hbase-conf/log4j.properties" <<'EOF'
log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n
EOF
java -Xmx2g "${jvm[@]}" -Dlog4j.configuration="file:$work/hbase-conf/log4j.properties" \
    -cp "$work/hbase-conf:$jars" org.apache.hadoop.hbase.master.HMaster start \
    >"$OUT/logs/hbase.log" 2>&1 &
server_pid=$!
started=$(date +%s)
until grep -q "Master has completed initialization" "$OUT/logs/hbase.log"; do
    kill -0 "$server_pid" 2>/dev/null || { tail -50 "$OUT/logs/hbase.log" >&2; exit 1; }
    [ $(($(date +%s) - started)) -lt 240 ] || { echo "HBase not up after 240 s" >&2; exit 1; }
    sleep 1
done
# Standalone HBase runs its region server (which holds hbase:meta) on a port of its own.
"$probe" "127.0.0.1:$master" "127.0.0.1:$rs" "$work/hbase/root" "$work/hbase/work" >"$work/hbase.tsv"
stop_server

# ---- cairn serve ----------------------------------------------------------------------------
mkdir -p "$work/cairn/work"
port=$(free_port)
"$cairn" serve --data "$work/cairn/root" --thrift 127.0.0.1:0 --http "" \
    --hbase "127.0.0.1:$port" >"$OUT/logs/cairn.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do grep -q "hbase rpc on" "$OUT/logs/cairn.log" && break; sleep 0.5; done
"$probe" "127.0.0.1:$port" "127.0.0.1:$port" "$work/cairn/root" "$work/cairn/work" >"$work/cairn.tsv"
stop_server

python3 - "$work/hbase.tsv" "$work/cairn.tsv" >"$OUT/report.md" <<'EOF'
import sys
def rows(p):
    return [l.rstrip("\n").split("\t") + ["", ""] for l in open(p) if l.strip()]
h, c = rows(sys.argv[1]), rows(sys.argv[2])
print("# Hostile requests: HBase 2.6.1 standalone and cairn serve\n")
print("Sent raw by `crates/cairn-server/examples/hostile_probe.rs` (`bench/hostile-vs-hbase.sh`).\n")
print("| request | HBase 2.6.1 | on disk (HBase) | cairn | on disk (cairn) |")
print("|---|---|---|---|---|")
for a, b in zip(h, c):
    cell = lambda s: s.replace("|", "\\|")
    print(f"| {a[0]} | {cell(a[1])} | {cell(a[2])} | {cell(b[1])} | {cell(b[2])} |")
EOF
cat "$OUT/report.md"
