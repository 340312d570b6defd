#!/usr/bin/env bash
# Sequential puts, cairn against RocksDB in the same run: cairn-region's `puts` bench (embedded
# RegionServer) and `bench/rocksdb-peer fillseq` write the same keys (HBase PE's 26-digit rows)
# and values, one put per row, run alternately case by case for ROUNDS rounds (the order flips
# every round), and a table of best-of and median puts/s, CPU and latency with the ratios
# cairn / RocksDB is printed at the end.
#
#   cairn SYNC_WAL  vs RocksDB WAL on, sync=false (written to the OS before returning)
#   cairn ASYNC_WAL vs the same RocksDB runs (RocksDB has no weaker WAL mode by default)
#   cairn FSYNC_WAL vs RocksDB WAL on, sync=true (fdatasync before returning)
#
# usage: bench/puts-vs-rocksdb.sh
# environment: ROUNDS (3), CAIRN_BENCH_ROWS (1000000), CAIRN_BENCH_FSYNC_ROWS (5000),
#   CAIRN_BENCH_VALUE_SIZE (100), THREADS ("1 2"), CAIRN_BENCH_DIR (the system's temp dir),
#   RESULTS (where the raw result lines go; default a temporary file, removed)
# Builds the peer if its binary is missing (RocksDB from C++ source: ~15-40 CPU-minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-3}
rows=${CAIRN_BENCH_ROWS:-1000000}
fsync_rows=${CAIRN_BENCH_FSYNC_ROWS:-5000}
value_size=${CAIRN_BENCH_VALUE_SIZE:-100}
threads_list=${THREADS:-1 2}
base=${CAIRN_BENCH_DIR:-${TMPDIR:-/tmp}}
export CAIRN_BENCH_ROWS=$rows CAIRN_BENCH_FSYNC_ROWS=$fsync_rows CAIRN_BENCH_VALUE_SIZE=$value_size
export CAIRN_BENCH_DIR=$base

peer=bench/rocksdb-peer/target/release/rocksdb-peer
if [ ! -x "$peer" ]; then
    echo "building bench/rocksdb-peer (RocksDB from source: this takes a while)" >&2
    cargo build --release --manifest-path bench/rocksdb-peer/Cargo.toml >&2
fi
cairn=$(cargo bench -p cairn-region --bench puts --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("executable") and m.get("target", {}).get("name") == "puts":
        print(m["executable"])')
[ -x "$cairn" ] || { echo "could not build cairn-region's puts bench" >&2; exit 1; }

results=${RESULTS:-$(mktemp)}
[ -n "${RESULTS:-}" ] || trap 'rm -f "$results"' EXIT
: >"$results"

run_cairn() { # durability threads
    CAIRN_BENCH_DURABILITY=$1 CAIRN_BENCH_THREADS=$2 "$cairn" --bench |
        grep '^puts-result' | tee -a "$results"
}
run_rocksdb() { # sync threads
    local n=$rows dir
    [ "$1" = true ] && n=$fsync_rows
    dir=$(mktemp -d "$base/rocksdb-fillseq.XXXXXX")
    "$peer" fillseq "$dir" "$n" "$value_size" "$2" "$1" | grep '^puts-result' | tee -a "$results"
    rm -rf "$dir"
}

echo "cairn: $cairn"
echo "RocksDB: $peer fillseq; $rows rows ($fsync_rows with fsync), $value_size-byte values, $rounds rounds, threads: $threads_list"
for round in $(seq 1 "$rounds"); do
    echo "round $round"
    for t in $threads_list; do
        if [ $((round % 2)) = 1 ]; then
            run_cairn SYNC_WAL "$t"; run_rocksdb false "$t"; run_cairn ASYNC_WAL "$t"
            run_cairn FSYNC_WAL "$t"; run_rocksdb true "$t"
        else
            run_rocksdb false "$t"; run_cairn SYNC_WAL "$t"; run_cairn ASYNC_WAL "$t"
            run_rocksdb true "$t"; run_cairn FSYNC_WAL "$t"
        fi
    done
done

python3 - "$results" "$value_size" <<'EOF'
import statistics, sys
from collections import defaultdict

runs = defaultdict(list)
for line in open(sys.argv[1]):
    kv = dict(f.split("=", 1) for f in line.split()[1:])
    if kv["engine"] == "cairn":
        key = ("cairn", kv["durability"], int(kv["threads"]))
    else:
        key = ("rocksdb", "sync=" + kv["wal_sync"], int(kv["threads"]))
    rows = int(kv["rows"])
    runs[key].append({
        "rate": rows / float(kv["wall_s"]),
        "cpu": float(kv["cpu_s"]) / rows * 1e6,
        "p50": float(kv["p50_us"]),
        "p99": float(kv["p99_us"]),
        "rows": rows,
    })

def agg(key):
    r = runs.get(key)
    if not r:
        return None
    med = lambda f: statistics.median(x[f] for x in r)
    return {
        "best": max(x["rate"] for x in r), "median": med("rate"),
        "cpu_best": min(x["cpu"] for x in r), "cpu": med("cpu"),
        "p50": med("p50"), "p99": med("p99"), "n": len(r), "rows": r[0]["rows"],
    }

pairs = [("SYNC_WAL", "sync=false"), ("ASYNC_WAL", "sync=false"), ("FSYNC_WAL", "sync=true")]
threads = sorted({k[2] for k in runs})
print()
print(f"Sequential puts, {sys.argv[2]}-byte values, PE keys; best-of / median of "
      f"{max(len(v) for v in runs.values())} rounds; CPU = user + sys of the whole process "
      "per million puts (lower is better)")
print()
print("| cairn durability | RocksDB WAL | threads | puts | cairn puts/s (best / median) "
      "| RocksDB puts/s (best / median) | cairn/RocksDB (best / median) "
      "| CPU s per M puts cairn / RocksDB (median) | RocksDB/cairn CPU | p50 / p99 µs cairn "
      "| p50 / p99 µs RocksDB |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for cd, rd in pairs:
    for t in threads:
        c, r = agg(("cairn", cd, t)), agg(("rocksdb", rd, t))
        if not c or not r:
            continue
        print(f"| {cd} | {rd} | {t} | {c['rows']} | {c['best']:,.0f} / {c['median']:,.0f} "
              f"| {r['best']:,.0f} / {r['median']:,.0f} "
              f"| **{c['best'] / r['best']:.2f}x** / {c['median'] / r['median']:.2f}x "
              f"| {c['cpu']:.2f} / {r['cpu']:.2f} | {r['cpu'] / c['cpu']:.2f}x "
              f"| {c['p50']:.1f} / {c['p99']:.1f} | {r['p50']:.1f} / {r['p99']:.1f} |")
EOF
