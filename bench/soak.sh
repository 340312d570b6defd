#!/usr/bin/env bash
# Soak: does `cairn serve` stay inside its configured memory while flushes and compactions run
# for a long time under mixed reads and writes, and does its tail latency stay flat? A
# benchmark, not a test (not run in CI): minutes long, and the numbers depend on the machine.
#
# Starts the release `cairn serve` on a fresh data directory with a small block cache
# (hfile.block.cache.size) and compaction threshold, creates `usertable` through HBase 2.6.1's
# own Java client (native RPC) with a small MEMSTORE_FLUSHSIZE and REGIONS regions, loads
# RECORDS rows with YCSB 0.17.0 (the HBase binding in interop/hbase), then runs a YCSB mix of
# reads, updates and short scans for SOAK_SECS seconds, so memstores flush every few seconds
# and compactions follow. Meanwhile bench/soak.py samples the server's RSS (/proc/PID/status)
# every second, and every 5 s its /proc/PID/smaps_rollup and its /jmx memory gauges (memstore,
# block cache); YCSB's status lines (-s) give ops/s and p99 latency per STATUS_SECS interval
# (YCSB's hdrhistogram status is per interval, not cumulative). A progress line with the time
# left is printed every STATUS_SECS.
#
# The bound (issue 33): block cache + the global memstore limit
# (hbase.regionserver.global.memstore.size, GLOBAL_MEMSTORE_MB: every memstore of the server
# together, flush snapshots included; writes wait at it) + 2 x WAL_MB (the mapped WAL
# segments) + ALLOWANCE_MB, the documented allowance for everything no setting bounds: the
# binary, thread stacks, WAL and RPC buffers, indexes and Bloom filters of open files, and the
# allocator's per-thread pages, which grow with the number of RPC handler threads that
# allocate: 64 MiB + 8 MiB per handler (HANDLERS, hbase.regionserver.handler.count, 30 as in
# HBase: 304 MiB). The exit status is 1 if the RSS ever exceeded it (the 1 s samples or the
# kernel's VmHWM), or if, in a run of 10 minutes or more, RSS grew by more than
# FLAT_MIB_PER_MIN over the second half of the mixed load (not flat at constant load); 0 if
# not.
#
# Writes to OUT: soak.csv (per interval: time, RSS, ops/s, p99 per operation, memstore and
# block cache), rss.csv (every 1 s sample), mem.jsonl (smaps_rollup + /jmx every 5 s), soak.md
# (settings, bound, verdict, a summary per time window, where the memory is at the end),
# soak.png (RSS over time with the bound; p99 and ops/s over time), logs/ (server, YCSB, the
# final smaps_rollup and largest mappings, mimalloc's statistics at exit).
#
# usage: nice -n 10 bench/soak.sh            # the full 20 minutes
#        SOAK_SECS=120 bench/soak.sh          # a short check of the script
# environment (defaults): SOAK_SECS (1200), CACHE_MB (64), FLUSH_MB (16), BLOCK_MULTIPLIER (4),
#   COMPACTION_THRESHOLD (3), REGIONS (2; at most 10), GLOBAL_MEMSTORE_MB (32: below the
#   regions' flush sizes together, so flushes for memory run too), HANDLERS (30),
#   ALLOWANCE_MB (64 + 8 x HANDLERS; BASELINE_MB is the old name), FLAT_MIB_PER_MIN (2),
#   WAL_MB (32, the WAL segment size; 2 segments are mapped and counted in the bound),
#   RECORDS (200000 rows
#   of 10 x 100 B), THREADS (4 YCSB client threads), TARGET (0 = unthrottled; else total ops/s),
#   READ (0.5), UPDATE (0.45), SCAN (0.05; scans of up to MAX_SCAN (100) rows), DISTRIBUTION
#   (uniform), STATUS_SECS (10), OUT (bench/results/<UTC date>-soak-<commit>), CAIRN (the
#   binary; default: build target/release/cairn with cargo), DATA_PARENT (/tmp), KEEP=1 (keep
#   the data directory), MVN_OFFLINE=1, VENV (target/bench-venv, for matplotlib),
#   SERVER_OPTS (more `cairn serve` options), THP_DISABLE=1 (run the server with transparent
#   huge pages off: tells allocator granularity from live data).
# Needs java 17 and mvn (once, for interop/hbase's jars), python3.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

