#!/usr/bin/env bash
# Proves ClientApiCheck (interop/hbase: HBase 2.6.1's own Java client, public API only) right
# by running it against a real HBase 2.6.1: a standalone HBase from Maven Central's jars
# (master, region server and ZooKeeper in one JVM, data in a temp dir), reached through the
# RPC connection registry (--bootstrap, no ZooKeeper on the client side). Every check must
# pass here before its FAIL against `cairn serve` means anything.
#
#   scripts/hbase-client-check.sh                 # bootstrap through the master's port
#   BOOTSTRAP=regionserver scripts/hbase-client-check.sh   # ... the region server's port
#   BOOTSTRAP=zk scripts/hbase-client-check.sh    # the ZooKeeper registry instead
#   KEEP=1 scripts/hbase-client-check.sh          # keep the temp dir (HBase's log) afterwards
#   MVN_OFFLINE=1 scripts/hbase-client-check.sh   # build the jars with mvn -o (no network)
#
# About a minute: jars ~5 s when built, HBase ready in ~15 s, the checks ~15 s, HBase's stop.
# Needs java 17 and mvn. Prints ClientApiCheck's lines; exits with its status.
set -euo pipefail
cd "$(dirname "$0")/.."

BOOTSTRAP=${BOOTSTRAP:-master}
work=$(mktemp -d /tmp/hbase-client-check.XXXXXX)
hbase_pid=
cleanup() {
    if [ -n "$hbase_pid" ] && kill -0 "$hbase_pid" 2>/dev/null; then
        kill -TERM "$hbase_pid" 2>/dev/null || true
        for _ in $(seq 1 40); do kill -0 "$hbase_pid" 2>/dev/null || break; sleep 0.5; done
        kill -KILL "$hbase_pid" 2>/dev/null || true
        wait "$hbase_pid" 2>/dev/null || true
    fi
    if [ -n "${KEEP:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

mvn -q -B ${MVN_OFFLINE:+-o} -f interop/hbase/pom.xml package -DskipTests
cp_jars="$(pwd)/interop/hbase/target/cairn-hbase-interop-0.1.0.jar:$(pwd)/interop/hbase/target/lib/*"

zk=$(free_port)
master=$(free_port)
rs=$(free_port)
mkdir -p "$work/conf" "$work/client"
cat >"$work/conf/hbase-site.xml" <<EOF
<configuration>
  <property><name>hbase.cluster.distributed</name><value>false</value></property>
  <property><name>hbase.rootdir</name><value>file://$work/hbase</value></property>
  <property><name>hbase.tmp.dir</name><value>$work/hbase-tmp</value></property>
  <property><name>hbase.zookeeper.property.dataDir</name><value>$work/zk</value></property>
  <property><name>hbase.zookeeper.property.clientPort</name><value>$zk</value></property>
  <property><name>hbase.master.port</name><value>$master</value></property>
  <property><name>hbase.regionserver.port</name><value>$rs</value></property>
  <property><name>hbase.unsafe.stream.capability.enforce</name><value>false</value></property>
  <property><name>hbase.wal.provider</name><value>filesystem</value></property>
  <property><name>hbase.master.info.port</name><value>-1</value></property>
  <property><name>hbase.regionserver.info.port</name><value>-1</value></property>
</configuration>
EOF
cat >"$work/conf/log4j.properties" <<'EOF'
log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n
EOF
# The client logs warnings only: its output is the checks' lines.
sed 's/rootLogger=INFO/rootLogger=WARN/' "$work/conf/log4j.properties" >"$work/client/log4j.properties"

jvm=(-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
    --add-modules jdk.unsupported --add-opens java.base/java.nio=ALL-UNNAMED
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED
    --add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens java.base/java.util=ALL-UNNAMED --add-opens java.base/java.util.concurrent=ALL-UNNAMED
    --add-exports java.base/jdk.internal.misc=ALL-UNNAMED --add-exports java.base/sun.net.dns=ALL-UNNAMED
    --add-exports java.base/sun.net.util=ALL-UNNAMED --add-exports java.security.jgss/sun.security.krb5=ALL-UNNAMED)

echo "starting HBase 2.6.1 standalone (zookeeper $zk, master $master, region server $rs) in $work"
java -Xms1g -Xmx3g "${jvm[@]}" -cp "$work/conf:$cp_jars" org.apache.hadoop.hbase.master.HMaster start \
    >"$work/hbase.log" 2>&1 &
hbase_pid=$!
started=$(date +%s)
# Ready once the master has assigned hbase:meta and finished initializing.
until grep -q "Master has completed initialization" "$work/hbase.log"; do
    if ! kill -0 "$hbase_pid" 2>/dev/null; then
        echo "HBase exited while starting; its log:" >&2
        tail -50 "$work/hbase.log" >&2
        exit 1
    fi
    if [ $(($(date +%s) - started)) -gt 180 ]; then
        echo "HBase not ready after 180 s; its log:" >&2
        tail -50 "$work/hbase.log" >&2
        exit 1
    fi
    sleep 1
done
echo "HBase ready after $(($(date +%s) - started)) s"

case "$BOOTSTRAP" in
    master) target=(--bootstrap "127.0.0.1:$master") ;;
    regionserver) target=(--bootstrap "127.0.0.1:$rs") ;;
    zk) target=(--zk "127.0.0.1:$zk") ;;
    *) echo "BOOTSTRAP must be master, regionserver or zk" >&2; exit 2 ;;
esac
set +e
java -Xmx1g "${jvm[@]}" -Dlog4j.configuration="file:$work/client/log4j.properties" \
    -cp "$cp_jars" dev.cairn.interop.ClientApiCheck "${target[@]}" 2>"$work/client.err"
status=$?
set -e
if [ "$status" != 0 ]; then
    echo "ClientApiCheck exited $status; its stderr (tail):"
    tail -40 "$work/client.err"
fi
exit "$status"
