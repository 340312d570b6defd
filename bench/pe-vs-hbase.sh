#!/usr/bin/env bash
# HBase's own PerformanceEvaluation (`hbase pe`, HBase 2.6.1's client, --nomapred) against
# `cairn serve` and against HBase 2.6.1 standalone (master, region server and ZooKeeper in one
# JVM, data on the local filesystem, jars from Maven Central), both reached the same way: the
# RPC connection registry (hbase.client.bootstrap.servers; HBase's master port serves
# ClientMetaService). Both block caches hold the same bytes (CACHE_MB).
#
# One server at a time (a 2-core machine): a round starts one server, loads ROWS rows with PE
# sequentialWrite (--presplit=4, LOAD_CLIENTS clients), flushes, scans the table once (a warm
# block cache, and a check that every row is there), runs a warm-up, then every timed command,
# and stops it; then the other server. The order alternates between rounds. Timed commands:
# randomRead and randomRead --multiGet=100 at each of THREADS client threads, scanRange10000
# --filterAll at SCAN_THREADS, sequentialWrite (a fresh table per run) at WRITE_THREADS. Each
# run is sized from the previous runs' speed to last about RUN_SECONDS. Collected per run:
# rows/s, PE's per-thread latency percentiles, and the CPU time of the server process and of
# the PE client JVM inside PE's timed window (bench/pe/sample.py samples /proc/PID/stat every
# 50 ms; PE's log stamps bound the window). One progress line per run.
#
#   bench/pe-vs-hbase.sh                 # ROWS=100000 ROUNDS=3 RUN_SECONDS=6, ~25-30 minutes
#   ROWS=5000 ROUNDS=1 THREADS="1 5" SCAN_THREADS=1 WRITE_THREADS=1 bench/pe-vs-hbase.sh  # smoke
#   YCSB=1 bench/pe-vs-hbase.sh          # also YCSB 0.17.0 workloads A-F (needs the
#                                        # dev.cairn.interop.ycsb.HBaseBinding class and
#                                        # interop/hbase/ycsb/workloada..f)
#
# Settings (environment): ROWS (100000), ROUNDS (3), THREADS ("1 2 5 10 25 50 75"),
# RUN_SECONDS (6), SCAN_THREADS ("1 4"), WRITE_THREADS ("1 4"), LOAD_CLIENTS (4),
# WARMUP_SECONDS (5), CACHE_MB (1024; HBase's share of its heap must stay <= 0.4),
# HBASE_HEAP_MB (4096), CLIENT_HEAP (4g: PE keeps 9 reservoirs of 512 K longs per thread, ~2.8 GB at 75 threads), SERVERS ("cairn hbase"), CAIRN_BIN (default:
# target/release/cairn, built with cargo when CAIRN_BIN is unset), OUT (default
# bench/results/<date>-pe-vs-hbase), KEEP=1 (keep the scratch directory), MVN_OFFLINE=1,
# FIRST_ROUND (1; N resumes an interrupted run at round N, keeping OUT's earlier records),
# SMOKE=1 (marks the report as a smoke run), YCSB=1, YCSB_RECORDS (100000), YCSB_SECONDS (20),
# YCSB_THREADS (8), YCSB_WORKLOADS ("a b c f d e").
#
# Output: OUT/results.json, OUT/report.md (also printed), OUT/pe-threads.png, OUT/logs/ (every
# PE, YCSB and server log). Needs java 17, mvn (once, for interop/hbase's jars), python3 (a venv
# with matplotlib is made in target/bench-venv). Not part of the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

