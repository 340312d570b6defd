#!/usr/bin/env bash
# Multi-get throughput against client threads, far past the core count: does `cairn pe`'s
# randomRead keep its rows/s when N client threads share few cores? A benchmark, not a test
# (not run in CI): numbers depend on the machine and on whatever else runs on it.
#
# Builds the release cairn, makes the table once (PE sequentialWrite of ROWS rows x
# VALUE_SIZE B, then a major compaction into one file), then runs
#   cairn pe --multiGet=BATCH --warmCache --blockCacheSize=2GiB randomRead N
# with ROWS/N rows per client (every run reads ROWS rows in all) for each N of THREADS, ROUNDS
# rounds, the thread counts in alternating order (ascending, then descending, ...) so a slow
# phase of the machine does not land on one end of the curve.
#
# Writes to OUT: runs.jsonl (one `cairn pe --json` object per run, with "round"), threads.md
# (threads, rows/s best and median, % of the best thread count's median, user and system CPU
# seconds per run, CPU us per row; medians over the rounds) and threads.png (rows/s against
# threads). The plot needs matplotlib: it is pip-installed into the virtualenv VENV if missing
# (nothing is installed system-wide); without it the table is still written.
#
# usage: bench/threads.sh
# environment (defaults): THREADS ("1 2 5 10 25 50 75"), ROUNDS (3), ROWS (300000; must divide
#   by every thread count), VALUE_SIZE (1000), BATCH (100), DATA (/tmp/cairn-threads/read:
#   the table, kept between invocations), OUT (bench/results/<UTC date>-threads),
#   CAIRN (the binary; default: build target/release/cairn), LABEL (what the table and plot call
#   the binary: the commit it was built from; default: HEAD's commit when building, else CAIRN),
#   VENV (target/bench-venv)
set -euo pipefail
cd "$(dirname "$0")/.."

threads=${THREADS:-1 2 5 10 25 50 75}
rounds=${ROUNDS:-3}
rows=${ROWS:-300000}
value_size=${VALUE_SIZE:-1000}
batch=${BATCH:-100}
data=${DATA:-/tmp/cairn-threads/read}
out=${OUT:-bench/results/$(date -u +%Y-%m-%d)-threads}
venv=${VENV:-target/bench-venv}

for t in $threads; do
    if [ $((rows % t)) != 0 ]; then
        echo "ROWS ($rows) must divide by every thread count ($t does not)" >&2
        exit 2
    fi
done

if [ -z "${CAIRN:-}" ]; then
    echo "== building release cairn" >&2
    cargo build --release -q -p cairn-cli >&2
    cairn=target/release/cairn
else
    cairn=$CAIRN
fi

if [ ! -d "$data/data/default/TestTable" ]; then
    echo "== making the table: $rows rows x $value_size B in $data" >&2
    mkdir -p "$(dirname "$data")"
    # One region, as before HBase's default split policy came in (it would split at 256 MiB).
    "$cairn" pe --data="$data" --rows="$rows" --valueSize="$value_size" \
        -D hbase.regionserver.region.split.policy=org.apache.hadoop.hbase.regionserver.DisabledRegionSplitPolicy \
        sequentialWrite 1 >/dev/null 2>&1
    "$cairn" compact --major "$data/data/default/TestTable" >/dev/null
fi

mkdir -p "$out"
runs=$out/runs.jsonl
: >"$runs"
if [ -n "${CAIRN:-}" ]; then
    label=${LABEL:-$cairn}
else
    label=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
    git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && label="$label+dirty"
fi

order=($threads)
total=$((rounds * ${#order[@]}))
n=0
for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 0 ]; then
        list=$(printf '%s\n' "${order[@]}" | tac)
    else
        list=${order[*]}
    fi
    for t in $list; do
        n=$((n + 1))
        json=$("$cairn" pe --data="$data" --rows=$((rows / t)) --valueSize="$value_size" \
            --multiGet="$batch" --warmCache --blockCacheSize=2GiB --json randomRead "$t" 2>/dev/null)
        python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["round"]=int(sys.argv[2]); print(json.dumps(d))' \
            "$json" "$r" >>"$runs"
        python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("[%s/%s] round %s, %3d threads: %.0f rows/s, user %.3f s, sys %.3f s" % (sys.argv[2], sys.argv[3], sys.argv[4], d["clients"], d["rows_per_s"], d["cpu"]["user_s"], d["cpu"]["sys_s"]))' \
            "$json" "$n" "$total" "$r" >&2
    done
done

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
"$plot_python" bench/threads.py "$runs" "$out" "$label" "$rounds" "$rows" "$value_size" "$batch"
echo "== wrote $out/threads.md$( [ -f "$out/threads.png" ] && echo " and $out/threads.png")" >&2
