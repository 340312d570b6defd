#!/usr/bin/env python3
"""bench/report.sh's helper.

  pe-json WORKLOAD THREADS      `cairn pe --json` on stdin -> one bench-result line
  compact-json ENGINE           `cairn compact --json` (cairn) or PeerBench compact's cpu lines
                                (hbase) on stdin -> one compact-result line
  profile-checksum              async-profiler's collapsed stacks of HBase's profiled compaction
                                on stdin -> one checksum-profile line (samples in compaction,
                                in checksum code)
  report RESULTS META NOTES OUT the Markdown report (OUT/report.md, also printed) and the PNG
                                plots from every result line of the run (needs matplotlib)
"""
import json
import statistics
import sys
from collections import defaultdict

ENGINES = ["cairn", "rocksdb", "pebble", "hbase"]
NAMES = {"cairn": "cairn", "rocksdb": "RocksDB", "pebble": "Pebble", "hbase": "HBase 2.6.1"}
WORKLOADS = ["get", "multiget", "scan", "put"]
PERCENTILES = ["p50", "p75", "p95", "p99", "p999"]


def pe_json(workload, threads):
    d = json.load(sys.stdin)
    lat = d["latency_us"]
    ops, rows = d["ops"], d["ops"]
    if workload == "multiget":
        ops = lat["count"]  # batches; d["ops"] counts the gets in them
    if workload == "scan":
        rows = 0  # rows scanned on the server are not reported (all filtered out)
    print(
        f"bench-result engine=cairn workload={workload} threads={threads} ops={ops} rows={rows} "
        f"wall_s={d['wall_s']} user_s={d['cpu']['user_s']} sys_s={d['cpu']['sys_s']} "
        f"mean_us={lat['mean']} p50_us={lat['p50']} p75_us={lat['p75']} p95_us={lat['p95']} "
        f"p99_us={lat['p99']} p999_us={lat['p99_9']} max_us={lat['max']} "
        f"cache_hit_ratio={d['block_cache']['hit_ratio']}"
    )


def compact_json(engine):
    text = sys.stdin.read()
    if engine == "cairn":
        d = json.loads(text)
        print(
            f"compact-result engine=cairn files_in={d['files_in']} bytes_in={d['bytes_in']} "
            f"bytes_out={d['bytes_out']} wall_s={d['wall_s']} user_s={d['user_s']} "
            f"sys_s={d['sys_s']} checksum_s={d['checksum_s']} "
            f"checksum_share_pct={d['checksum_share_pct']}"
        )
        return
    tot = defaultdict(float)
    n = 0
    for line in text.splitlines():
        if line.startswith("cpu "):
            n += 1
            for kv in line.split()[1:]:
                k, v = kv.split("=")
                tot[k] += float(v)
    if n == 0:
        sys.exit("no cpu lines from HBase's compaction")
    print(
        f"compact-result engine=hbase stores={n} bytes_in={tot['bytes_in']:.0f} "
        f"wall_s={tot['wall_s']:.4f} user_s={tot['user_s']:.4f} sys_s={tot['sys_s']:.4f} "
        f"thread_user_s={tot['thread_user_s']:.4f} thread_sys_s={tot['thread_sys_s']:.4f}"
    )


# Frames that are checksum work in HBase's write and read paths: HBase's ChecksumUtil, Hadoop's
# DataChecksum and its CRC implementations, the JDK's CRC32 / CRC32C and their intrinsic stubs.
CHECKSUM_FRAMES = ("org/apache/hadoop/hbase/io/hfile/ChecksumUtil.",
                   "org/apache/hadoop/util/DataChecksum", "org/apache/hadoop/util/NativeCrc32.",
                   "org/apache/hadoop/util/PureJavaCrc32", "java/util/zip/CRC32",
                   "updateBytesCRC32")