SOAK_SECS=${SOAK_SECS:-1200}
CACHE_MB=${CACHE_MB:-64}
FLUSH_MB=${FLUSH_MB:-16}
BLOCK_MULTIPLIER=${BLOCK_MULTIPLIER:-4}
COMPACTION_THRESHOLD=${COMPACTION_THRESHOLD:-3}
REGIONS=${REGIONS:-2}
GLOBAL_MEMSTORE_MB=${GLOBAL_MEMSTORE_MB:-32}
HANDLERS=${HANDLERS:-30}
ALLOWANCE_MB=${ALLOWANCE_MB:-${BASELINE_MB:-$((64 + 8 * HANDLERS))}}
FLAT_MIB_PER_MIN=${FLAT_MIB_PER_MIN:-2}
# WAL segment size (hbase.regionserver.hlog.blocksize x logroll.multiplier 0.5): the active
# segment and the next, prepared one are memory-mapped, so up to 2 x WAL_MB of the RSS is the
# WAL's file-backed pages (page cache the kernel can reclaim, but counted in RSS).
WAL_MB=${WAL_MB:-32}
RECORDS=${RECORDS:-200000}
THREADS=${THREADS:-4}
TARGET=${TARGET:-0}
READ=${READ:-0.5}
UPDATE=${UPDATE:-0.45}
SCAN=${SCAN:-0.05}
MAX_SCAN=${MAX_SCAN:-100}
DISTRIBUTION=${DISTRIBUTION:-uniform}
STATUS_SECS=${STATUS_SECS:-10}
venv=${VENV:-target/bench-venv}
YCSB_BINDING=dev.cairn.interop.ycsb.HBaseBinding

if [ "$REGIONS" -lt 1 ] || [ "$REGIONS" -gt 10 ]; then
    echo "REGIONS=$REGIONS: 1 to 10 (split points are user1..user9)" >&2
    exit 2
fi

# ---- binaries and jars -------------------------------------------------------------------
if [ -z "${CAIRN:-}" ]; then
    echo "== building release cairn (nice)" >&2
    nice -n 10 cargo build --release --locked -q -p cairn-cli >&2
    CAIRN=target/release/cairn
    label=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
    # "+dirty": the binary was built from uncommitted changes (edits to bench/ do not count).
    git status --porcelain --untracked-files=no -- crates Cargo.toml Cargo.lock 2>/dev/null |
        grep -q . && label="$label+dirty"
else
    label=${LABEL:-$(basename "$CAIRN")}
