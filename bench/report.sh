#!/usr/bin/env bash
# cairn next to RocksDB, Pebble and HBase 2.6.1 on the same machine in one run: builds what it
# needs, runs the same workloads on every engine in alternating rounds, and writes a Markdown
# table of best-of / median results with the ratios cairn / peer from this run, plus PNG plots
# (throughput against client threads, latency percentiles), to $CAIRN_BENCH_OUT.
#
# Workloads (keys and values: HBase PE's, 26-digit rows, values of runs of 8 random capitals):
#   get       ROWS random gets of ROWS rows x VALUE_SIZE, every block cached
#             (cairn pe randomRead --warmCache; peers warm their cache by reading every row)
#   multiget  the same gets in batches of BATCH (cairn pe randomRead --multiGet=BATCH)
#   scan      SCANS scans of 10,000 rows from a random row, every row filtered out on the
#             server (cairn pe scanRange10000 --filterAll; peers iterate and touch every value)
#   put       WRITE_ROWS sequential puts with the WAL on, not fsynced, one put per write call
#             (cairn pe --autoFlush=true sequentialWrite, SYNC_WAL: PE's default autoFlush=false
#             would batch puts in a client buffer, the peers' fillseq writes one at a time;
#             RocksDB and Pebble fillseq with sync=false); not run on HBase
#   compact   the seed's compaction study: cairn pe sequentialWrite --valueSize=10240
#             --presplit=10, then a major compaction of the table by `cairn compact --major` and
#             by HBase 2.6.1's HStore as CompactionTool drives it (interop PeerBench compact),
#             each on a fresh copy of the same store files: user / system CPU, checksum share
# Every read and write workload runs at each thread count of THREADS.
#
# Peers: RocksDB through the `rocksdb` crate (bench/rocksdb-peer; built from C++ source, ~20 min
# on 2 cores the first time; CAIRN_BENCH_SKIP_ROCKSDB=1 skips it), Pebble v2.1.7
# (bench/pebble-peer, `go build`; skipped with a note if `go` is missing), HBase 2.6.1's HFile
# layer and compaction from Maven Central (interop/hbase; needs java 17 and mvn).
#
# usage: bench/report.sh
# environment (defaults): ROUNDS (3), CAIRN_BENCH_ROWS (1000000), CAIRN_BENCH_VALUE_SIZE (1024),
#   CAIRN_BENCH_SCANS (500), CAIRN_BENCH_BATCH (100), CAIRN_BENCH_THREADS ("1 2"),
#   CAIRN_BENCH_WRITE_ROWS (1000000), CAIRN_BENCH_COMPACT_ROWS (100000, x 10 KiB = ~1 GB),
#   CAIRN_BENCH_DIR (temporary files; the system's temp dir), CAIRN_BENCH_OUT
#   (bench/results/<UTC date>), CAIRN_BENCH_HBASE_HEAP (4g; half of it is HBase's block cache),
#   CAIRN_BENCH_SKIP_ROCKSDB, CAIRN_BENCH_SKIP_HBASE, CAIRN_BENCH_PROFILE (release),
#   CAIRN_BENCH_BIN (a cairn binary to use as it is, nothing built: the test suite's smoke run
#   passes the one its tests built, whose numbers mean nothing)
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-3}
rows=${CAIRN_BENCH_ROWS:-1000000}
value_size=${CAIRN_BENCH_VALUE_SIZE:-1024}
scans=${CAIRN_BENCH_SCANS:-500}
batch=${CAIRN_BENCH_BATCH:-100}
range=10000
threads_list=${CAIRN_BENCH_THREADS:-1 2}
write_rows=${CAIRN_BENCH_WRITE_ROWS:-1000000}
compact_rows=${CAIRN_BENCH_COMPACT_ROWS:-100000}
compact_value=10240
out=${CAIRN_BENCH_OUT:-bench/results/$(date -u +%Y-%m-%d)}
hbase_heap=${CAIRN_BENCH_HBASE_HEAP:-4g}
base=$(mktemp -d "${CAIRN_BENCH_DIR:-${TMPDIR:-/tmp}}/cairn-report.XXXXXX")
trap 'rm -rf "$base"' EXIT
mkdir -p "$out"
results=$out/results.txt
: >"$results"
notes=$base/notes.txt
: >"$notes"
note() { echo "note: $*" >&2; echo "$*" >>"$notes"; }
for t in $threads_list; do
    if [ $((rows % t)) != 0 ] || [ $((write_rows % t)) != 0 ] || [ $((scans % t)) != 0 ]; then
        echo "CAIRN_BENCH_ROWS, _WRITE_ROWS and _SCANS must divide by every thread count" >&2
        exit 2
    fi
done

echo "== building" >&2
if [ -n "${CAIRN_BENCH_BIN:-}" ]; then
    cairn=$CAIRN_BENCH_BIN
else
    profile=${CAIRN_BENCH_PROFILE:-release}
    cargo build --profile "$profile" --locked -p cairn-cli >&2
    case "$profile" in dev) cairn=target/debug/cairn ;; *) cairn=target/$profile/cairn ;; esac
