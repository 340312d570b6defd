"""Sampler, table and plot of bench/soak.sh: the server's memory and YCSB's latency over time.

usage: soak.py sample --pid PID --http HOST:PORT --out DIR --soak-secs S --status-secs S
           --bound BYTES
       soak.py report --out DIR --label L --bound BYTES --cache B --flush B --multiplier M
           --regions R --baseline B --global-memstore B --handlers N --flat MIB_PER_MIN
           --compaction-threshold N --records N --threads N --target N --mix TEXT
           --distribution D --soak-secs S

`sample` runs beside the server until it exits or gets SIGTERM: every second it appends the
server's VmRSS and VmHWM (/proc/PID/status) to DIR/rss.csv; every 5 s its smaps_rollup and
the /jmx gauges of the region server, block cache and WAL to DIR/mem.jsonl; every
--status-secs a progress line on stderr (phase, time left, RSS against the bound, memstore
and block cache, YCSB's latest ops/s and p99).

`report` reads those, DIR/logs/phases and YCSB's status lines (DIR/logs/ycsb-load.log,
ycsb-run.log; each status line's latencies cover that interval only), and writes DIR/soak.csv
(one row per interval), DIR/soak.md and, if matplotlib imports, DIR/soak.png. Exit status 1
when the RSS (any sample, or the kernel's high-water mark VmHWM) exceeded the bound, or, in a
mixed load of 10 minutes or more, RSS grew faster than --flat MiB/min over its second half.
"""

import argparse
import csv
import datetime
import json
import math
import os
import platform
import re
import signal
import sys
import time
import urllib.request

MIB = 1048576
OPS = ("READ", "UPDATE", "SCAN", "INSERT")
STATUS = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}) (\d+) sec: (\d+) operations; "
    r"([\d.,]+) current ops/sec;(.*)$"
)
BRACKET = re.compile(r"\[([A-Z-]+): ([^\]]*)\]")


# ---- reading ----------------------------------------------------------------------------
def proc_status(pid):
    """VmRSS and VmHWM in KiB and the thread count, or None once the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            text = f.read()
    except OSError:
        return None
    v = {}
    for line in text.splitlines():
        k, _, rest = line.partition(":")
        if k in ("VmRSS", "VmHWM", "Threads"):
            v[k] = int(rest.split()[0])
    return v if "VmRSS" in v else None


def smaps_rollup(pid):
    """The KiB fields of /proc/PID/smaps_rollup (Rss, Anonymous, AnonHugePages, ...)."""
    out = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[2] == "kB":
                    out[parts[0].rstrip(":")] = int(parts[1])
    except OSError:
        pass
    return out


def jmx(http):
    """The numeric gauges of the region server, block cache and WAL beans, by bean."""
    try:
        with urllib.request.urlopen(f"http://{http}/jmx", timeout=3) as r:
            beans = json.load(r)["beans"]
    except (OSError, ValueError, KeyError):
        return {}
    out = {}
    for b in beans:
        sub = b.get("name", "").rpartition("sub=")[2]
        if sub in ("Server", "BlockCache", "WAL"):
            out[sub] = {k: v for k, v in b.items() if isinstance(v, (int, float))}
    return out


def phases(out):
    """[(name, start epoch)] from logs/phases, in order."""
    p = []
    try:
        with open(f"{out}/logs/phases") as f:
            for line in f:
                name, t = line.split()
                p.append((name, float(t)))
    except OSError:
        pass
    return p


def ycsb_status(path):
    """YCSB's status lines: [(epoch, current ops/s, {OP: {Count, 99, ...}})]."""
    rows = []
    try:
        f = open(path, errors="replace")
    except OSError:
        return rows
    with f:
        for line in f:
            m = STATUS.match(line.strip())
            if not m:
                continue
            t = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S:%f").timestamp()
            ops = {}
            for name, body in BRACKET.findall(m.group(5)):
                d = {}
                for kv in body.split(", "):
                    k, _, v = kv.partition("=")
                    try:
                        d[k] = float(v)
                    except ValueError:
                        d[k] = math.nan
                ops[name] = d
            rows.append((t, float(m.group(4).replace(",", "")), ops))
    return rows


def smaps_split(m):
    """(anonymous bytes, file-backed bytes) of one mem.jsonl record (None when absent)."""
    sm = m.get("smaps", {})
    if "Rss" not in sm:
        return None, None
    return sm.get("Anonymous", 0) * 1024, (sm["Rss"] - sm.get("Anonymous", 0)) * 1024


