#!/usr/bin/env bash
# `cairn importtsv` against HBase 2.6.1's own ImportTsv with bulk output
# (org.apache.hadoop.hbase.mapreduce.ImportTsv, -Dimporttsv.bulk.output, in Hadoop 3.3.5's
# MapReduce local runner), on the same generated TSV, writing HFiles for the same table: one
# family, REGIONS regions split at the same keys, HBase's default family settings.
#
# HBase's ImportTsv always talks to a cluster (table descriptor, region start keys), so a
# `cairn serve` answers it over native RPC (the RPC connection registry, as
# bench/pe-vs-hbase.sh connects PE); CLUSTER=hbase starts HBase 2.6.1 standalone instead (as
# bench/pe-vs-hbase.sh does). The table is created with the split keys by bench/importtsv/
# SplitTable.java. cairn importtsv reads the same split keys with --splits (no server).
#
# Per round, each tool runs once (the order alternates) into a fresh output directory; wall
# time and the tool process's user and system CPU come from /usr/bin/time (HBase's map and
# reduce tasks run inside its JVM in the local runner, so that is all of its work; the
# cluster's few RPCs are not counted). Afterwards every output file's cell count is read back
# with `cairn hfile -m` and both totals must equal ROWS x COLUMNS.
#
#   bench/importtsv-vs-hbase.sh                      # ROWS=1000000 ROUNDS=3
#   ROWS=200000 ROUNDS=3 bench/importtsv-vs-hbase.sh # smaller
#
# Settings (environment): ROWS (1000000), ROUNDS (3), COLUMNS (3 value columns), VALUE_SIZE
# (40 bytes), REGIONS (4), SORT_MEMORY (64M, cairn's --sort-memory default), TASKS (2: HBase's
# mapreduce.local.map/reduce.tasks.maximum), CLIENT_HEAP (4g), CLUSTER (cairn | hbase),
# CAIRN_BIN (default: target/release/cairn, built with cargo when unset), OUT (default
# bench/results/<date>-importtsv-<commit>), BIN_NOTE (how CAIRN_BIN was built, for the
# report), KEEP=1 (keep the scratch directory),
# MVN_OFFLINE=1. Needs java 17, mvn (once, for interop/hbase's jars), python3.
# Not part of the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-3}
COLUMNS=${COLUMNS:-3}
VALUE_SIZE=${VALUE_SIZE:-40}
REGIONS=${REGIONS:-4}
SORT_MEMORY=${SORT_MEMORY:-64M}
TASKS=${TASKS:-2}
CLIENT_HEAP=${CLIENT_HEAP:-4g}
CLUSTER=${CLUSTER:-cairn}
HBASE_HEAP_MB=${HBASE_HEAP_MB:-2048}
commit=$(git rev-parse --short HEAD)
OUT=${OUT:-bench/results/$(date -u +%F)-importtsv-$commit}
case "$OUT" in /*) ;; *) OUT="$root/$OUT" ;; esac

work=$(mktemp -d /tmp/importtsv-vs-hbase.XXXXXX)
server_pid=
cleanup() {
    stop_server || true
    if [ -n "${KEEP:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# ---- binaries and jars -------------------------------------------------------------------
if [ -z "${CAIRN_BIN:-}" ]; then
    cargo build --release --locked -p cairn-cli
    CAIRN_BIN=target/release/cairn
    BIN_NOTE=${BIN_NOTE:-"release build"}
fi
BIN_NOTE=${BIN_NOTE:-"CAIRN_BIN=$CAIRN_BIN"}
case "$CAIRN_BIN" in /*) ;; *) CAIRN_BIN="$root/$CAIRN_BIN" ;; esac
[ -x "$CAIRN_BIN" ] || { echo "no cairn binary at $CAIRN_BIN" >&2; exit 1; }

interop=interop/hbase/target/cairn-hbase-interop-0.1.0.jar
if [ ! -f "$interop" ] || [ -n "$(find interop/hbase/src interop/hbase/pom.xml -newer "$interop" -type f | head -1)" ]; then
    mvn -q -B -Dstyle.color=never ${MVN_OFFLINE:+-o} -f interop/hbase/pom.xml package -DskipTests
fi
ls interop/hbase/target/lib/hadoop-mapreduce-client-common-*.jar >/dev/null 2>&1 || {
    echo "hadoop-mapreduce-client-common is not in interop/hbase/target/lib: rerun mvn package" >&2
    exit 1
}
jars="$root/$interop:$root/interop/hbase/target/lib/*"
mkdir -p "$work/classes"
javac -nowarn -d "$work/classes" -cp "$jars" bench/importtsv/SplitTable.java

jvm=(-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
    --add-modules jdk.unsupported --add-opens java.base/java.nio=ALL-UNNAMED
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED
    --add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens java.base/java.util=ALL-UNNAMED --add-opens java.base/java.util.concurrent=ALL-UNNAMED
    --add-exports java.base/jdk.internal.misc=ALL-UNNAMED --add-exports java.base/sun.net.dns=ALL-UNNAMED
    --add-exports java.base/sun.net.util=ALL-UNNAMED --add-exports java.security.jgss/sun.security.krb5=ALL-UNNAMED)

mkdir -p "$OUT/logs" "$work/client"
cat >"$work/client/log4j.properties" <<'EOF'
log4j.rootLogger=WARN,console
log4j.logger.org.apache.hadoop.mapreduce.Job=INFO
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{1}: %m%n
EOF
client_conf() { # $1: bootstrap HOST:PORT
    cat >"$work/client/hbase-site.xml" <<EOF
<configuration>
  <property><name>hbase.client.registry.impl</name><value>org.apache.hadoop.hbase.client.RpcConnectionRegistry</value></property>
  <property><name>hbase.client.bootstrap.servers</name><value>$1</value></property>
</configuration>
EOF
}
client_java() {
    java -Xms512m -Xmx"$CLIENT_HEAP" "${jvm[@]}" -Dlog4j.configuration="file:$work/client/log4j.properties" \
        -cp "$work/client:$work/classes:$jars" "$@"
}

# ---- the cluster HBase's ImportTsv asks (the same shape as bench/pe-vs-hbase.sh's) ----------
start_cairn() { # $1: log file
    local port
    port=$(free_port)
    "$CAIRN_BIN" serve --data "$work/cluster/cairn" --hbase "127.0.0.1:$port" --thrift 127.0.0.1:0 \
        --http "" --info "" >"$1" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 120); do
        grep -qs "hbase rpc on" "$1" && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$1" >&2; echo "cairn serve exited" >&2; exit 1; }
        sleep 0.5
    done
    grep -q "hbase rpc on" "$1" || { cat "$1" >&2; echo "cairn serve not up after 60 s" >&2; exit 1; }
    client_conf "127.0.0.1:$port"
}

start_hbase() { # $1: log file
    mkdir -p "$work/hbase-conf"
    local zk master rs started
    zk=$(free_port)
    master=$(free_port)
    rs=$(free_port)
    cat >"$work/hbase-conf/hbase-site.xml" <<EOF
<configuration>
  <property><name>hbase.cluster.distributed</name><value>false</value></property>
  <property><name>hbase.rootdir</name><value>file://$work/cluster/hbase</value></property>
  <property><name>hbase.tmp.dir</name><value>$work/cluster/hbase-tmp</value></property>
  <property><name>hbase.zookeeper.property.dataDir</name><value>$work/cluster/zk</value></property>
  <property><name>hbase.zookeeper.property.clientPort</name><value>$zk</value></property>
  <property><name>hbase.master.port</name><value>$master</value></property>
  <property><name>hbase.regionserver.port</name><value>$rs</value></property>
  <property><name>hbase.unsafe.stream.capability.enforce</name><value>false</value></property>
  <property><name>hbase.wal.provider</name><value>filesystem</value></property>
  <property><name>hbase.master.info.port</name><value>-1</value></property>
  <property><name>hbase.regionserver.info.port</name><value>-1</value></property>
</configuration>
EOF
    java -Xms"${HBASE_HEAP_MB}m" -Xmx"${HBASE_HEAP_MB}m" "${jvm[@]}" \
        -cp "$work/hbase-conf:$jars" org.apache.hadoop.hbase.master.HMaster start >"$1" 2>&1 &
    server_pid=$!
    started=$(date +%s)
    until grep -q "Master has completed initialization" "$1"; do
        kill -0 "$server_pid" 2>/dev/null || { tail -50 "$1" >&2; echo "HBase exited while starting" >&2; exit 1; }
        if [ $(($(date +%s) - started)) -gt 240 ]; then
            tail -50 "$1" >&2
            echo "HBase not ready after 240 s" >&2
            exit 1
        fi
        sleep 1
    done
    client_conf "127.0.0.1:$master"
}

stop_server() {
    [ -n "$server_pid" ] || return 0
    if kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        for _ in $(seq 1 120); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.5; done
        kill -KILL "$server_pid" 2>/dev/null || true
    fi
    wait "$server_pid" 2>/dev/null || true
    server_pid=
}

# ---- input ---------------------------------------------------------------------------------
# Rows "r" + 10 random digits (distinct) in random order; split keys "r<d>" at even steps of the first
# digit(s); COLUMNS values of VALUE_SIZE printable bytes.
input="$work/input.tsv"
splits="$work/splits.txt"
python3 - "$ROWS" "$COLUMNS" "$VALUE_SIZE" "$REGIONS" "$input" "$splits" <<'EOF'
import random, sys
rows, cols, size, regions, out, splits = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
rng = random.Random(26)
alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
pool = ["".join(rng.choice(alphabet) for _ in range(size + 64))]
with open(out, "w") as f:
    # distinct keys, so every run must write exactly rows x cols cells
    for k in rng.sample(range(10**10), rows):
        key = "r%010d" % k
        vals = []
        for c in range(cols):
            o = rng.randrange(64)
            vals.append(pool[0][o:o + size])
        f.write(key + "\t" + "\t".join(vals) + "\n")
with open(splits, "w") as f:
    for i in range(1, regions):
        f.write("r%010d\n" % (i * 10**10 // regions))
EOF
input_bytes=$(stat -c %s "$input")
columns="HBASE_ROW_KEY"
for c in $(seq 1 "$COLUMNS"); do columns="$columns,f:c$c"; done
echo "input: $ROWS rows, $input_bytes bytes; $REGIONS regions; columns $columns"

log="$OUT/logs/cluster-$CLUSTER.log"
"start_$CLUSTER" "$log"
client_java SplitTable importtsv_bench f "$splits" >"$OUT/logs/split-table.log" 2>&1 || {
    cat "$OUT/logs/split-table.log" >&2
    exit 1
}

results="$OUT/runs.tsv"
printf 'tool\tround\twall_s\tuser_s\tsys_s\tcells\tfiles\tbytes\tload1\n' >"$results"

# cells and files of an output directory, read back with cairn's HFile tool
count_output() { # DIR -> "cells files bytes"
    local cells=0 files=0 bytes=0 f n
    while IFS= read -r f; do
        n=$("$CAIRN_BIN" hfile -m -f "$f" | grep -o 'entries=[0-9]*' | head -1 | cut -d= -f2)
        cells=$((cells + n))
        files=$((files + 1))
        bytes=$((bytes + $(stat -c %s "$f")))
    done < <(find "$1" -mindepth 2 -maxdepth 2 -type f ! -name '_*' ! -name '.*' | sort)
    echo "$cells $files $bytes"
}

run_tool() { # TOOL ROUND
    local tool=$1 round=$2 out="$work/out-$1-$2" log="$OUT/logs/$1-r$2.log" t
    rm -rf "$out"
    # the machine's 1-minute load average before the run: wall times on a shared machine
    # mean little without it
    load1=$(cut -d' ' -f1 /proc/loadavg)
    t="$work/time-$tool-$round"
    case "$tool" in
        cairn)
            /usr/bin/time -f '%e %U %S' -o "$t" "$CAIRN_BIN" importtsv \
                "-Dimporttsv.columns=$columns" "-Dimporttsv.bulk.output=$out" \
                --splits "$splits" --sort-memory "$SORT_MEMORY" \
                importtsv_bench "$input" >"$log" 2>&1
            ;;
        hbase)
            /usr/bin/time -f '%e %U %S' -o "$t" \
                java -Xms512m -Xmx"$CLIENT_HEAP" "${jvm[@]}" \
                -Dlog4j.configuration="file:$work/client/log4j.properties" \
                -cp "$work/client:$work/classes:$jars" org.apache.hadoop.hbase.mapreduce.ImportTsv \
                -Dmapreduce.framework.name=local -Dfs.defaultFS=file:/// \
                -Dmapreduce.local.map.tasks.maximum="$TASKS" \
                -Dmapreduce.local.reduce.tasks.maximum="$TASKS" \
                -Dmapreduce.map.speculative=false -Dmapreduce.reduce.speculative=false \
                -Dhbase.bulkload.locality.sensitive.enabled=false \
                -Dhadoop.tmp.dir="$work/hadoop-tmp" -Dhbase.fs.tmp.dir="$work/hbase-staging" \
                -Dcreate.table=no "-Dimporttsv.columns=$columns" "-Dimporttsv.bulk.output=$out" \
                importtsv_bench "$input" >"$log" 2>&1
            ;;
    esac || { tail -40 "$log" >&2; echo "$tool round $round failed" >&2; exit 1; }
    read -r wall user sys <"$t"
    read -r cells files bytes < <(count_output "$out")
    if [ "$cells" -ne $((ROWS * COLUMNS)) ]; then
        echo "$tool round $round wrote $cells cells, expected $((ROWS * COLUMNS))" >&2
        exit 1
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$round" "$wall" "$user" "$sys" \
        "$cells" "$files" "$bytes" "$load1" >>"$results"
    echo "round $round $tool: ${wall} s wall, ${user} s user, ${sys} s sys, $files files, $bytes bytes"
    rm -rf "$out"
}

for round in $(seq 1 "$ROUNDS"); do
    if [ $((round % 2)) -eq 1 ]; then order="cairn hbase"; else order="hbase cairn"; fi
    for tool in $order; do run_tool "$tool" "$round"; done
done
stop_server

python3 - "$results" "$OUT/report.md" "$ROWS" "$input_bytes" "$REGIONS" "$COLUMNS" "$VALUE_SIZE" \
    "$CLUSTER" "$TASKS" "$SORT_MEMORY" "$commit" "$BIN_NOTE" <<'EOF'
import csv, statistics, sys
results, report = sys.argv[1], sys.argv[2]
rows, input_bytes, regions, cols, size, cluster, tasks, sortmem, commit, binary = sys.argv[3:]
runs = list(csv.DictReader(open(results), delimiter="\t"))
by = {}
for r in runs:
    by.setdefault(r["tool"], []).append(r)
def stats(tool):
    rs = by[tool]
    wall = [float(r["wall_s"]) for r in rs]
    cpu = [float(r["user_s"]) + float(r["sys_s"]) for r in rs]
    return min(wall), statistics.median(wall), min(cpu), statistics.median(cpu), rs[0]
lines = []
lines.append(f"# cairn importtsv vs HBase 2.6.1 ImportTsv (bulk output, MapReduce local runner)\n")
lines.append(f"Commit {commit}. Input: {rows} rows x {cols} columns of {size} bytes "
             f"({int(input_bytes) / 1e6:.1f} MB of TSV), {regions} regions, one family with "
             f"HBase's default settings. HBase: LocalJobRunner with {tasks} map and {tasks} reduce "
             f"slots, cluster = {cluster}; cairn: --sort-memory {sortmem}, {binary}. "
             f"{len(by.get('cairn', []))} rounds each, alternating order; CPU = user + sys of the "
             f"tool's process (/usr/bin/time).\n")
lines.append("| tool | best wall s | median wall s | best CPU s | median CPU s | files | output MB |")
lines.append("|---|---|---|---|---|---|---|")
s = {}
for tool in ("cairn", "hbase"):
    if tool not in by:
        continue
    bw, mw, bc, mc, r0 = stats(tool)
    s[tool] = (bw, mw, bc, mc)
    name = "cairn importtsv" if tool == "cairn" else "HBase ImportTsv"
    lines.append(f"| {name} | {bw:.2f} | {mw:.2f} | {bc:.2f} | {mc:.2f} | {r0['files']} | "
                 f"{int(r0['bytes']) / 1e6:.1f} |")
if "cairn" in s and "hbase" in s:
    lines.append("")
    lines.append(f"Median wall time: HBase / cairn = {s['hbase'][1] / s['cairn'][1]:.1f}x; "
                 f"median CPU: {s['hbase'][3] / s['cairn'][3]:.1f}x.")
loads = [float(r["load1"]) for r in runs if r.get("load1")]
if loads:
    lines.append("")
    lines.append(f"1-minute load average before the runs: {min(loads):.1f} to {max(loads):.1f} "
                 f"(the machine's cores: see nproc); CPU seconds are the steadier comparison.")
lines.append("")
lines.append("Every run's output was read back (`cairn hfile -m`): both wrote "
             f"{int(rows) * int(cols)} cells. Per-run numbers: runs.tsv; logs: logs/.")
text = "\n".join(lines) + "\n"
open(report, "w").write(text)
print(text)
EOF