fi
# What was built, recorded now: crates/ may change while the rounds run.
built="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo ' (crates/ has uncommitted changes)')"
engines=(cairn)
rocksdb=bench/rocksdb-peer/target/release/rocksdb-peer
if [ -n "${CAIRN_BENCH_SKIP_ROCKSDB:-}" ]; then
    note "RocksDB skipped (CAIRN_BENCH_SKIP_ROCKSDB is set)"
else
    [ -x "$rocksdb" ] || echo "building bench/rocksdb-peer (RocksDB from C++ source: ~20 min)" >&2
    cargo build --release --manifest-path bench/rocksdb-peer/Cargo.toml >&2
    engines+=(rocksdb)
fi
pebble=bench/pebble-peer/pebble-peer
if command -v go >/dev/null 2>&1; then
    (cd bench/pebble-peer && go build -o pebble-peer .) >&2
    engines+=(pebble)
else
    note "Pebble skipped: no Go toolchain (go) on this machine"
fi
java_flags=(-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
    --add-modules jdk.unsupported --add-opens java.base/java.nio=ALL-UNNAMED
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED
    --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
    --add-opens java.base/java.lang.reflect=ALL-UNNAMED --add-opens java.base/java.util=ALL-UNNAMED
    --add-opens java.base/java.util.concurrent=ALL-UNNAMED
    --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
    --add-exports java.base/sun.net.dns=ALL-UNNAMED --add-exports java.base/sun.net.util=ALL-UNNAMED)
hbase_cp="interop/hbase/target/cairn-hbase-interop-0.1.0.jar:interop/hbase/target/lib/*"
if [ -n "${CAIRN_BENCH_SKIP_HBASE:-}" ]; then
    note "HBase skipped (CAIRN_BENCH_SKIP_HBASE is set)"
elif command -v java >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; then
    mvn -q -B -f interop/hbase/pom.xml package -DskipTests >&2
    engines+=(hbase)
else
    note "HBase skipped: java 17 and mvn are needed for its jars"
fi
venv=bench/.venv
plot_python=$venv/bin/python
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
    if ! { python3 -m venv "$venv" >&2 &&
        "$venv/bin/pip" install -q --disable-pip-version-check matplotlib==3.9.2 >&2; }; then
        note "no plots: could not install matplotlib into $venv (python3-venv missing?)"
        plot_python=python3
    fi
fi
py=bench/report.py
hbase_jvm_extra=() # more JVM options for hbase(); a caller may shadow it with a local
hbase() { # class-args...
    java "${java_flags[@]}" "${hbase_jvm_extra[@]}" "-Xmx$hbase_heap" -Dhfile.block.cache.size=0.5 \
        -cp "$hbase_cp" dev.cairn.interop.PeerBench "$@" 2>"$base/java.err" ||
        { cat "$base/java.err" >&2; return 1; }
}
has() { [[ " ${engines[*]} " == *" $1 "* ]]; }

echo "== engines: ${engines[*]}; $rows rows x $value_size B, $scans scans, batches of $batch," \
    "threads: $threads_list; $write_rows puts; compaction $compact_rows rows x $compact_value B;" \
    "$rounds rounds" >&2

# cairn's table for the read workloads: loaded once (PE sequentialWrite, WAL and flushes as
# any load), then major-compacted into one file per store as the peers compact theirs. The
# table stays one region, as each peer's data is one tree: HBase's default split policy would
# split it in two at 256 MiB (2 x the flush size).
no_split=(-D hbase.regionserver.region.split.policy=org.apache.hadoop.hbase.regionserver.DisabledRegionSplitPolicy)
echo "== loading cairn's read table" >&2
"$cairn" pe --data="$base/cairn-read" --rows="$rows" --valueSize="$value_size" --json \
    "${no_split[@]}" sequentialWrite 1 >/dev/null
"$cairn" compact --major "$base/cairn-read/data/default/TestTable" >/dev/null
# The compaction study's input: PE sequentialWrite --valueSize=10240 --presplit=10.
echo "== writing the compaction study's table" >&2
"$cairn" pe --data="$base/compact-input" --rows="$compact_rows" --valueSize="$compact_value" \
    --presplit=10 --json sequentialWrite 1 >/dev/null
table_rel=data/default/TestTable