def mem_gauges(m):
    """(memstore bytes, block cache bytes) from one mem.jsonl record (None when absent)."""
    j = m.get("jmx", {})
    return j.get("Server", {}).get("memStoreSize"), j.get("BlockCache", {}).get("blockCacheSize")


# ---- sample -----------------------------------------------------------------------------
def sample(a):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    rss = open(f"{a.out}/rss.csv", "w", buffering=1)
    rss.write("t_epoch,rss_kib,hwm_kib,threads\n")
    mem = open(f"{a.out}/mem.jsonl", "w", buffering=1)
    tick, next_t, max_rss, last_mem = 0, time.time(), 0, {}
    while not stop:
        now = time.time()
        st = proc_status(a.pid)
        if st is None:
            break
        rss.write(f"{now:.3f},{st['VmRSS']},{st.get('VmHWM', 0)},{st.get('Threads', 0)}\n")
        max_rss = max(max_rss, st["VmRSS"])
        if tick % 5 == 0:
            last_mem = {
                "t": now,
                "loadavg": os.getloadavg()[0],
                "smaps": smaps_rollup(a.pid),
                "jmx": jmx(a.http),
            }
            mem.write(json.dumps(last_mem) + "\n")
        if tick % a.status_secs == 0:
            progress(a, now, st["VmRSS"], max_rss, last_mem)
        tick += 1
        next_t += 1
        time.sleep(max(0.0, next_t - time.time()))
    rss.close()
    mem.close()


def progress(a, now, rss_kib, max_kib, last_mem):
    ph = phases(a.out)
    if not ph:
        return
    name, start = ph[-1]
    since = now - start
    if name == "run":
        where = f"run {since:4.0f}/{a.soak_secs} s, {max(0, a.soak_secs - since):4.0f} s left"
    elif name == "load":
        where = f"loading, {since:.0f} s (then {a.soak_secs} s of mixed load)"
    else:
        where = f"{name}, {since:.0f} s"
    line = (
        f"soak: {where} | RSS {rss_kib / 1024:.0f} MiB (max {max_kib / 1024:.0f}, "
        f"bound {a.bound / MIB:.0f})"
    )
    ms, bc = mem_gauges(last_mem)
    if ms is not None:
        line += f" | memstore {ms / MIB:.0f} MiB, cache {(bc or 0) / MIB:.0f} MiB"
    if name in ("load", "run"):
        st = ycsb_status(f"{a.out}/logs/ycsb-{name}.log")
        if st:
            _, rate, ops = st[-1]
            p99 = ", ".join(
                f"{op.lower()} {ops[op]['99'] / 1000:.1f}"
                for op in OPS
                if op in ops and ops[op].get("Count", 0) > 0
            )
            line += f" | {rate:,.0f} ops/s, p99 ms: {p99}"
    print(line, file=sys.stderr, flush=True)


# ---- report -----------------------------------------------------------------------------
def load_rss(out):
    rows = []
    with open(f"{out}/rss.csv") as f:
        for r in csv.DictReader(f):
            rows.append((float(r["t_epoch"]), int(r["rss_kib"]), int(r["hwm_kib"])))
    return rows


def load_mem(out):
    rows = []
    try:
        with open(f"{out}/mem.jsonl") as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except OSError:
        pass
    return rows


def intervals(out, ph, rss, mem):
    """One dict per YCSB status interval, both phases, times in s since the server started."""
    t0 = ph[0][1]
    starts = dict(ph)
    rows = []
    for name in ("load", "run"):
        if name not in starts:
            continue
        prev = starts[name]
        for t, rate, ops in ycsb_status(f"{out}/logs/ycsb-{name}.log"):
            in_iv = [r for r in rss if prev < r[0] <= t]
            m = [x for x in mem if x["t"] <= t]
            ms, bc = mem_gauges(m[-1]) if m else (None, None)
            anon, file_ = smaps_split(m[-1]) if m else (None, None)
            row = {
                "phase": name,
                "t_s": round(t - t0, 1),
                "interval_s": round(t - prev, 1),
                "rss_max_mib": round(max(r[1] for r in in_iv) / 1024, 1) if in_iv else "",
                "rss_end_mib": round(in_iv[-1][1] / 1024, 1) if in_iv else "",
                "ops_per_s": round(rate, 1),
            }
            for op in OPS:
                d = ops.get(op, {})
                row[f"{op.lower()}_p99_us"] = (
                    int(d["99"]) if d.get("Count", 0) > 0 and not math.isnan(d["99"]) else ""
                )
            row["failed_ops"] = int(
                sum(d.get("Count", 0) for k, d in ops.items() if k.endswith("-FAILED"))
            )
            row["memstore_mib"] = round(ms / MIB, 1) if ms is not None else ""
            row["blockcache_mib"] = round(bc / MIB, 1) if bc is not None else ""
            row["anon_mib"] = round(anon / MIB, 1) if anon is not None else ""
            row["file_mib"] = round(file_ / MIB, 1) if file_ is not None else ""
            rows.append(row)
            prev = t
    return rows


