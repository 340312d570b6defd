#!/usr/bin/env bash
# happybase against `cairn serve` and against HBase 2.6.1's own Thrift1 gateway (a standalone
# HBase from Maven Central's jars: master, region server and ZooKeeper in one JVM, data on local
# disk), same data, same client: load, single gets, 100-row multi-gets and full scans, rows per
# second and the cairn/HBase ratio, and rows per second of the servers' own CPU time (the Python
# client caps the first on a small machine; the second is what the server costs). Then the same
# single gets from a light client (crates/cairn-server/examples/thrift_get_load.rs: Rust, CONNS
# connections with DEPTH calls in flight each, every answer decoded and checked), which costs
# the server's CPU a small share, so the servers rather than the client set the pace. Last,
# cached gets against cairn serve restricted to one CPU and to two (taskset), from CONNS happybase
# processes and from the light client (SCALING_ROUNDS alternating pairs of runs, and their
# median), and the scaling between them.
#
#   bench/thrift-vs-hbase.sh            # ROWS=20000 VALUE=1024 BENCH_SECONDS=10 CONNS=4 DEPTH=64
#                                       # SCALING_ROUNDS=3
#   SKIP_HBASE=1 bench/thrift-vs-hbase.sh
#
# Needs python3, java 17 and mvn (HBase's side), taskset. Not part of the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${ROWS:-20000}
VALUE=${VALUE:-1024}
SECONDS_EACH=${BENCH_SECONDS:-10}
CONNS=${CONNS:-4}
DEPTH=${DEPTH:-64}
SCALING_ROUNDS=${SCALING_ROUNDS:-3}
work=$(mktemp -d /tmp/thrift-bench.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
    for _ in $(seq 1 600); do
        if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$1),1)" 2>/dev/null; then return 0; fi
        sleep 0.5
    done
    echo "nothing listens on port $1" >&2
    return 1
}
bench() {
    python3 bench/thrift/happybase_bench.py --rows "$ROWS" --value-size "$VALUE" \
        --seconds "$SECONDS_EACH" --connections "$CONNS" "$@"
}

python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore happybase==1.3.0
cargo build --release --locked -p cairn-cli
cargo build --release --locked -p cairn-server --example thrift_get_load
echo "machine: $(nproc) CPUs; $ROWS rows x $VALUE B, ${SECONDS_EACH} s per workload, happybase $(python3 -c 'import happybase; print(happybase.__version__)')"

# Pipelined single gets from the light client; merges its gets/s (and per server CPU-second)
# into a JSON file. $1: port, $2: JSON file, $3: server pids (comma-separated)
pipelined() {
    target/release/examples/thrift_get_load --port "$1" --rows "$ROWS" --connections "$CONNS" \
        --depth "$DEPTH" --seconds "$SECONDS_EACH" --pids "$3" >"$work/pipelined.json"
    python3 - "$2" "$work/pipelined.json" <<'EOF'
import json, os, sys
into, got = sys.argv[1], json.load(open(sys.argv[2]))
d = json.load(open(into)) if os.path.exists(into) else {}
for k in ("pipelined_gets", "pipelined_gets_per_server_cpu_s"):
    d[k] = got[k]
json.dump(d, open(into, "w"), indent=1)
print("%-14s %12.0f rows/s (light client: %d connections x %d in flight; client CPU %.2f s)"
      % ("pipelined_gets", got["pipelined_gets"], got["connections"], got["depth"], got["client_cpu_s"]))
EOF
}