fi
case "$CAIRN" in /*) ;; *) CAIRN="$root/$CAIRN" ;; esac
[ -x "$CAIRN" ] || { echo "no cairn binary at $CAIRN" >&2; exit 1; }

OUT=${OUT:-bench/results/$(date -u +%F)-soak-$label}
case "$OUT" in /*) ;; *) OUT="$root/$OUT" ;; esac

interop=interop/hbase/target/cairn-hbase-interop-0.1.0.jar
if [ ! -f "$interop" ] || [ -n "$(find interop/hbase/src interop/hbase/pom.xml -newer "$interop" -type f | head -1)" ]; then
    echo "== building interop/hbase's jars (mvn)" >&2
    nice -n 10 mvn -q -B -Dstyle.color=never ${MVN_OFFLINE:+-o} -f interop/hbase/pom.xml package -DskipTests >&2
fi
jars="$root/$interop:$root/interop/hbase/target/lib/*"

plot_python=python3
if "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
    plot_python=$venv/bin/python
elif ! python3 -c 'import matplotlib' 2>/dev/null; then
    echo "== installing matplotlib into $venv (pip, for the plot only)" >&2
    if { [ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2; } &&
        "$venv/bin/pip" install -q --disable-pip-version-check matplotlib >&2; then
        plot_python=$venv/bin/python
    else
        echo "note: no plot: could not install matplotlib into $venv" >&2
    fi
fi

work=$(mktemp -d "${DATA_PARENT:-/tmp}/cairn-soak.XXXXXX")
server_pid=
sampler_pid=
cleanup() {
    [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null || true
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [ -n "${KEEP:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# The table: HBase's own client sets MEMSTORE_FLUSHSIZE in the descriptor (cairn serve has no
# server-wide flush size property) and reads the descriptor back, so a flush size cairn did
# not keep shows here, not as a soak that never flushes.
mkdir -p "$work/classes" "$work/client"
cat >"$work/SoakTable.java" <<'EOF'
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

/** SoakTable BOOTSTRAP TABLE FAMILY FLUSH_BYTES REGIONS: creates the soak's table. */
public class SoakTable {
  public static void main(String[] a) throws Exception {
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    conf.set("hbase.client.bootstrap.servers", a[0]);
    TableName name = TableName.valueOf(a[1]);
    long flush = Long.parseLong(a[3]);
    int regions = Integer.parseInt(a[4]);
    TableDescriptor td = TableDescriptorBuilder.newBuilder(name)
        .setMemStoreFlushSize(flush)
        .setColumnFamily(ColumnFamilyDescriptorBuilder.of(a[2]))
        .build();
    // YCSB's hashed keys are "user" and a decimal number: split on its first digit.
    byte[][] splits = new byte[regions - 1][];
    for (int i = 1; i < regions; i++) {
      splits[i - 1] = Bytes.toBytes("user" + (i * 10 / regions));
    }
    try (Connection c = ConnectionFactory.createConnection(conf); Admin admin = c.getAdmin()) {
      if (regions > 1) {
        admin.createTable(td, splits);
      } else {
        admin.createTable(td);
      }
      TableDescriptor got = admin.getDescriptor(name);
      int n = admin.getRegions(name).size();
      System.out.println(got.getMemStoreFlushSize() + " " + n);
      if (got.getMemStoreFlushSize() != flush || n != regions) {
        System.err.println("asked for flush size " + flush + " and " + regions
            + " regions; the server has " + got.getMemStoreFlushSize() + " and " + n);
        System.exit(1);
      }
    }
  }
}
EOF
javac -nowarn -d "$work/classes" -cp "$jars" "$work/SoakTable.java"

jvm=(-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
    --add-modules jdk.unsupported --add-opens java.base/java.nio=ALL-UNNAMED
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED
    --add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens java.base/java.util=ALL-UNNAMED --add-opens java.base/java.util.concurrent=ALL-UNNAMED
    --add-exports java.base/jdk.internal.misc=ALL-UNNAMED --add-exports java.base/sun.net.dns=ALL-UNNAMED
    --add-exports java.base/sun.net.util=ALL-UNNAMED --add-exports java.security.jgss/sun.security.krb5=ALL-UNNAMED)
cat >"$work/client/log4j.properties" <<'EOF'
log4j.rootLogger=WARN,console
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{1}: %m%n
EOF
client_java() {
    java -Xms256m -Xmx1g "${jvm[@]}" -Dlog4j.configuration="file:$work/client/log4j.properties" \
        -cp "$work/client:$work/classes:$jars" "$@"
}

