#!/usr/bin/env bash
# Data block encodings side by side on the embedded store: for each of NONE, PREFIX, DIFF,
# FAST_DIFF and ROW_INDEX_V1, `cairn pe sequentialWrite` (puts, flushes and the encoding of
# every block written), the store files' size, a major `cairn compact` of them (decoding and
# encoding every block), then random gets with a block cache far smaller than the data (most
# reads miss: read, verify and decode a block) and with one that holds it all (hits). One
# table, Markdown, ratios against NONE from the same run.
#
#   bench/encodings.sh            # ROWS=1000000 VALUE=100 GETS_SMALL_CACHE=16MiB
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${ROWS:-1000000}
VALUE=${VALUE:-100}
SMALL=${GETS_SMALL_CACHE:-16MiB}
work=$(mktemp -d /tmp/encodings-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

cargo build --release --locked -p cairn-cli
cairn=target/release/cairn
echo "machine: $(nproc) CPUs; $ROWS rows x $VALUE B values, one region"

for enc in NONE PREFIX DIFF FAST_DIFF ROW_INDEX_V1; do
    d="$work/$enc"
    "$cairn" pe --json --data="$d" --rows="$ROWS" --valueSize="$VALUE" --blockEncoding="$enc" \
        sequentialWrite 1 >"$work/$enc-write.json"
    "$cairn" compact --json --major "$d/data/default/TestTable" >"$work/$enc-compact.json"
    "$cairn" pe --json --data="$d" --rows="$ROWS" --blockCacheSize="$SMALL" randomRead 1 \
        >"$work/$enc-miss.json"
    "$cairn" pe --json --data="$d" --rows="$ROWS" randomRead 1 >"$work/$enc-hit.json"
    find "$d/data/default/TestTable" -path '*/info0/*' -type f -printf '%s\n' \
        | awk '{s += $1} END {print s}' >"$work/$enc-bytes.txt"
    echo "$enc done"
done

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
encs = ["NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1"]
def load(enc, what):
    return json.load(open("%s/%s-%s.json" % (work, enc, what)))
rows = []
for enc in encs:
    c = load(enc, "compact")
    rows.append(dict(
        enc=enc,
        size=int(open("%s/%s-bytes.txt" % (work, enc)).read()),
        put=load(enc, "write")["rows_per_cpu_s"],
        compact=c["user_s"] + c["sys_s"],
        miss=load(enc, "miss")["rows_per_cpu_s"],
        miss_hits=load(enc, "miss")["block_cache"]["hit_ratio"],
        hit=load(enc, "hit")["rows_per_cpu_s"]))
b = rows[0]
print()
print("| encoding | store files | puts per CPU-s | major compaction CPU | gets per CPU-s, small cache (hit ratio) | gets per CPU-s, all cached |")
print("|---|---|---|---|---|---|")
for r in rows:
    print("| %s | %.1f MB (%.2fx) | %.0f K (%.2fx) | %.2f s (%.2fx) | %.0f K (%.2fx; %.0f%%) | %.0f K (%.2fx) |" % (
        r["enc"], r["size"] / 1e6, r["size"] / b["size"], r["put"] / 1e3, r["put"] / b["put"],
        r["compact"], r["compact"] / b["compact"], r["miss"] / 1e3, r["miss"] / b["miss"],
        100 * r["miss_hits"], r["hit"] / 1e3, r["hit"] / b["hit"]))
PY