run_cairn() { # $1: taskset CPU list, $2: JSON file; remaining: bench modes (or "pipelined")
    local cpus=$1 json=$2
    shift 2
    local port
    port=$(free_port)
    taskset -c "$cpus" target/release/cairn serve --data "$work/cairn" --thrift "127.0.0.1:$port" --http "" --info "" \
        >"$work/cairn.log" 2>&1 &
    local pid=$!
    pids+=("$pid")
    wait_port "$port"
    for mode in "$@"; do
        if [ "$mode" = pipelined ]; then
            pipelined "$port" "$json" "$pid"
        else
            bench --port "$port" --json "$json" --pids "$pid" "$mode"
        fi
    done
    # the server's own CPU time (user + system) over its whole life
    python3 - "$pid" "$json" <<'EOF'
import json, os, sys
f = open("/proc/%s/stat" % sys.argv[1]).read().rsplit(")", 1)[1].split()
cpu = (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
d = json.load(open(sys.argv[2]))
d["server_cpu_s"] = cpu
json.dump(d, open(sys.argv[2], "w"))
print("server CPU     %12.2f s" % cpu)
EOF
    kill -TERM "$pid"
    wait "$pid" || true
}

echo
echo "== cairn serve (all CPUs)"
rm -rf "$work/cairn"
run_cairn "0-$(($(nproc) - 1))" "$work/cairn.json" load read pipelined

if [ -z "${SKIP_HBASE:-}" ]; then
    echo
    echo "== HBase 2.6.1 standalone + its Thrift1 gateway (thread pool, buffered, binary)"
    mvn -q -B -f bench/thrift/pom.xml package
    zk=$(free_port)
    hport=$(free_port)
    mkdir -p "$work/conf"
    cat >"$work/conf/hbase-site.xml" <<EOF
<configuration>
  <property><name>hbase.cluster.distributed</name><value>false</value></property>
  <property><name>hbase.rootdir</name><value>file://$work/hbase</value></property>
  <property><name>hbase.tmp.dir</name><value>$work/hbase-tmp</value></property>
  <property><name>hbase.zookeeper.property.dataDir</name><value>$work/zk</value></property>
  <property><name>hbase.zookeeper.property.clientPort</name><value>$zk</value></property>
  <property><name>hbase.unsafe.stream.capability.enforce</name><value>false</value></property>
  <property><name>hbase.wal.provider</name><value>filesystem</value></property>
  <property><name>hbase.master.info.port</name><value>-1</value></property>
  <property><name>hbase.regionserver.info.port</name><value>-1</value></property>
</configuration>
EOF
    jvm=(-Xms4g -Xmx4g
        -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
        --add-modules jdk.unsupported --add-opens java.base/java.nio=ALL-UNNAMED
        --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED
        --add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED
        --add-opens java.base/java.util=ALL-UNNAMED --add-opens java.base/java.util.concurrent=ALL-UNNAMED
        --add-exports java.base/jdk.internal.misc=ALL-UNNAMED --add-exports java.base/sun.net.dns=ALL-UNNAMED
        --add-exports java.base/sun.net.util=ALL-UNNAMED --add-exports java.security.jgss/sun.security.krb5=ALL-UNNAMED)
    cp="$work/conf:$(pwd)/bench/thrift/target/lib/*"
    java "${jvm[@]}" -cp "$cp" org.apache.hadoop.hbase.master.HMaster start >"$work/hbase.log" 2>&1 &
    hbase_pid=$!
    pids+=("$hbase_pid")
    wait_port "$zk"
    java "${jvm[@]/-Xms4g/-Xms1g}" -cp "$cp" org.apache.hadoop.hbase.thrift.ThriftServer \
        -p "$hport" --infoport "$(free_port)" start >"$work/hbase-thrift.log" 2>&1 &
    thrift_pid=$!
    pids+=("$thrift_pid")
    wait_port "$hport"
    # the master takes a while to come up: retry the load until the table can be created
    for i in $(seq 1 60); do
        if bench --port "$hport" --json "$work/hbase.json" --pids "$hbase_pid,$thrift_pid" load \
            2>"$work/load.err"; then break; fi
        [ "$i" = 60 ] && { cat "$work/load.err"; exit 1; }
        sleep 3
    done
    bench --port "$hport" --json "$work/hbase.json" --pids "$hbase_pid,$thrift_pid" read
    pipelined "$hport" "$work/hbase.json" "$hbase_pid,$thrift_pid"
    echo
    echo "== same run, same data, same client"
    python3 bench/thrift/happybase_bench.py compare "$work/cairn.json" "$work/hbase.json"
fi

echo
echo "== cached gets, cairn serve on 1 CPU vs 2 CPUs: $CONNS happybase processes"
run_cairn 0 "$work/one.json" conc
run_cairn 0,1 "$work/two.json" conc
# The light client's runs alternate between one CPU and two, SCALING_ROUNDS times: this VM's
# speed drifts over minutes, so one pair of runs can land either side of the true ratio.
echo
echo "== the same with the light client ($CONNS connections x $DEPTH in flight), $SCALING_ROUNDS alternating rounds"
for r in $(seq 1 "$SCALING_ROUNDS"); do
    run_cairn 0 "$work/one-$r.json" pipelined
    run_cairn 0,1 "$work/two-$r.json" pipelined
done
python3 - "$work" "$CONNS" "$SCALING_ROUNDS" <<'EOF'
import json, statistics, sys
work, n, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
one, two = json.load(open(work + "/one.json")), json.load(open(work + "/two.json"))
k = "conc_gets_" + n
print("happybase x %s: 1 CPU: %.0f gets/s, 2 CPUs: %.0f gets/s, scaling %.2fx"
      % (n, one[k], two[k], two[k] / one[k]))
p = "pipelined_gets"
ratios = []
print("light client  1 CPU gets/s  2 CPUs gets/s  scaling  gets per server CPU-s, 1 CPU / 2 CPUs")
for r in range(1, rounds + 1):
    a = json.load(open("%s/one-%d.json" % (work, r)))
    b = json.load(open("%s/two-%d.json" % (work, r)))
    ratios.append(b[p] / a[p])
    print("round %d      %12.0f  %13.0f  %6.2fx  %.0f / %.0f"
          % (r, a[p], b[p], ratios[-1], a[p + "_per_server_cpu_s"], b[p + "_per_server_cpu_s"]))
print("light client scaling, median of %d rounds: %.2fx (range %.2fx-%.2fx)"
      % (rounds, statistics.median(ratios), min(ratios), max(ratios)))
EOF