def profile_checksum():
    compaction = checksum = 0
    for line in sys.stdin:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack:
            continue
        frames = stack.split(";")
        if not any(f.endswith("Compactor.performCompaction") for f in frames):
            continue
        compaction += int(count)
        if any(f.startswith(CHECKSUM_FRAMES) for f in frames):
            checksum += int(count)
    # A tiny compaction (CI's smoke run) may finish between samples: the report says so.
    print(f"checksum-profile engine=hbase compaction_samples={compaction} "
          f"checksum_samples={checksum}")


def parse(path):
    reads = defaultdict(list)  # (engine, workload, threads) -> [run]
    compactions = defaultdict(list)
    profiles = []  # HBase's profiled compaction: (samples in compaction, in checksum code)
    for line in open(path):
        parts = line.split()
        if not parts:
            continue
        kv = dict(p.split("=", 1) for p in parts[1:])
        if parts[0] == "bench-result":
            ops, wall = int(kv["ops"]), float(kv["wall_s"])
            cpu = float(kv["user_s"]) + float(kv["sys_s"])
            reads[(kv["engine"], kv["workload"], int(kv["threads"]))].append({
                "ops": ops, "rate": ops / wall, "rows": int(kv["rows"]),
                "row_rate": int(kv["rows"]) / wall, "cpu_us": cpu / ops * 1e6,
                **{p: float(kv[p + "_us"]) for p in PERCENTILES + ["max"]},
            })
        elif parts[0] == "puts-result":  # bench/rocksdb-peer and bench/pebble-peer fillseq
            rows, wall = int(kv["rows"]), float(kv["wall_s"])
            reads[(kv["engine"], "put", int(kv["threads"]))].append({
                "ops": rows, "rate": rows / wall, "rows": rows, "row_rate": rows / wall,
                "cpu_us": float(kv["cpu_s"]) / rows * 1e6,
                "p50": float(kv["p50_us"]), "p99": float(kv["p99_us"]),
                "p999": float(kv["p999_us"]), "max": float(kv["max_us"]),
            })
        elif parts[0] == "compact-result":
            compactions[kv["engine"]].append({k: float(v) for k, v in kv.items() if k != "engine"})
        elif parts[0] == "checksum-profile":
            profiles.append((int(kv["compaction_samples"]), int(kv["checksum_samples"])))
    return reads, compactions, profiles


def med(xs):
    return statistics.median(xs)


def fmt_rate(x):
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e4:
        return f"{x / 1e3:.0f} K"
    if x >= 1e3:
        return f"{x / 1e3:.1f} K"
    return f"{x:.1f}"


UNITS = {"get": "gets/s", "multiget": "rows/s (100-row batches)", "scan": "scans/s (10,000 rows each)",
         "put": "puts/s"}