ROWS=${ROWS:-100000}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-"1 2 5 10 25 50 75"}
RUN_SECONDS=${RUN_SECONDS:-6}
SCAN_THREADS=${SCAN_THREADS:-"1 4"}
WRITE_THREADS=${WRITE_THREADS:-"1 4"}
LOAD_CLIENTS=${LOAD_CLIENTS:-4}
WARMUP_SECONDS=${WARMUP_SECONDS:-5}
WARMUP_THREADS=${WARMUP_THREADS:-2}
CACHE_MB=${CACHE_MB:-1024}
HBASE_HEAP_MB=${HBASE_HEAP_MB:-4096}
CLIENT_HEAP=${CLIENT_HEAP:-4g}
SERVERS=${SERVERS:-"cairn hbase"}
VALUE_SIZE=1000
YCSB=${YCSB:-}
YCSB_RECORDS=${YCSB_RECORDS:-100000}
YCSB_SECONDS=${YCSB_SECONDS:-20}
YCSB_THREADS=${YCSB_THREADS:-8}
YCSB_WORKLOADS=${YCSB_WORKLOADS:-"a b c f d e"}
YCSB_BINDING=dev.cairn.interop.ycsb.HBaseBinding
OUT=${OUT:-bench/results/$(date -u +%F)-pe-vs-hbase}
case "$OUT" in /*) ;; *) OUT="$root/$OUT" ;; esac

cache_bytes=$((CACHE_MB * 1048576))
# HBase sizes its LRU block cache as this fraction of the heap's maximum (-Xmx).
hbase_fraction=$(python3 -c "print(round($CACHE_MB / $HBASE_HEAP_MB, 6))")
if python3 -c "import sys; sys.exit(0 if $hbase_fraction <= 0.4 else 1)"; then :; else
    echo "CACHE_MB=$CACHE_MB is more than 0.4 of HBASE_HEAP_MB=$HBASE_HEAP_MB: HBase refuses" \
        "block cache + memstore shares above 0.8 of its heap; raise HBASE_HEAP_MB" >&2
    exit 2
fi

work=$(mktemp -d /tmp/pe-vs-hbase.XXXXXX)
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
fi
case "$CAIRN_BIN" in /*) ;; *) CAIRN_BIN="$root/$CAIRN_BIN" ;; esac
[ -x "$CAIRN_BIN" ] || { echo "no cairn binary at $CAIRN_BIN" >&2; exit 1; }

interop=interop/hbase/target/cairn-hbase-interop-0.1.0.jar
if [ ! -f "$interop" ] || [ -n "$(find interop/hbase/src interop/hbase/pom.xml -newer "$interop" -type f | head -1)" ]; then
    mvn -q -B -Dstyle.color=never ${MVN_OFFLINE:+-o} -f interop/hbase/pom.xml package -DskipTests
fi
jars="$root/$interop:$root/interop/hbase/target/lib/*"
mkdir -p "$work/classes"
javac -nowarn -d "$work/classes" -cp "$jars" bench/pe/PeTool.java

venv=target/bench-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check matplotlib
fi
report() { "$venv/bin/python" bench/pe/report.py "$@"; }

jvm=(-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
    --add-modules jdk.unsupported --add-opens java.base/java.nio=ALL-UNNAMED
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED
    --add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens java.base/java.util=ALL-UNNAMED --add-opens java.base/java.util.concurrent=ALL-UNNAMED
    --add-exports java.base/jdk.internal.misc=ALL-UNNAMED --add-exports java.base/sun.net.dns=ALL-UNNAMED
    --add-exports java.base/sun.net.util=ALL-UNNAMED --add-exports java.security.jgss/sun.security.krb5=ALL-UNNAMED)

mkdir -p "$OUT/logs"
results="$OUT/runs.jsonl"
# FIRST_ROUND>1 resumes an interrupted run: the earlier rounds' records stay.
FIRST_ROUND=${FIRST_ROUND:-1}
[ "$FIRST_ROUND" -gt 1 ] || : >"$results"

# Client side: PE's INFO lines (with the thread name: the parser needs it), warnings from the rest.
mkdir -p "$work/client"
cat >"$work/client/log4j.properties" <<'EOF'
log4j.rootLogger=WARN,console
log4j.logger.org.apache.hadoop.hbase.PerformanceEvaluation=INFO
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{1}: %m%n
# PE's progress lines (ten per thread and cycle) are left out: megabytes at 75 threads
log4j.appender.console.filter.1=org.apache.log4j.varia.StringMatchFilter
log4j.appender.console.filter.1.StringToMatch=row [start=
log4j.appender.console.filter.1.AcceptOnMatch=false
EOF
client_conf() { # $1: bootstrap HOST:PORT
    cat >"$work/client/hbase-site.xml" <<EOF
<configuration>
  <property><name>hbase.client.registry.impl</name><value>org.apache.hadoop.hbase.client.RpcConnectionRegistry</value></property>
  <property><name>hbase.client.bootstrap.servers</name><value>$1</value></property>
</configuration>
EOF
}
client_cp="$work/client:$work/classes:$jars"
client_java() { java -Xms512m -Xmx"$CLIENT_HEAP" "${jvm[@]}" -Dlog4j.configuration="file:$work/client/log4j.properties" -cp "$client_cp" "$@"; }
petool() { client_java PeTool "$@"; }

# ---- servers -----------------------------------------------------------------------------
hbase_cache_logged=
start_cairn() { # $1: log file
    rm -rf "$work/data"
    local port
    port=$(free_port)
    "$CAIRN_BIN" serve --data "$work/data/cairn" --hbase "127.0.0.1:$port" --thrift 127.0.0.1:0 \
        --http "" --info "" -D "hfile.block.cache.size=$cache_bytes" >"$1" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 120); do
        grep -q "hbase rpc on" "$1" && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$1" >&2; echo "cairn serve exited" >&2; exit 1; }
        sleep 0.5
    done
    grep -q "hbase rpc on" "$1" || { cat "$1" >&2; echo "cairn serve not up after 60 s" >&2; exit 1; }
    client_conf "127.0.0.1:$port"
}

start_hbase() { # $1: log file
    rm -rf "$work/data"
    mkdir -p "$work/hbase-conf"
    local zk master rs started
    zk=$(free_port)
    master=$(free_port)
    rs=$(free_port)
    cat >"$work/hbase-conf/hbase-site.xml" <<EOF
<configuration>
  <property><name>hbase.cluster.distributed</name><value>false</value></property>
  <property><name>hbase.rootdir</name><value>file://$work/data/hbase</value></property>
  <property><name>hbase.tmp.dir</name><value>$work/data/hbase-tmp</value></property>
  <property><name>hbase.zookeeper.property.dataDir</name><value>$work/data/zk</value></property>
  <property><name>hbase.zookeeper.property.clientPort</name><value>$zk</value></property>
  <property><name>hbase.master.port</name><value>$master</value></property>
  <property><name>hbase.regionserver.port</name><value>$rs</value></property>
  <property><name>hbase.unsafe.stream.capability.enforce</name><value>false</value></property>
  <property><name>hbase.wal.provider</name><value>filesystem</value></property>
  <property><name>hbase.master.info.port</name><value>-1</value></property>
  <property><name>hbase.regionserver.info.port</name><value>-1</value></property>
  <property><name>hfile.block.cache.size</name><value>$hbase_fraction</value></property>
</configuration>
EOF
    cat >"$work/hbase-conf/log4j.properties" <<'EOF'
log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n
EOF
    java -Xms"${HBASE_HEAP_MB}m" -Xmx"${HBASE_HEAP_MB}m" "${jvm[@]}" \
        -Dlog4j.configuration="file:$work/hbase-conf/log4j.properties" \
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
    hbase_cache_logged=$(grep -o -m1 'Allocating BlockCache size=[^,]*' "$1" || true)
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

# ---- runs --------------------------------------------------------------------------------
# run_pe SERVER ROUND LABEL KIND GUESS SEED THREADS COMMAND [PE OPTIONS...]
#   KIND read: rows per thread = loaded rows / threads (keys drawn from the whole table), the
#   length set with --cycles / --sampleRate; KIND write: rows per thread from the planned
#   length; KIND load: rows per thread = loaded rows / threads.
#   GUESS: rows (scans) per second to plan with when no earlier run of LABEL (or SEED) exists.
run_pe() {
    local server=$1 round=$2 label=$3 kind=$4 guess=$5 seed=$6 threads=$7 command=$8
    shift 8
    local seconds=$RUN_SECONDS warm=() rows cycles sample extra=() multiget=0 scan=() opt
    case "$label" in warmup-*) seconds=$WARMUP_SECONDS; warm=(--warmup) ;; esac
    read -r rows cycles sample < <(report plan --results "$results" --server "$server" \
        --label "$label" --seed "$seed" --kind "$kind" --threads "$threads" \
        --seconds "$seconds" --rows "$loaded" --guess "$guess")
    [ "$cycles" != 1 ] && extra+=(--cycles="$cycles")
    [ "$sample" != 1.0 ] && extra+=(--sampleRate="$sample")
    # latencies leave out each thread's first 5% of rows (per cycle): the client JVM's warm-up
    [ "$kind" = read ] && extra+=(--measureAfter=$((rows / 20)))
    for opt in "$@"; do
        case "$opt" in --multiGet=*) multiget=${opt#--multiGet=} ;; esac
    done
    case "$command" in scanRange*) scan=(--scan-range "${command#scanRange}" --loaded "$loaded") ;; esac
    local log="$OUT/logs/$server-r$round-$label-t$threads.log"
    "$venv/bin/python" bench/pe/sample.py --pid "$server_pid" --out "$log.cpu.json" -- \
        java -Xms512m -Xmx"$CLIENT_HEAP" "${jvm[@]}" -Dlog4j.configuration="file:$work/client/log4j.properties" \
        -cp "$client_cp" org.apache.hadoop.hbase.PerformanceEvaluation --nomapred \
        --rows="$rows" "${extra[@]}" "$@" "$command" "$threads" >"$log" 2>&1 || true
    report pe --results "$results" --log "$log" --samples "$log.cpu.json" --server "$server" \
        --round "$round" --label "$label" --command "$command" --threads "$threads" \
        --rows "$rows" --cycles "$cycles" --multiget "$multiget" "${warm[@]}" "${scan[@]}"
}

ycsb_ready=
ycsb_note=
if [ -n "$YCSB" ]; then
    if ! petool hasclass "$YCSB_BINDING" >/dev/null; then
        ycsb_note="skipped: $YCSB_BINDING is not in interop/hbase's jar"
    else
        ycsb_ready=1
        for w in $YCSB_WORKLOADS; do
            if [ ! -f "interop/hbase/ycsb/workload$w" ]; then
                ycsb_ready=
                ycsb_note="skipped: interop/hbase/ycsb/workload$w is missing"
            fi
        done
    fi
    [ -n "$ycsb_note" ] && echo "YCSB $ycsb_note"
fi

run_ycsb() { # SERVER ROUND WORKLOAD PHASE
    local server=$1 round=$2 w=$3 phase=$4 log mode=(-t -p maxexecutiontime="$YCSB_SECONDS")
    log="$OUT/logs/$server-r$round-ycsb-$w-$phase.log"
    # the load inserts every record, however long that takes
    [ "$phase" = load ] && mode=(-load)
    "$venv/bin/python" bench/pe/sample.py --pid "$server_pid" --out "$log.cpu.json" -- \
        java -Xms512m -Xmx"$CLIENT_HEAP" "${jvm[@]}" -Dlog4j.configuration="file:$work/client/log4j.properties" \
        -cp "$client_cp" site.ycsb.Client "${mode[@]}" -db "$YCSB_BINDING" -P "interop/hbase/ycsb/workload$w" \
        -p columnfamily=family -p recordcount="$YCSB_RECORDS" -p operationcount=2000000000 \
        -threads "$YCSB_THREADS" >"$log" 2>&1 || true
    report ycsb --results "$results" --log "$log" --samples "$log.cpu.json" --server "$server" \
        --round "$round" --workload "$w" --phase "$phase" --threads "$YCSB_THREADS"
}

one_server() { # SERVER ROUND
    local server=$1 round=$2 t log
    log="$OUT/logs/$server-r$round-server.log"
    echo "== round $round: $server"
    "start_$server" "$log"
    # the load: PE sequentialWrite into TestTable (4 regions), each client its share of ROWS
    run_pe "$server" "$round" load load 10000 "" "$LOAD_CLIENTS" sequentialWrite \
        --presplit=4 --valueSize=$VALUE_SIZE
    petool flush TestTable
    petool warm TestTable "$loaded"
    run_pe "$server" "$round" warmup-randomRead read 2000 "" "$WARMUP_THREADS" randomRead
    run_pe "$server" "$round" warmup-multiGet100 read 20000 "" "$WARMUP_THREADS" randomRead --multiGet=100
    run_pe "$server" "$round" warmup-scanRange10000 read 5 "" 1 scanRange10000 --filterAll
    for t in $THREADS; do
        run_pe "$server" "$round" randomRead read 2000 warmup-randomRead "$t" randomRead
    done
    for t in $THREADS; do
        run_pe "$server" "$round" multiGet100 read 20000 warmup-multiGet100 "$t" randomRead --multiGet=100
    done
    for t in $SCAN_THREADS; do
        run_pe "$server" "$round" scanRange10000 read 5 warmup-scanRange10000 "$t" scanRange10000 --filterAll
    done
    for t in $WRITE_THREADS; do
        run_pe "$server" "$round" sequentialWrite write 10000 load "$t" sequentialWrite \
            --table="PeWrite_t$t" --presplit=4 --valueSize=$VALUE_SIZE
    done
    if [ -n "$ycsb_ready" ]; then
        petool create usertable family 4
        run_ycsb "$server" "$round" a load
        for w in $YCSB_WORKLOADS; do run_ycsb "$server" "$round" "$w" run; done
    fi
    stop_server
    rm -rf "$work/data"
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "$ROWS rows x $VALUE_SIZE B, $ROUNDS rounds, threads $THREADS, ~$RUN_SECONDS s per run;" \
    "block cache $cache_bytes bytes (HBase: $hbase_fraction of a ${HBASE_HEAP_MB} MiB heap); output $OUT"
loaded=$((ROWS / LOAD_CLIENTS * LOAD_CLIENTS))
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date +%s)
for round in $(seq "$FIRST_ROUND" "$ROUNDS"); do
    order=$SERVERS
    # alternate which server goes first
    if [ $((round % 2)) = 0 ]; then order=$(echo "$SERVERS" | tr ' ' '\n' | tac | tr '\n' ' '); fi
    for server in $order; do one_server "$server" "$round"; done
done
elapsed=$(($(date +%s) - started))
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
echo "all rounds: $elapsed s; load average $load_start at the start, $load_end at the end"

# ---- report ------------------------------------------------------------------------------
python3 - "$work/meta.json" <<EOF
import json, subprocess, sys, datetime, os
def out(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""
model = ""
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        model = line.split(":", 1)[1].strip()
        break
meta = {
    "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
    "smoke": bool("${SMOKE:-}"),
    "rows": $ROWS, "loaded_rows": $((ROWS / LOAD_CLIENTS * LOAD_CLIENTS)), "value_size": $VALUE_SIZE,
    "load_clients": $LOAD_CLIENTS, "rounds": $ROUNDS, "threads": "$THREADS",
    "scan_threads": "$SCAN_THREADS", "write_threads": "$WRITE_THREADS",
    "run_seconds": $RUN_SECONDS, "warmup_seconds": $WARMUP_SECONDS, "warmup_threads": $WARMUP_THREADS,
    "servers": "$SERVERS",
    "cache_bytes": $cache_bytes, "hbase_heap_mb": $HBASE_HEAP_MB,
    "hbase_cache_fraction": $hbase_fraction, "hbase_cache_logged": "$hbase_cache_logged",
    "cairn_bin": "$CAIRN_BIN", "cairn_version": out("$CAIRN_BIN", "--version"),
    "git_commit": out("git", "rev-parse", "--short", "HEAD"),
    "java": (subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines() or [""])[0],
    "client_jvm": "java -Xmx$CLIENT_HEAP, Java 17 flags",
    "cpu_model": model, "nproc": os.cpu_count(), "elapsed_s": $elapsed,
    "loadavg_start": "$load_start", "loadavg_end": "$load_end",
    "ycsb": bool("$ycsb_ready"), "ycsb_note": "$ycsb_note", "ycsb_binding": "$YCSB_BINDING",
    "ycsb_threads": $YCSB_THREADS, "ycsb_records": $YCSB_RECORDS, "ycsb_seconds": $YCSB_SECONDS,
}
json.dump(meta, open(sys.argv[1], "w"), indent=1)
EOF
report report --results "$results" --meta "$work/meta.json" --out "$OUT"
