#!/usr/bin/env bash
# Two builds of cairn on bench/report.sh's read workloads, in one run on one table: gets, 100-row
# multi-gets and 10,000-row filterAll scans (`cairn pe randomRead --warmCache`, `--multiGet=100`,
# `scanRange10000 --filterAll`, the report's exact commands) at 1 and 2 threads, the two builds
# alternating round by round. Prints a Markdown table: rows/s and rows per CPU-second, best and
# median of the rounds, and B / A. For checking that a change to the read path costs nothing.
#
# usage: bench/ab-reads.sh CAIRN_A CAIRN_B   (two `cairn` binaries, e.g. release builds of two
#        commits; the table is loaded and compacted by A, and both read it: same file format)
# environment (defaults): ROUNDS (3), CAIRN_BENCH_ROWS (300000), CAIRN_BENCH_VALUE_SIZE (1024),
#   CAIRN_BENCH_SCANS (200), CAIRN_BENCH_THREADS ("1 2"), CAIRN_BENCH_DIR (temp dir)
set -euo pipefail
[ $# = 2 ] || { echo "usage: $0 CAIRN_A CAIRN_B" >&2; exit 2; }
a=$1
b=$2
rounds=${ROUNDS:-3}
rows=${CAIRN_BENCH_ROWS:-300000}
value_size=${CAIRN_BENCH_VALUE_SIZE:-1024}
scans=${CAIRN_BENCH_SCANS:-200}
threads_list=${CAIRN_BENCH_THREADS:-1 2}
base=$(mktemp -d "${CAIRN_BENCH_DIR:-${TMPDIR:-/tmp}}/cairn-ab.XXXXXX")
trap 'rm -rf "$base"' EXIT
results=$base/results.txt

echo "== loading $rows rows x $value_size B with A, major-compacted" >&2
# One region (HBase's default split policy would split it at 256 MiB).
"$a" pe --data="$base/t" --rows="$rows" --valueSize="$value_size" --json \
    -D hbase.regionserver.region.split.policy=org.apache.hadoop.hbase.regionserver.DisabledRegionSplitPolicy sequentialWrite 1 >/dev/null
"$a" compact --major "$base/t/data/default/TestTable" >/dev/null

one() { # label binary workload threads extra-args...
    local label=$1 bin=$2 w=$3 t=$4
    shift 4
    local per=$((rows / t))
    "$bin" pe --data="$base/t" --rows="$per" --valueSize="$value_size" --blockCacheSize=4GiB \
        --warmCache --json "$@" "$t" |
        python3 -c 'import json,sys; v=json.load(sys.stdin); print(sys.argv[1], sys.argv[2], sys.argv[3], v["rows_per_s"], v["rows_per_cpu_s"])' \
            "$label" "$w" "$t" >>"$results"
}
sample=$(python3 -c "print($scans / $rows)")
for r in $(seq "$rounds"); do
    echo "== round $r of $rounds" >&2
    for t in $threads_list; do
        for side in A B; do
            bin=$a
            [ $side = B ] && bin=$b
            one $side "$bin" get "$t" randomRead
            one $side "$bin" multiget "$t" --multiGet=100 randomRead
            one $side "$bin" scan "$t" --sampleRate="$sample" --filterAll scanRange10000
        done
    done
done
python3 - "$results" <<'EOF'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1])]
keys = []
for side, w, t, *_ in rows:
    if (w, t) not in keys:
        keys.append((w, t))
def vals(side, w, t, i):
    return [float(r[3 + i]) for r in rows if r[0] == side and r[1] == w and r[2] == t]
print("| workload | threads | A rows/s best / median | B rows/s best / median | B / A median | A rows per CPU-s median | B rows per CPU-s median | B / A |")
print("|---|---|---|---|---|---|---|---|")
for w, t in keys:
    a, b = vals("A", w, t, 0), vals("B", w, t, 0)
    ac, bc = vals("A", w, t, 1), vals("B", w, t, 1)
    ma, mb = statistics.median(a), statistics.median(b)
    mac, mbc = statistics.median(ac), statistics.median(bc)
    print(f"| {w} | {t} | {max(a):,.0f} / {ma:,.0f} | {max(b):,.0f} / {mb:,.0f} | {mb / ma:.2f} | {mac:,.0f} | {mbc:,.0f} | {mbc / mac:.2f} |")
EOF