def report(results, meta_path, notes_path, out):
    reads, compactions, profiles = parse(results)
    meta = dict(line.rstrip("\n").split("=", 1) for line in open(meta_path) if "=" in line)
    notes = [n.strip() for n in open(notes_path) if n.strip()]
    engines = [e for e in ENGINES if any(k[0] == e for k in reads) or e in compactions]
    peers = [e for e in engines if e != "cairn"]
    threads = sorted({k[2] for k in reads})
    rounds = int(meta.get("rounds", "1"))

    def rate(r, w):
        return r["row_rate"] if w == "multiget" else r["rate"]

    md = []
    md.append(f"# cairn next to its peers ({', '.join(NAMES[e] for e in engines)})")
    md.append("")
    md.append(f"Machine: {meta.get('machine', '?')}; cairn at {meta.get('commit', '?')}. "
              f"{rounds} rounds; each round starts with a different engine. Best-of / median of "
              "the rounds; ratios cairn / peer from this run (above 1: cairn is faster; for CPU "
              "per operation, below 1: cairn uses less).")
    md.append("")
    md.append(f"Read workloads: {int(meta['rows']):,} rows x {meta['value_size']} B values, every block "
              f"cached; get = {int(meta['rows']):,} random gets; multiget = the same number of rows "
              f"in batches of {meta['batch']}; scan = {meta['scans']} scans of {int(meta['range']):,} "
              f"rows from a random row, all filtered out (PE scanRange10000 --filterAll). "
              f"put = {int(meta['write_rows']):,} sequential puts of {meta['value_size']} B, WAL on, "
              "not fsynced. Threads split the operations.")
    md.append("")
    header = "| workload | threads | cairn (best / median) |"
    sep = "|---|---|---|"
    for p in peers:
        header += f" {NAMES[p]} (best / median) | cairn / {NAMES[p]} (best / median) |"
        sep += "---|---|"
    md.append("## Throughput")
    md.append("")
    md.append(header)
    md.append(sep)
    for w in WORKLOADS:
        for t in threads:
            c = reads.get(("cairn", w, t))
            if not c:
                continue
            cb, cm = max(rate(r, w) for r in c), med([rate(r, w) for r in c])
            row = f"| {w} ({UNITS[w]}) | {t} | {fmt_rate(cb)} / {fmt_rate(cm)} |"
            for p in peers:
                r = reads.get((p, w, t))
                if not r:
                    row += " not run | — |"
                    continue
                pb, pm = max(rate(x, w) for x in r), med([rate(x, w) for x in r])
                rb = f"{cb / pb:.2f}x" if pb > 0 else "—"
                rm = f"{cm / pm:.2f}x" if pm > 0 else "—"
                row += f" {fmt_rate(pb)} / {fmt_rate(pm)} | **{rb}** / {rm} |"
            md.append(row)
    md.append("")
    md.append("## CPU per operation and latency (medians)")
    md.append("")
    md.append("CPU: user + system time of the whole process over the timed part, per operation "
              "(a multiget batch, a scan, a put), in µs. Latency per operation in µs "
              "(cairn's are whole µs from its HDR histogram).")
    md.append("")
    header = "| workload | threads | engine | CPU µs/op | cairn CPU / engine CPU | p50 | p99 | p99.9 |"
    md.append(header)
    md.append("|---|---|---|---|---|---|---|---|")
    for w in WORKLOADS:
        for t in threads:
            c = reads.get(("cairn", w, t))
            if not c:
                continue
            ccpu = med([r["cpu_us"] for r in c])
            for e in engines:
                r = reads.get((e, w, t))
                if not r:
                    continue
                cpu = med([x["cpu_us"] for x in r])
                # At tiny sizes (CI's smoke run) a peer's CPU time can round to zero.
                ratio = "" if e == "cairn" else (f"{ccpu / cpu:.2f}" if cpu > 0 else "—")
                md.append(f"| {w} | {t} | {NAMES[e]} | {cpu:.2f} | {ratio} | "
                          f"{med([x['p50'] for x in r]):.1f} | {med([x['p99'] for x in r]):.1f} | "
                          f"{med([x['p999'] for x in r]):.1f} |")
    if compactions:
        md.append("")
        md.append("## Compaction study")
        md.append("")
        md.append(f"`cairn pe sequentialWrite --valueSize={meta['compact_value']} --presplit=10 "
                  f"--rows={meta['compact_rows']}` (store files written by cairn), then a major "
                  "compaction of the whole table (10 regions) by `cairn compact --major` and by "
                  "HBase 2.6.1's HStore as its CompactionTool drives it, each on a fresh copy "
                  "(in the page cache). CPU is the whole process's over the compactions "
                  "(HBase: GC and JIT included), per GB read; median of the rounds. cairn "
                  "verifies every block's checksum on read and computes them on write; HBase's "
                  "store here reads through a raw local FileSystem, so it computes checksums "
                  "on write but does not verify them on read.")
        md.append("")
        md.append("| | cairn | HBase 2.6.1 | cairn / HBase |")
        md.append("|---|---|---|---|")
        c, h = compactions.get("cairn", []), compactions.get("hbase", [])

        def per_gb(runs, k):
            return med([r[k] / (r["bytes_in"] / 1e9) for r in runs]) if runs else None

        def line(label, cv, hv, unit, digits=3):
            cs = f"{cv:.{digits}f}{unit}" if cv is not None else "—"
            hs = f"{hv:.{digits}f}{unit}" if hv is not None else "—"
            ratio = f"{cv / hv:.2f}" if cv is not None and hv else "—"
            md.append(f"| {label} | {cs} | {hs} | {ratio} |")

        gb = med([r["bytes_in"] for r in c]) / 1e9 if c else 0
        md.append(f"| data read | {gb:.2f} GB | "
                  f"{med([r['bytes_in'] for r in h]) / 1e9 if h else 0:.2f} GB | |")
        line("user CPU s per GB", per_gb(c, "user_s"), per_gb(h, "user_s"), " s")
        line("system CPU s per GB", per_gb(c, "sys_s"), per_gb(h, "sys_s"), " s")
        line("user CPU s per GB (HBase: compacting thread only)", per_gb(c, "user_s"),
             per_gb(h, "thread_user_s"), " s")
        line("wall time", med([r["wall_s"] for r in c]) if c else None,
             med([r["wall_s"] for r in h]) if h else None, " s")
        if c or profiles:
            cs = f"{med([r['checksum_share_pct'] for r in c]):.2f}%" if c else "—"
            if profiles:
                n = sum(p[0] for p in profiles)
                k = sum(p[1] for p in profiles)
                hs = (f"{100 * k / n:.2f}% ({k} of {n} CPU samples)" if n
                      else "no CPU samples (compaction too short)")
            else:
                hs = "not measured"
            md.append(f"| checksum share of CPU | {cs} | {hs} | |")
            # Absolute checksum CPU per GB read: cairn timed, HBase one 1 ms CPU sample each.
            cms = (med([r["checksum_s"] / (r["bytes_in"] / 1e9) for r in c]) * 1e3
                   if c and all("checksum_s" in r for r in c) else None)
            hms = (sum(p[1] for p in profiles) / len(profiles)
                   / (med([r["bytes_in"] for r in h]) / 1e9) if profiles and h else None)
            line("checksum CPU per GB read (HBase: 1 ms per sample)", cms, hms, " ms", 1)
            if profiles:
                md.append("")
                md.append("cairn's checksum share is the time inside its checksum calls during the "
                          "compaction over the process's user + system CPU. HBase's is sampled: "
                          "one more compaction of a fresh copy per round under async-profiler "
                          "(CPU samples every millisecond with Java, native and kernel frames; "
                          "not part of the timed rounds), counting the samples inside "
                          "`Compactor.performCompaction` with HBase's `ChecksumUtil`, Hadoop's "
                          "`DataChecksum` or the JDK's CRC32C (or its intrinsic) on the stack.")
    md.append("")
    md.append("## Notes")
    md.append("")
    for n in notes + [
        "RocksDB: the `rocksdb` Rust crate (bench/rocksdb-peer/Cargo.lock pins the version); "
        "4 KiB blocks (its default), 10-bit Bloom filter, CRC32C, 4 GiB LRU cache, index and "
        "filter blocks in the cache. Pebble v2.1.7: its defaults (4 KiB blocks), no compression, "
        "10-bit Bloom filter, 4 GiB cache; no multi-get API, so a batch is 100 Gets in a row. "
        "HBase: its HFile layer only (StoreFileWriter, HFile reader with checksum verification, "
        "on-heap LruBlockCache; no region server, RPC or StoreScanner), 64 KiB blocks; puts are "
        "not run on it. cairn: 64 KiB blocks, ROW Bloom filter, CRC32C, 4 GiB block cache; each "
        "workload is its own `cairn pe` process that scans the table (untimed, until a pass "
        "misses nothing) to fill its cache; the read table is major-compacted into one file, as "
        "the peers compact theirs, and kept one region (DisabledRegionSplitPolicy, for the puts "
        "too: HBase's default policy would split it at 256 MiB).",
        "scan: cairn runs PE's scanRange10000 --filterAll through its region scanner (memstore "
        "and store-file heap, MVCC read point, HBase's query matcher and the filter on every "
        "cell); RocksDB and Pebble iterate with an upper bound and touch every value; HBase's "
        "figure is its bare HFileScanner (seekTo + next, a row compare per cell), which skips "
        "the StoreScanner, matcher and filter work a region server would do.",
        "RocksDB, Pebble and HBase verify a block's checksum only when they read it from a "
        "file, not on a cache hit; cairn does the same by default "
        "(`cairn.blockcache.verify.memory.hits=false`).",
        "A 2-core VM shared with other builds: rounds alternate engines, and the spread between "
        "best and median shows the noise.",
    ]:
        md.append(f"- {n}")
    try:
        plots(reads, engines, threads, out)
        md.append("")
        md.append("![throughput against client threads](throughput.png)")
        md.append("")
        md.append("![latency percentiles](latency.png)")
    except ImportError:
        md.append("- No plots: matplotlib is not installed.")
    text = "\n".join(md) + "\n"
    open(f"{out}/report.md", "w").write(text)
    print(text)