def med(xs):
    s = sorted(xs)
    n = len(s)
    if not n:
        return math.nan
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def slope_mib_per_min(points):
    """Least-squares slope of (seconds, MiB) points, in MiB per minute."""
    if len(points) < 2:
        return math.nan
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    if sxx == 0:
        return math.nan
    return 60 * sum((p[0] - mx) * (p[1] - my) for p in points) / sxx


def ms(us):
    return f"{us / 1000:.1f}" if us == us else "-"


def report(a):
    out = a.out
    ph = phases(out)
    rss = load_rss(out)
    mem = load_mem(out)
    t0 = ph[0][1]
    starts = dict(ph)
    rows = intervals(out, ph, rss, mem)
    cols = [
        "phase", "t_s", "interval_s", "rss_max_mib", "rss_end_mib", "ops_per_s", "read_p99_us",
        "update_p99_us", "scan_p99_us", "insert_p99_us", "failed_ops", "memstore_mib",
        "blockcache_mib", "anon_mib", "file_mib",
    ]
    with open(f"{out}/soak.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)

    max_sample = max(r[1] for r in rss)
    hwm = max(r[2] for r in rss)
    peak_kib = max(max_sample, hwm)
    t_peak = next(r[0] for r in rss if r[1] == max_sample) - t0
    over = peak_kib * 1024 > a.bound
    over_secs = sum(1 for r in rss if r[1] * 1024 > a.bound)
    run_rows = [r for r in rows if r["phase"] == "run"]
    run_start = starts.get("run", t0) - t0
    run_end = starts.get("end", rss[-1][0]) - t0

    bound_mib = a.bound / MIB
    md = [
        f"# Soak: `cairn serve` under mixed load ({a.label})",
        "",
        f"{datetime.datetime.utcfromtimestamp(t0).strftime('%Y-%m-%d %H:%M UTC')}; machine: "
        f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} "
        f"{platform.release()}, shared with other work (noisy: latencies include other "
        "processes' CPU use)" + loadavg_note(mem) + ".",
        "",
        "## Settings",
        "",
        f"- Block cache (`hfile.block.cache.size`): {a.cache / MIB:.0f} MiB; table "
        f"`MEMSTORE_FLUSHSIZE` {a.flush / MIB:.0f} MiB (set through HBase's client: `cairn "
        "serve` has no server-wide flush size), "
        f"`hbase.hregion.memstore.block.multiplier` {a.multiplier}, {a.regions} regions, "
        f"`hbase.regionserver.global.memstore.size` {a.global_memstore / MIB:.0f} MiB, "
        f"`hbase.hstore.compactionThreshold` {a.compaction_threshold}, {a.handlers} RPC "
        "handler threads.",
        f"- YCSB 0.17.0 through HBase 2.6.1's Java client (native RPC): load {a.records:,} rows "
        f"of 10 x 100 B, then {a.soak_secs} s of {a.mix}, {a.distribution} keys, "
        f"{a.threads} threads, "
        + ("unthrottled." if a.target == 0 else f"target {a.target:,} ops/s."),
    ]
    if a.notes:
        md.append(f"- Also: {a.notes}.")
    md += [
        f"- Bound: block cache {a.cache / MIB:.0f} MiB + global memstore limit "
        f"{a.global_memstore / MIB:.0f} MiB (every memstore of the server together, flush "
        "snapshots included: writes wait at it) + 2 x "
        f"{a.wal / MIB:.0f} MiB WAL segments (the active and the prepared one are "
        f"memory-mapped) + {a.baseline / MIB:.0f} MiB allowance for the binary, thread "
        "stacks, buffers, file indexes and the allocator's per-thread pages (64 MiB + 8 MiB "
        f"per RPC handler thread) = **{bound_mib:.0f} MiB**; and flat: RSS growing by at "
        f"most {a.flat:g} MiB/min over the second half of the mixed load (checked in runs of "
        "10 minutes or more).",
        "",
        "## Result",
        "",
        (
            f"**RSS exceeded the bound**: peak {peak_kib / 1024:.0f} MiB against "
            f"{bound_mib:.0f} MiB ({over_secs} one-second samples over it)."
            if over
            else f"**Within the bound**: peak RSS {peak_kib / 1024:.0f} MiB "
            f"({100 * peak_kib * 1024 / a.bound:.0f}% of {bound_mib:.0f} MiB)."
        )
        + f" Highest 1 s sample {max_sample / 1024:.0f} MiB at {t_peak:.0f} s; the kernel's "
        f"high-water mark (VmHWM) {hwm / 1024:.0f} MiB.",
    ]
    # Growth over the second half of the run: a leak shows as a steady slope.
    half = [
        (r[0] - t0, r[1] / 1024)
        for r in rss
        if run_start + (run_end - run_start) / 2 <= r[0] - t0 <= run_end
    ]
    slope = slope_mib_per_min(half)
    growing = False
    if slope == slope:
        checked = run_end - run_start >= 600
        growing = checked and slope > a.flat
        verdict = (
            ("**not flat**" if growing else "flat") + f" (at most {a.flat:g} MiB/min)"
            if checked
            else "not judged: the mixed load ran under 10 minutes"
        )
        md.append(
            f"RSS trend over the second half of the mixed load: {slope:+.2f} MiB/min "
            f"(least squares over {len(half)} samples): {verdict}."
        )
    if run_rows:
        total_failed = sum(r["failed_ops"] for r in run_rows)
        rates = [r["ops_per_s"] for r in run_rows]
        md.append(
            f"Mixed load: {med(rates):,.0f} ops/s median over {len(run_rows)} intervals of "
            f"{a_status(run_rows)} s (min {min(rates):,.0f}, max {max(rates):,.0f}); "
            f"{total_failed:,} failed operations."
        )
    counters = flush_compaction_counts(mem)
    if counters:
        md.append(counters)

    md += ["", "## Over time", ""]
    md += summary_table(rows, rss, t0, run_start, run_end)
    md += ["", "## Where the memory is", ""]
    md += memory_breakdown(out, mem, a)
    try:
        plot(out, rss, rows, mem, t0, a, run_start, run_end)
        md += ["", "![RSS and p99 latency over time](soak.png)"]
    except ImportError:
        md += ["", "- No plot: matplotlib is not installed."]
    md += [
        "",
        "Files: `soak.csv` (per YCSB status interval: phase, seconds since the server "
        "started, RSS max and at the end of the interval, ops/s, p99 per operation in us, "
        "failed operations, memstore and block cache from /jmx, anonymous and file-backed "
        "RSS from the last smaps_rollup), `rss.csv` (every 1 s "
        "sample: VmRSS, VmHWM, threads), `mem.jsonl` (smaps_rollup and /jmx every 5 s), "
        "`logs/` (server, YCSB, final smaps, mimalloc's statistics at exit).",
    ]
    with open(f"{out}/soak.md", "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    return 1 if over or growing else 0


def loadavg_note(mem):
    """The 1-minute load average over the run (median and highest), if it was sampled."""
    xs = [m["loadavg"] for m in mem if "loadavg" in m]
    if not xs:
        return ""
    return f"; 1-minute load average during the run: median {med(xs):.1f}, highest {max(xs):.1f}"


def a_status(rows):
    return round(med([r["interval_s"] for r in rows]))


def flush_compaction_counts(mem):
    """A sentence with the flush, compaction and store file counters, if /jmx has them."""
    last = next((m for m in reversed(mem) if m.get("jmx", {}).get("Server")), None)
    if not last:
        return ""
    s = last["jmx"]["Server"]
    keys = [
        k for k in sorted(s) if re.search(r"(?i)flush|compact|storeFile|updates|globalMemStore", k)
    ]
    if not keys:
        return ""
    return "Region server counters at the end (/jmx): " + ", ".join(
        f"{k} {s[k]:,.0f}" for k in keys
    ) + "."


def summary_table(rows, rss, t0, run_start, run_end):
    """Windows of about a tenth of the mixed load (at least a minute), and the load phase."""
    span = run_end - run_start
    width = max(60.0, span / 10)
    windows = []
    load = [r for r in rows if r["phase"] == "load"]
    if load:
        windows.append(("load", 0.0, run_start))
    s = run_start
    while s < run_end - 1:
        e = min(run_end, s + width)
        windows.append((f"{s - run_start:.0f}-{e - run_start:.0f} s", s, e))
        s = e
    md = [
        "Mixed-load windows in seconds since the mixed load began. p99 in ms: median of the "
        "windows' per-interval p99s / worst interval.",
        "",
        "| window | RSS max MiB | RSS at end MiB | ops/s | read p99 ms | update p99 ms | "
        "scan p99 ms | failed | memstore max MiB | cache at end MiB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s, e in windows:
        rs = [r[1] / 1024 for r in rss if s < r[0] - t0 <= e]
        iv = [r for r in rows if s < r["t_s"] <= e + 0.5 and (name == "load") == (r["phase"] == "load")]
        if not rs:
            continue

        def p99(op):
            xs = [r[f"{op}_p99_us"] for r in iv if r[f"{op}_p99_us"] != ""]
            return f"{ms(med(xs))} / {ms(max(xs))}" if xs else "-"

        mems = [r["memstore_mib"] for r in iv if r["memstore_mib"] != ""]
        caches = [r["blockcache_mib"] for r in iv if r["blockcache_mib"] != ""]
        rates = [r["ops_per_s"] for r in iv]
        md.append(
            f"| {name} | {max(rs):.0f} | {rs[-1]:.0f} | "
            f"{(sum(rates) / len(rates)) if rates else 0:,.0f} | "
            f"{p99('insert') if name == 'load' else p99('read')} | {p99('update')} | "
            f"{p99('scan')} | {sum(r['failed_ops'] for r in iv)} | "
            f"{max(mems) if mems else '-'} | {caches[-1] if caches else '-'} |"
        )
    md.append("")
    md.append("(The load row's read column is YCSB's insert p99.)")
    return md


def memory_breakdown(out, mem, a):
    """The last sample before the stop: RSS split into what cairn accounts for and the rest."""
    last = next((m for m in reversed(mem) if m.get("smaps") and m.get("jmx")), None)
    if not last:
        return ["- No smaps_rollup/jmx sample."]
    sm = last["smaps"]
    msz, bc = mem_gauges(last)
    rss = sm.get("Rss", 0) * 1024
    anon = sm.get("Anonymous", 0) * 1024
    file_ = rss - anon
    msz = msz or 0
    bc = bc or 0
    rest = anon - msz - bc
    md = [
        "Last 5 s sample before the orderly stop (/proc/PID/smaps_rollup and /jmx):",
        "",
        "| part | MiB |",
        "|---|---:|",
        f"| RSS | {rss / MIB:.0f} |",
        f"| file-backed (binary, mapped files) | {file_ / MIB:.0f} |",
    ]
    wal = wal_mapped(out)
    if wal is not None:
        md.append(f"| of which WAL segments mapped (logs/smaps_largest.txt) | {wal / MIB:.0f} |")
    md += [
        f"| anonymous | {anon / MIB:.0f} |",
        f"| of which in transparent huge pages (AnonHugePages) | "
        f"{sm.get('AnonHugePages', 0) / 1024:.0f} |",
        f"| of which block cache (blockCacheSize) | {bc / MIB:.0f} |",
        f"| of which memstores (memStoreSize) | {msz / MIB:.0f} |",
        f"| anonymous beyond cache + memstores | {rest / MIB:.0f} |",
        "",
        f"The allowance for everything beyond the cache, the memstore limit and the WAL is "
        f"{a.baseline / MIB:.0f} MiB. The WAL writes through MAP_SHARED mappings of its "
        f"preallocated {a.wal / MIB:.0f} MiB segments (crates/cairn-wal/src/mapped.rs), the "
        "next segment prefaulted: those pages are page cache, reclaimable once written back, "
        "but they count in RSS. The server's allocator (mimalloc) gives memory it finds free "
        "back to the system after a second (its purge delay, crates/cairn-cli/src/main.rs; "
        "MIMALLOC_PURGE_DELAY and MIMALLOC_LARGE_OS_PAGES in the server's environment "
        "override cairn's settings). mimalloc's own statistics at exit are at the "
        "end of logs/server.log; the largest mappings just before the stop are in "
        "logs/smaps_largest.txt.",
    ]
    return md


def wal_mapped(out):
    """RSS bytes of the mapped WAL segments in logs/smaps_largest.txt, or None."""
    try:
        with open(f"{out}/logs/smaps_largest.txt") as f:
            return sum(int(line.split()[0]) * 1024 for line in f if "/WALs/" in line)
    except (OSError, ValueError):
        return None


def plot(out, rss, rows, mem, t0, a, run_start, run_end):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2, ax3) = plt.subplots(
        3, 1, figsize=(8, 7.5), sharex=True, gridspec_kw={"height_ratios": [3, 2, 1.2]}
    )
    ts = [(r[0] - t0) / 60 for r in rss]
    ax1.plot(ts, [r[1] / 1024 for r in rss], label="RSS (1 s samples)", lw=1)
    m_t = [(m["t"] - t0) / 60 for m in mem if m.get("jmx")]
    gauges = [mem_gauges(m) for m in mem if m.get("jmx")]
    if gauges:
        ax1.plot(m_t, [((g[0] or 0) + (g[1] or 0)) / MIB for g in gauges],
                 label="memstores + block cache (/jmx)", lw=1)
        ax1.plot(m_t, [(g[0] or 0) / MIB for g in gauges], label="memstores", lw=0.8, ls=":")
    split = [(m["t"], smaps_split(m)) for m in mem if m.get("smaps")]
    if split:
        ax1.plot([(t - t0) / 60 for t, _ in split], [v[0] / MIB for _, v in split],
                 label="anonymous (smaps_rollup)", lw=0.8)
        ax1.plot([(t - t0) / 60 for t, _ in split], [v[1] / MIB for _, v in split],
                 label="file-backed (smaps_rollup)", lw=0.8)
    ax1.axhline(a.bound / MIB, color="red", ls="--", lw=1,
                label=f"bound {a.bound / MIB:.0f} MiB (cache + memstore limit + "
                      f"2 WAL segments + {a.baseline / MIB:.0f} MiB)")
    ax1.axhline((a.cache + a.global_memstore) / MIB, color="grey", ls=":",
                lw=0.8, label="cache + global memstore limit")
    ax1.set_ylabel("MiB")
    # Head room above the curves for the legend.
    top = max([r[1] / 1024 for r in rss] + [a.bound / MIB])
    ax1.set_ylim(0, top * 1.55)
    ax1.legend(fontsize=7, loc="upper left", ncol=2)
    ax1.grid(alpha=0.3)
    ax1.set_title(f"cairn serve soak ({a.label}): memory", fontsize=10)

    for op in ("read", "update", "scan", "insert"):
        pts = [(r["t_s"] / 60, r[f"{op}_p99_us"] / 1000) for r in rows if r[f"{op}_p99_us"] != ""]
        if pts:
            ax2.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", ms=3, lw=0.8,
                     label=f"{op} p99")
    ax2.set_yscale("log")
    ax2.set_ylabel("p99 per interval, ms")
    ax2.legend(fontsize=7, loc="upper right")
    ax2.grid(alpha=0.3, which="both")

    ax3.plot([r["t_s"] / 60 for r in rows], [r["ops_per_s"] for r in rows], lw=0.8)
    ax3.set_ylabel("ops/s")
    ax3.set_ylim(bottom=0)
    ax3.grid(alpha=0.3)
    ax3.set_xlabel("minutes since the server started")
    for ax in (ax1, ax2, ax3):
        ax.axvline(run_start / 60, color="grey", lw=0.6)
        ax.axvline(run_end / 60, color="grey", lw=0.6)
    fig.tight_layout()
    fig.savefig(f"{out}/soak.png", dpi=90)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--pid", type=int, required=True)
    s.add_argument("--http", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--soak-secs", type=int, required=True)
    s.add_argument("--status-secs", type=int, default=10)
    s.add_argument("--bound", type=int, required=True)
    r = sub.add_parser("report")
    r.add_argument("--out", required=True)
    r.add_argument("--label", required=True)
    for n in ("bound", "cache", "flush", "multiplier", "regions", "baseline", "wal",
              "global-memstore", "handlers", "compaction-threshold", "records", "threads",
              "target", "soak-secs"):
        r.add_argument(f"--{n}", type=int, required=True)
    r.add_argument("--flat", type=float, required=True, help="MiB/min of growth allowed")
    r.add_argument("--mix", required=True)
    r.add_argument("--distribution", required=True)
    r.add_argument("--notes", default="", help="other settings, for the report")
    a = p.parse_args()
    if a.cmd == "sample":
        sample(a)
        return 0
    return report(a)


if __name__ == "__main__":
    sys.exit(main())