# ---- server ------------------------------------------------------------------------------
rm -rf "$OUT"
mkdir -p "$OUT/logs"
phases=$OUT/logs/phases
: >"$phases"
cache_bytes=$((CACHE_MB * 1048576))
flush_bytes=$((FLUSH_MB * 1048576))
global_bytes=$((GLOBAL_MEMSTORE_MB * 1048576))
bound_bytes=$((cache_bytes + global_bytes + 2 * WAL_MB * 1048576 + ALLOWANCE_MB * 1048576))
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rpc_port=$(free_port)
server_log=$OUT/logs/server.log
echo "== cairn serve ($label): block cache $CACHE_MB MiB, global memstore limit" \
    "$GLOBAL_MEMSTORE_MB MiB, flush size $FLUSH_MB MiB x $REGIONS regions, compaction threshold" \
    "$COMPACTION_THRESHOLD, $HANDLERS RPC handlers; bound $((bound_bytes / 1048576)) MiB" \
    "(with a $ALLOWANCE_MB MiB allowance)" >&2
# MIMALLOC_SHOW_STATS: the allocator's own account (peak committed, reserved) at exit.
# THP_DISABLE=1: prctl(PR_SET_THP_DISABLE) before exec (inherited across it), so the
# allocator's huge-page advice is ignored and RSS counts touched 4 KiB pages only.
launch=()
if [ -n "${THP_DISABLE:-}" ]; then
    launch=(python3 -c 'import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).prctl(41, 1, 0, 0, 0) != 0:
    sys.exit("prctl(PR_SET_THP_DISABLE) failed")
os.execv(sys.argv[1], sys.argv[1:])')
fi
# SERVER_OPTS: more `cairn serve` options, split on spaces (e.g. "-D hbase.regionserver.handler.count=4").
# shellcheck disable=SC2086
MIMALLOC_SHOW_STATS=1 "${launch[@]}" "$CAIRN" serve --data "$work/data" --hbase "127.0.0.1:$rpc_port" \
    --thrift 127.0.0.1:0 --http 127.0.0.1:0 --info "" \
    -D "hfile.block.cache.size=$cache_bytes" \
    -D "hbase.hstore.compactionThreshold=$COMPACTION_THRESHOLD" \
    -D "hbase.hregion.memstore.block.multiplier=$BLOCK_MULTIPLIER" \
    -D "hbase.regionserver.global.memstore.size=$global_bytes" \
    -D "hbase.regionserver.handler.count=$HANDLERS" \
    -D "hbase.regionserver.hlog.blocksize=$((2 * WAL_MB * 1048576))" \
    ${SERVER_OPTS:-} >"$server_log" 2>&1 &
server_pid=$!
echo "serve $(date +%s.%N)" >>"$phases"
for _ in $(seq 1 120); do
    grep -q "http on" "$server_log" && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$server_log" >&2; echo "cairn serve exited" >&2; exit 1; }
    sleep 0.5
done
grep -q "http on" "$server_log" || { cat "$server_log" >&2; echo "cairn serve not up after 60 s" >&2; exit 1; }
http=$(grep -o 'http on [0-9.:]*' "$server_log" | cut -d' ' -f3)
cat >"$work/client/hbase-site.xml" <<EOF
<configuration>
  <property><name>hbase.client.registry.impl</name><value>org.apache.hadoop.hbase.client.RpcConnectionRegistry</value></property>
  <property><name>hbase.client.bootstrap.servers</name><value>127.0.0.1:$rpc_port</value></property>
</configuration>
EOF

"$plot_python" bench/soak.py sample --pid "$server_pid" --http "$http" --out "$OUT" \
    --soak-secs "$SOAK_SECS" --status-secs "$STATUS_SECS" --bound "$bound_bytes" &
sampler_pid=$!

read -r got_flush got_regions < <(client_java SoakTable "127.0.0.1:$rpc_port" usertable family \
    "$flush_bytes" "$REGIONS" 2>"$OUT/logs/create.log") ||
    { cat "$OUT/logs/create.log" >&2; echo "creating usertable failed" >&2; exit 1; }
echo "== usertable: MEMSTORE_FLUSHSIZE $got_flush, $got_regions regions" >&2

ycsb() { # PHASE_NAME YCSB_MODE [OPTIONS...]
    local name=$1 mode=$2
    shift 2
    echo "$name $(date +%s.%N)" >>"$phases"
    client_java site.ycsb.Client "$mode" -s -db "$YCSB_BINDING" \
        -p workload=site.ycsb.workloads.CoreWorkload -p columnfamily=family \
        -p recordcount="$RECORDS" -p status.interval="$STATUS_SECS" \
        -p measurementtype=hdrhistogram -threads "$THREADS" "$@" \
        >"$OUT/logs/ycsb-$name.out" 2>"$OUT/logs/ycsb-$name.log"
}
echo "== loading $RECORDS rows (YCSB, $THREADS threads)" >&2
ycsb load -load -p operationcount="$RECORDS" || { tail -20 "$OUT/logs/ycsb-load.log" >&2; exit 1; }
echo "== mixed load for $SOAK_SECS s: read $READ, update $UPDATE, scan $SCAN ($DISTRIBUTION keys)" >&2
throttle=()
[ "$TARGET" != 0 ] && throttle=(-target "$TARGET")
ycsb run -t -p operationcount=2000000000 -p maxexecutiontime="$SOAK_SECS" \
    -p readproportion="$READ" -p updateproportion="$UPDATE" -p scanproportion="$SCAN" \
    -p insertproportion=0 -p maxscanlength="$MAX_SCAN" -p requestdistribution="$DISTRIBUTION" \
    "${throttle[@]}" || { tail -20 "$OUT/logs/ycsb-run.log" >&2; exit 1; }
echo "end $(date +%s.%N)" >>"$phases"

# Where the memory is before the orderly stop (which flushes the memstores).
cp "/proc/$server_pid/smaps_rollup" "$OUT/logs/smaps_rollup.txt"
python3 - "$server_pid" >"$OUT/logs/smaps_largest.txt" <<'EOF'
import sys
maps, cur = [], None
for line in open(f"/proc/{sys.argv[1]}/smaps"):
    f = line.split()
    if "-" in f[0] and not f[0].endswith(":"):
        cur = [line.strip(), 0]
        maps.append(cur)
    elif f[0] == "Rss:":
        cur[1] = int(f[1])
print("largest mappings by RSS (KiB), just before shutdown")
for m, rss in sorted(maps, key=lambda m: -m[1])[:25]:
    print(f"{rss:>10}  {m}")
EOF
kill "$sampler_pid" 2>/dev/null || true
wait "$sampler_pid" 2>/dev/null || true
sampler_pid=
kill -TERM "$server_pid"
wait "$server_pid" || true
server_pid=

notes=
[ -n "${SERVER_OPTS:-}" ] && notes="server options \`$SERVER_OPTS\`"
[ -n "${THP_DISABLE:-}" ] && notes="${notes:+$notes; }the server ran with transparent huge pages disabled (prctl PR_SET_THP_DISABLE)"
status=0
"$plot_python" bench/soak.py report --out "$OUT" --label "$label" --bound "$bound_bytes" \
    --cache "$cache_bytes" --flush "$flush_bytes" --multiplier "$BLOCK_MULTIPLIER" \
    --regions "$REGIONS" --baseline "$((ALLOWANCE_MB * 1048576))" --wal "$((WAL_MB * 1048576))" \
    --global-memstore "$global_bytes" --handlers "$HANDLERS" --flat "$FLAT_MIB_PER_MIN" \
    --compaction-threshold "$COMPACTION_THRESHOLD" --records "$RECORDS" --threads "$THREADS" \
    --target "$TARGET" --mix "read $READ, update $UPDATE, scan $SCAN (up to $MAX_SCAN rows)" \
    --distribution "$DISTRIBUTION" --soak-secs "$SOAK_SECS" --notes "$notes" || status=$?
echo "== wrote $OUT/soak.md, soak.csv$( [ -f "$OUT/soak.png" ] && echo ", soak.png")" >&2
exit "$status"