cairn_reads() {
    local t per sample
    for t in $threads_list; do
        per=$((rows / t))
        sample=$(python3 -c "print($scans / $rows)")
        local common=(--data="$base/cairn-read" --rows="$per" --valueSize="$value_size"
            --blockCacheSize=4GiB --warmCache --json "${no_split[@]}")
        "$cairn" pe "${common[@]}" randomRead "$t" |
            python3 "$py" pe-json get "$t" | tee -a "$results"
        "$cairn" pe "${common[@]}" --multiGet="$batch" randomRead "$t" |
            python3 "$py" pe-json multiget "$t" | tee -a "$results"
        "$cairn" pe "${common[@]}" --sampleRate="$sample" --filterAll scanRange10000 "$t" |
            python3 "$py" pe-json scan "$t" | tee -a "$results"
    done
}
peer_reads() { # engine
    local w="" t dir
    for t in $threads_list; do w="$w,get:$t,multiget:$t,scan:$t"; done
    w=${w#,}
    dir=$(mktemp -d "$base/$1.XXXXXX")
    case $1 in
        rocksdb) "$rocksdb" pe "$dir" "$rows" "$value_size" "$rows" "$scans" "$batch" "$range" "$w" ;;
        pebble) "$pebble" pe "$dir" "$rows" "$value_size" "$rows" "$scans" "$batch" "$range" "$w" \
            2>/dev/null ;;
        hbase) hbase pe "$dir" "$rows" "$value_size" "$rows" "$scans" "$batch" "$range" "$w" ;;
    esac | grep '^bench-result' | tee -a "$results"
    rm -rf "$dir"
}
puts() { # engine threads
    local dir
    dir=$(mktemp -d "$base/puts-$1.XXXXXX")
    case $1 in
        cairn) "$cairn" pe --data="$dir" --rows=$((write_rows / $2)) --valueSize="$value_size" "${no_split[@]}" \
            --autoFlush=true --json sequentialWrite "$2" | python3 "$py" pe-json put "$2" ;;
        rocksdb) "$rocksdb" fillseq "$dir" "$write_rows" "$value_size" "$2" false ;;
        pebble) "$pebble" fillseq "$dir" "$write_rows" "$value_size" "$2" false 2>/dev/null ;;
    esac | grep '^bench-result\|^puts-result' | tee -a "$results"
    rm -rf "$dir"
}
compact_dir=$base/compact-work
fresh_compact_input() { rm -rf "$compact_dir"; cp -a "$base/compact-input" "$compact_dir"; }
compaction() { # engine
    local dir=$compact_dir
    fresh_compact_input
    case $1 in
        cairn) "$cairn" compact --major --json "$dir/$table_rel" 2>/dev/null | python3 "$py" compact-json cairn ;;
        hbase) hbase compact "$dir/$table_rel" | python3 "$py" compact-json hbase ;;
    esac | tee -a "$results"
    rm -rf "$dir"
}

# HBase's checksum share: one more HBase compaction of a fresh copy per round under
# async-profiler (from Maven Central, with the HBase jars; CPU samples every millisecond, Java,
# native and kernel frames), kept apart from the timed rounds so sampling does not weigh on
# HBase's CPU figures. The share is the samples inside Compactor.performCompaction that have
# checksum code on their stack.
hbase_checksum_profile() {
    local stacks=$base/hbase-compact.collapsed so=linux-x64/libasyncProfiler.so
    [ "$(uname -m)" = aarch64 ] && so=linux-arm64/libasyncProfiler.so
    rm -f "$stacks"
    if [ ! -f "$base/$so" ]; then
        python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])' \
            interop/hbase/target/lib/async-profiler-4.2.jar "$so" "$base"
    fi
    fresh_compact_input
    local hbase_jvm_extra=("-agentpath:$base/$so=start,event=cpu,interval=1ms,collapsed,file=$stacks")
    hbase compact "$compact_dir/$table_rel" >/dev/null || return 1
    python3 "$py" profile-checksum <"$stacks" | tee -a "$results"
    rm -rf "$compact_dir" "$stacks"
}

n=${#engines[@]}
for round in $(seq 1 "$rounds"); do
    echo "== round $round" >&2
    # Each round starts with a different engine.
    order=()
    for i in $(seq 0 $((n - 1))); do order+=("${engines[$(((i + round - 1) % n))]}"); done
    for e in "${order[@]}"; do
        if [ "$e" = cairn ]; then cairn_reads; else peer_reads "$e"; fi
    done
    for t in $threads_list; do
        for e in "${order[@]}"; do [ "$e" = hbase ] || puts "$e" "$t"; done
    done
    for e in "${order[@]}"; do
        if [ "$e" = cairn ] || [ "$e" = hbase ]; then compaction "$e"; fi
    done
done
if has hbase; then
    echo "== profiling HBase's compaction for its checksum share (async-profiler, $rounds runs)" >&2
    for round in $(seq 1 "$rounds"); do
        hbase_checksum_profile || note "HBase's checksum profile failed (async-profiler); see above"
    done
fi

{
    for kv in rows="$rows" value_size="$value_size" scans="$scans" range="$range" batch="$batch" \
        write_rows="$write_rows" compact_rows="$compact_rows" compact_value="$compact_value" \
        rounds="$rounds"; do echo "$kv"; done
    echo "engines=${engines[*]}"
    echo "machine=$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    echo "commit=$built"
} >"$out/meta.txt"
"$plot_python" "$py" report "$results" "$out/meta.txt" "$notes" "$out"
echo "== written: $out/report.md and its plots" >&2