def plots(reads, engines, threads, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workloads = [w for w in WORKLOADS if any(k[1] == w for k in reads)]
    fig, axes = plt.subplots(1, len(workloads), figsize=(4.2 * len(workloads), 3.6))
    if len(workloads) == 1:
        axes = [axes]
    for ax, w in zip(axes, workloads):
        for e in engines:
            xs, best, medn = [], [], []
            for t in threads:
                r = reads.get((e, w, t))
                if r:
                    vals = [x["row_rate"] if w == "multiget" else x["rate"] for x in r]
                    xs.append(t)
                    best.append(max(vals))
                    medn.append(med(vals))
            if xs:
                line, = ax.plot(xs, medn, marker="o", label=NAMES[e])
                ax.plot(xs, best, linestyle=":", color=line.get_color())
        ax.set_title(w)
        ax.set_xlabel("client threads")
        ax.set_xticks(threads)
        ax.set_ylabel(UNITS[w])
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("throughput (solid: median, dotted: best of the rounds)", fontsize=10)
    fig.tight_layout()
    fig.savefig(f"{out}/throughput.png", dpi=90)
    plt.close(fig)

    lat_workloads = [w for w in ["get", "multiget", "scan"] if w in workloads]
    fig, axes = plt.subplots(1, len(lat_workloads), figsize=(4.2 * len(lat_workloads), 3.6))
    if len(lat_workloads) == 1:
        axes = [axes]
    labels = ["p50", "p75", "p95", "p99", "p99.9"]
    t = threads[0]
    for ax, w in zip(axes, lat_workloads):
        for e in engines:
            r = reads.get((e, w, t))
            if r:
                ax.plot(labels, [med([x[p] for x in r]) for p in PERCENTILES], marker="o",
                        label=NAMES[e])
        ax.set_yscale("log")
        ax.set_title(f"{w}, {t} thread{'s' if t > 1 else ''}")
        ax.set_ylabel("latency per operation (µs)")
        ax.grid(alpha=0.3, which="both")
    axes[0].legend(fontsize=8)
    fig.suptitle("latency percentiles (median of the rounds)", fontsize=10)
    fig.tight_layout()
    fig.savefig(f"{out}/latency.png", dpi=90)
    plt.close(fig)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "pe-json":
        pe_json(sys.argv[2], int(sys.argv[3]))
    elif cmd == "compact-json":
        compact_json(sys.argv[2])
    elif cmd == "profile-checksum":
        profile_checksum()
    elif cmd == "report":
        report(*sys.argv[2:6])
    else:
        sys.exit(__doc__)
