#!/usr/bin/env python3
"""bench/pe-vs-hbase.sh's helper: plans each PerformanceEvaluation run, turns PE's (and YCSB's)
logs into one JSON record per run, and writes the report.

  plan  --results F --server S --label L [--seed L2,...] --kind read|write|load --threads T
        --seconds X --rows N --guess G
        prints "ROWS_PER_THREAD CYCLES SAMPLE_RATE" for a PE run of about X seconds (load: N
        rows in all)
  pe    --results F --log LOG --samples S.json --server S --round R --label L --command C
        --threads T --rows N --cycles C --multiget M [--warmup] [--scan-range K --loaded N]
        parses one PE log (and bench/pe/sample.py's CPU samples of the run), appends its
        record to F, prints one progress line
  ycsb  --results F --log LOG --samples S.json --server S --round R --workload W
        --phase load|run --threads T
        the same for one YCSB run
  report --results F --meta META --out DIR
        DIR/results.json, DIR/report.md (also printed) and DIR/pe-threads.png

How PE is driven (see PerformanceEvaluation in hbase-mapreduce 2.6.1's test jar): `--rows` is per
client thread and random keys are drawn from [0, rows x threads), so rows per thread is the
loaded row count divided by the threads (every run reads the whole table); the run length is then
set with `--cycles` (each thread walks its rows that many times) or, for short runs, with
`--sampleRate` (each thread sends only every N-th of its rows: PE logs N as "Sampling 1 every N").
The operations a thread sent are therefore cycles x #{i in [offset, offset+rows) : i % N == 0},
counted here from PE's own log lines rather than trusted from the plan.

CPU per row: the server's CPU time (and the client's) inside the timed window, from the first
thread's "Timed test starting" to the last thread's "Finished" (PE's log timestamps),
interpolated between bench/pe/sample.py's samples; the whole run's is kept as well.
"""
import argparse
import datetime
import json
import math
import os
import re
import statistics
import time
from bisect import bisect_left
from collections import defaultdict

SERVERS = ["cairn", "hbase"]
NAMES = {"cairn": "cairn serve", "hbase": "HBase 2.6.1"}
LABEL_ORDER = ["load", "randomRead", "multiGet100", "scanRange10000", "sequentialWrite"]
YCSB_ORDER = ["a", "b", "c", "d", "e", "f"]


def load_records(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def append_record(path, rec):
    with open(path, "a") as f:
        f.write(json.dumps(rec, sort_keys=True) + "\n")


# ---------------------------------------------------------------------------------------------
# plan


def scaled(rate, from_threads, to_threads):
    """A rate measured at from_threads, guessed for to_threads: linear down, at most 1.5x up
    (2 cores: throughput flattens quickly)."""
    return rate * min(to_threads / from_threads, 1.5)


def estimate(records, server, labels, threads):
    """Rows (or scans) per second expected for a run, from earlier runs on the same server."""
    for label in labels:
        same = [r["rate"] for r in records
                if r.get("ok") and r["server"] == server and r.get("label") == label
                and r["threads"] == threads]
        if same:
            return statistics.median(same)
        others = [r for r in records
                  if r.get("ok") and r["server"] == server and r.get("label") == label]
        if others:
            nearest = min(others, key=lambda r: (abs(math.log(r["threads"] / threads)),
                                                 -r["round"]))
            return scaled(nearest["rate"], nearest["threads"], threads)
    return None


def cmd_plan(a):
    records = load_records(a.results)
    labels = [a.label] + (a.seed.split(",") if a.seed else [])
    rate = estimate(records, a.server, labels, a.threads) or a.guess
    per_thread = max(1.0, a.seconds * rate / a.threads)  # operations each thread should send
    if a.kind == "write":
        print(int(per_thread), 1, 1.0)
        return
    rows = max(1, a.rows // a.threads)
    if a.kind == "load":
        print(rows, 1, 1.0)
        return
    if per_thread >= rows:
        print(rows, max(1, round(per_thread / rows)), 1.0)
        return
    every = max(1, round(rows / per_thread))
    # PE computes (int)(1 / sampleRate) in float arithmetic: aim between two integers.
    print(rows, 1, 1.0 if every == 1 else 1.0 / (every + 0.5))


# ---------------------------------------------------------------------------------------------
# PE log parsing

LINE = re.compile(r"^(\S+ \S+) \S+\s+\[(TestClient-\d+)\] PerformanceEvaluation: (.*)$")
TIMED = re.compile(r"^Timed test starting in thread")
START = re.compile(r"Start class \S+ at offset (\d+) for (\d+) rows")
SAMPLING = re.compile(r"Sampling 1 every (\d+) out of (\d+) total rows")
LATENCY = re.compile(r"^Latency \(us\) : (.*)$")
MEASURES = re.compile(r"^Num measures \(latency\) : (\d+)")
FINISHED = re.compile(r"^Finished (TestClient-\d+) in (\d+)ms over (\d+) rows")


def log_time(stamp):
    """A log4j ISO8601 stamp (local time, as the JVM logs it) -> Unix time."""
    dt = datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f")
    return time.mktime(dt.timetuple()) + dt.microsecond / 1e6


def parse_pe_log(text):
    """Per client thread: offset, rows, sampling step, duration, latency percentiles, and when
    its timed test started and finished."""
    threads = defaultdict(dict)
    for line in text.splitlines():
        m = LINE.search(line)
        if not m:
            continue
        t, msg = m.group(2), m.group(3)
        d = threads[t]
        if TIMED.match(msg):
            d["t_start"] = log_time(m.group(1))
        elif (s := START.search(msg)):
            d["offset"], d["rows"] = int(s.group(1)), int(s.group(2))
        elif (s := SAMPLING.search(msg)):
            d["every"] = int(s.group(1))
        elif (s := LATENCY.match(msg)):
            stats = {}
            for part in s.group(1).split(","):
                k, _, v = part.strip().partition("=")
                stats[k] = float(v)
            d["latency"] = stats
        elif (s := MEASURES.match(msg)):
            d["measures"] = int(s.group(1))
        elif (s := FINISHED.match(msg)):
            d["ms"] = int(s.group(2))
            d["t_end"] = log_time(m.group(1))
    return dict(threads)


def sent(offset, rows, every):
    """How many i in [offset, offset + rows) PE tests: those with i % every == 0."""
    return (offset + rows - 1) // every - (offset - 1) // every


def expected_scan_rows(key_range, loaded, width):
    """Mean rows a scan of [start, start + width) meets, start uniform in [0, key_range), when
    rows 0..loaded-1 exist."""
    total = 0
    for start in range(key_range):
        total += max(0, min(width, loaded - start))
    return total / key_range


def read_samples(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def at(samples, col, t):
    """Column col (1: server ticks, 2: client ticks) interpolated at Unix time t."""
    pts = [(s[0], s[col]) for s in samples if s[col] is not None]
    if not pts:
        return None
    times = [p[0] for p in pts]
    i = bisect_left(times, t)
    if i == 0:
        return pts[0][1]
    if i >= len(pts):
        return pts[-1][1]
    (t0, v0), (t1, v1) = pts[i - 1], pts[i]
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0) if t1 > t0 else v1


def cpu_fields(samples, window=None):
    """The client's and the server's CPU seconds over the whole run and inside window."""
    if not samples:
        return {}
    hz, ss = samples["clk_tck"], samples["samples"]
    out = {"client_user_s": samples["client_user_s"], "client_sys_s": samples["client_sys_s"],
           "client_wall_s": samples["wall_s"]}
    first, last = at(ss, 1, ss[0][0]), at(ss, 1, ss[-1][0])
    if first is not None and last is not None:
        out["server_cpu_s"] = (last - first) / hz
    if window:
        s0, s1 = at(ss, 1, window[0]), at(ss, 1, window[1])
        c0, c1 = at(ss, 2, window[0]), at(ss, 2, window[1])
        if s0 is not None and s1 is not None:
            out["server_cpu_timed_s"] = (s1 - s0) / hz
        if c0 is not None and c1 is not None:
            out["client_cpu_timed_s"] = (c1 - c0) / hz
    return out


def cmd_pe(a):
    with open(a.log, errors="replace") as f:
        text = f.read()
    threads = parse_pe_log(text)
    rec = {
        "kind": "pe", "server": a.server, "round": a.round, "label": a.label,
        "command": a.command, "threads": a.threads, "warmup": a.warmup,
        "rows_per_thread": a.rows, "cycles": a.cycles, "multiget": a.multiget,
        "log": os.path.basename(a.log), "unit": "scans" if a.scan_range else "rows",
    }
    samples = read_samples(a.samples)
    rec.update(cpu_fields(samples))
    done = [d for d in threads.values() if "ms" in d and "latency" in d and "rows" in d]
    if len(done) != a.threads:
        rec["ok"] = False
        err = [line for line in text.splitlines() if "Exception" in line or "ERROR" in line]
        rec["error"] = (err[0] if err else "%d of %d threads finished" %
                        (len(done), a.threads))[:300]
        append_record(a.results, rec)
        print("%-6s r%d %-16s t=%-3d FAILED: %s (log %s)"
              % (a.server, a.round, a.label, a.threads, rec["error"], a.log))
        return
    ops = sum(a.cycles * sent(d["offset"], d["rows"], d.get("every", 1)) for d in done)
    wall = max(d["ms"] for d in done) / 1000.0
    starts = [d["t_start"] for d in done if "t_start" in d]
    ends = [d["t_end"] for d in done if "t_end" in d]
    if starts and ends:
        rec["timed_window_s"] = max(ends) - min(starts)
        rec.update(cpu_fields(samples, (min(starts), max(ends))))
    key_range = a.rows * a.threads
    rec.update({
        "ok": True, "ops": ops, "wall_s": wall, "every": done[0].get("every", 1),
        "key_range": key_range,
        "batches": sum(d.get("measures", 0) for d in done),
        "p50_us": statistics.median(d["latency"]["50th"] for d in done),
        "p99_us": max(d["latency"]["99th"] for d in done),
        "p999_us": max(d["latency"]["99.9th"] for d in done),
        "mean_us": statistics.mean(d["latency"]["mean"] for d in done),
    })
    if a.scan_range:
        rec["rows_per_scan"] = expected_scan_rows(key_range, a.loaded, a.scan_range)
    rec["rate"] = ops / wall if wall > 0 else 0.0
    # CPU inside the timed window; the whole run's when the window is unknown
    scpu = rec.get("server_cpu_timed_s", rec.get("server_cpu_s"))
    ccpu = rec.get("client_cpu_timed_s")
    rec["server_cpu_us_per_op"] = scpu * 1e6 / ops if ops and scpu is not None else None
    rec["client_cpu_us_per_op"] = ccpu * 1e6 / ops if ops and ccpu is not None else None
    append_record(a.results, rec)
    print("%-6s r%d %-16s t=%-3d %9d %s in %6.2f s = %10.0f %s/s  p50 %8.0f us  p99 %8.0f us"
          "  CPU in the timed window: server %6.2f s (%7.1f us/%s), client %6.2f s"
          % (a.server, a.round, a.label + (" (warm-up)" if a.warmup else ""), a.threads, ops,
             rec["unit"], wall, rec["rate"], rec["unit"], rec["p50_us"], rec["p99_us"],
             scpu or 0, rec["server_cpu_us_per_op"] or 0, rec["unit"][:-1], ccpu or 0))


# ---------------------------------------------------------------------------------------------
# YCSB

YCSB_LINE = re.compile(r"^\[([A-Z\-_]+)\], ([^,]+), (.+)$")


def cmd_ycsb(a):
    with open(a.log, errors="replace") as f:
        text = f.read()
    sections = defaultdict(dict)
    for line in text.splitlines():
        m = YCSB_LINE.match(line.strip())
        if m:
            try:
                sections[m.group(1)][m.group(2).strip()] = float(m.group(3))
            except ValueError:
                pass
    rec = {
        "kind": "ycsb", "server": a.server, "round": a.round, "workload": a.workload,
        "phase": a.phase, "threads": a.threads, "log": os.path.basename(a.log),
    }
    rec.update(cpu_fields(read_samples(a.samples)))
    overall = sections.get("OVERALL", {})
    if "Throughput(ops/sec)" not in overall:
        rec["ok"] = False
        err = [line for line in text.splitlines() if "Exception" in line or "rror" in line]
        rec["error"] = (err[0] if err else "no [OVERALL] lines")[:300]
        append_record(a.results, rec)
        print("%-6s r%d ycsb %s %-4s FAILED: %s (log %s)"
              % (a.server, a.round, a.workload, a.phase, rec["error"], a.log))
        return
    ops_by = {}
    for name, s in sections.items():
        if name in ("OVERALL", "TOTAL_GCS", "TOTAL_GC_TIME", "CLEANUP") or name.startswith("TOTAL_GC"):
            continue
        if "Operations" in s:
            failed = sum(v for k, v in s.items() if k.startswith("Return=") and k != "Return=OK")
            ops_by[name] = {
                "ops": int(s["Operations"]), "avg_us": s.get("AverageLatency(us)"),
                "p99_us": s.get("99thPercentileLatency(us)"), "not_ok": int(failed),
            }
    # YCSB counts a read-modify-write also as its read and its update: take the total from
    # the overall throughput and run time
    wall = overall.get("RunTime(ms)", 0) / 1000.0
    ops = round(overall["Throughput(ops/sec)"] * wall)
    rec.update({
        "ok": True, "rate": overall["Throughput(ops/sec)"],
        "wall_s": wall, "ops": ops, "per_op": ops_by,
        "server_cpu_us_per_op": rec["server_cpu_s"] * 1e6 / ops
        if ops and rec.get("server_cpu_s") is not None else None,
    })
    append_record(a.results, rec)
    lat = "  ".join("%s %d ops avg %.0f us p99 %.0f us%s"
                    % (k, v["ops"], v["avg_us"] or 0, v["p99_us"] or 0,
                       " (%d not OK)" % v["not_ok"] if v["not_ok"] else "")
                    for k, v in sorted(ops_by.items()))
    print("%-6s r%d ycsb %s %-4s t=%-3d %10.0f ops/s  server CPU %6.2f s (%6.1f us/op)  %s"
          % (a.server, a.round, a.workload, a.phase, a.threads, rec["rate"],
             rec.get("server_cpu_s") or 0, rec["server_cpu_us_per_op"] or 0, lat))


# ---------------------------------------------------------------------------------------------
# report


def fmt_rate(x):
    if x is None:
        return "—"
    if x >= 100:
        return "{:,.0f}".format(x)
    return "{:.1f}".format(x)


def fmt_ratio(a, b):
    if a is None or b is None or b == 0:
        return "—"
    return "%.2fx" % (a / b)


def fmt_us(x):
    if x is None:
        return "—"
    return "{:,.0f}".format(x) if x >= 10 else "%.1f" % x


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def best(xs, lowest=False):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return min(xs) if lowest else max(xs)


def pe_table(records):
    runs = [r for r in records if r["kind"] == "pe" and not r.get("warmup")]
    groups = defaultdict(lambda: defaultdict(list))
    failed = defaultdict(int)
    for r in runs:
        g = groups[(r["label"], r["threads"])]
        if r.get("ok"):
            g[r["server"]].append(r)
        else:
            g.setdefault(r["server"], [])
            failed[(r["label"], r["threads"], r["server"])] += 1
    keys = sorted(groups, key=lambda k: (LABEL_ORDER.index(k[0]) if k[0] in LABEL_ORDER
                                         else 99, k[0], k[1]))
    out = [
        "| command | threads | cairn rows/s best / median | HBase rows/s best / median "
        "| cairn/HBase best / median | p99 µs cairn / HBase | server CPU µs/row cairn / HBase "
        "| HBase/cairn CPU per row | client CPU µs/row cairn / HBase | rounds |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    summary = []
    for key in keys:
        label, threads = key
        g = groups[key]
        c, h = g.get("cairn", []), g.get("hbase", [])
        unit = next((r.get("unit", "rows") for r in runs if r["label"] == label), "rows")
        cb, cm = best([r["rate"] for r in c]), med([r["rate"] for r in c])
        hb, hm = best([r["rate"] for r in h]), med([r["rate"] for r in h])
        cp, hp = med([r["p99_us"] for r in c]), med([r["p99_us"] for r in h])
        ccpu = med([r["server_cpu_us_per_op"] for r in c])
        hcpu = med([r["server_cpu_us_per_op"] for r in h])
        ccl = med([r.get("client_cpu_us_per_op") for r in c])
        hcl = med([r.get("client_cpu_us_per_op") for r in h])
        name = label if unit == "rows" else "%s (scans/s, µs/scan)" % label
        notes = ["%s %d failed" % (s, failed[(label, threads, s)]) for s in SERVERS
                 if failed.get((label, threads, s))]
        out.append("| %s | %d | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s | %s | %s / %s | %d / %d%s |"
                   % (name, threads, fmt_rate(cb), fmt_rate(cm), fmt_rate(hb), fmt_rate(hm),
                      fmt_ratio(cb, hb), fmt_ratio(cm, hm), fmt_us(cp), fmt_us(hp),
                      fmt_us(ccpu), fmt_us(hcpu), fmt_ratio(hcpu, ccpu),
                      fmt_us(ccl), fmt_us(hcl), len(c), len(h),
                      "; " + ", ".join(notes) if notes else ""))
        summary.append({
            "label": label, "threads": threads, "unit": unit,
            "cairn": {"best": cb, "median": cm, "p99_us_median": cp,
                      "server_cpu_us_per_op_median": ccpu, "client_cpu_us_per_op_median": ccl,
                      "runs": len(c)},
            "hbase": {"best": hb, "median": hm, "p99_us_median": hp,
                      "server_cpu_us_per_op_median": hcpu, "client_cpu_us_per_op_median": hcl,
                      "runs": len(h)},
            "ratio_best": cb / hb if cb and hb else None,
            "ratio_median": cm / hm if cm and hm else None,
            "cpu_ratio_hbase_over_cairn": hcpu / ccpu if hcpu and ccpu else None,
            "rows_per_scan": next((r["rows_per_scan"] for r in c + h if "rows_per_scan" in r),
                                  None),
        })
    return out, summary


def ycsb_table(records):
    runs = [r for r in records if r["kind"] == "ycsb"]
    if not runs:
        return [], []
    groups = defaultdict(lambda: defaultdict(list))
    for r in runs:
        if r.get("ok"):
            groups[(r["workload"], r["phase"])][r["server"]].append(r)
    out = [
        "| workload | phase | cairn ops/s best / median | HBase ops/s best / median "
        "| cairn/HBase best / median | per operation: avg / p99 µs, cairn vs HBase (medians) "
        "| server CPU µs/op cairn / HBase |",
        "|---|---|---|---|---|---|---|",
    ]
    summary = []
    order = {w: i for i, w in enumerate(YCSB_ORDER)}
    for key in sorted(groups, key=lambda k: (k[1] != "load", order.get(k[0], 99))):
        g = groups[key]
        c, h = g.get("cairn", []), g.get("hbase", [])
        cb, cm = best([r["rate"] for r in c]), med([r["rate"] for r in c])
        hb, hm = best([r["rate"] for r in h]), med([r["rate"] for r in h])
        ops = sorted({k for r in c + h for k in r["per_op"] if not k.endswith("-FAILED")})
        per = []
        for op in ops:
            def pick(rs, field):
                return med([r["per_op"][op][field] for r in rs if op in r["per_op"]])
            per.append("%s %s / %s vs %s / %s" % (
                op, fmt_us(pick(c, "avg_us")), fmt_us(pick(c, "p99_us")),
                fmt_us(pick(h, "avg_us")), fmt_us(pick(h, "p99_us"))))
        ccpu = med([r["server_cpu_us_per_op"] for r in c])
        hcpu = med([r["server_cpu_us_per_op"] for r in h])
        out.append("| %s | %s | %s / %s | %s / %s | %s / %s | %s | %s / %s |"
                   % (key[0].upper(), key[1], fmt_rate(cb), fmt_rate(cm), fmt_rate(hb),
                      fmt_rate(hm), fmt_ratio(cb, hb), fmt_ratio(cm, hm), "; ".join(per),
                      fmt_us(ccpu), fmt_us(hcpu)))
        summary.append({"workload": key[0], "phase": key[1],
                        "cairn": {"best": cb, "median": cm, "server_cpu_us_per_op_median": ccpu},
                        "hbase": {"best": hb, "median": hm, "server_cpu_us_per_op_median": hcpu}})
    return out, summary


def plot(records, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib missing: no plot"
    runs = [r for r in records if r["kind"] == "pe" and r.get("ok") and not r.get("warmup")]
    labels = [("randomRead", "randomRead (single gets)"),
              ("multiGet100", "randomRead --multiGet=100")]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    colors = {"cairn": "tab:blue", "hbase": "tab:orange"}
    for ax, (label, title) in zip(axes, labels):
        for server in SERVERS:
            by = defaultdict(list)
            for r in runs:
                if r["label"] == label and r["server"] == server:
                    by[r["threads"]].append(r["rate"])
            if not by:
                continue
            xs = sorted(by)
            ys = [statistics.median(by[x]) for x in xs]
            lo = [ys[i] - min(by[x]) for i, x in enumerate(xs)]
            hi = [max(by[x]) - ys[i] for i, x in enumerate(xs)]
            ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, color=colors[server],
                        label=NAMES[server] + " (median, min–max over rounds)")
        ax.set_xscale("log")
        ax.set_xticks([1, 2, 5, 10, 25, 50, 75])
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel("PE client threads")
        ax.set_ylabel("rows/s")
        ax.set_ylim(bottom=0)
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("HBase PerformanceEvaluation against cairn serve and HBase 2.6.1 standalone")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return None


def cmd_report(a):
    records = load_records(a.results)
    with open(a.meta) as f:
        meta = json.load(f)
    pe_lines, pe_summary = pe_table(records)
    y_lines, y_summary = ycsb_table(records)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"meta": meta, "summary": pe_summary, "ycsb_summary": y_summary,
                   "runs": records}, f, indent=1, sort_keys=True)
    err = plot(records, os.path.join(a.out, "pe-threads.png"))
    m = meta
    md = ["# HBase PerformanceEvaluation: cairn serve vs HBase 2.6.1 standalone", ""]
    if m.get("smoke"):
        md += ["**Smoke run** (tiny sizes, to check the script works): not a measurement.", ""]
    md += [
        "Settings: ROWS=%s ROUNDS=%s THREADS=\"%s\" SCAN_THREADS=\"%s\" WRITE_THREADS=\"%s\" "
        "RUN_SECONDS=%s WARMUP_SECONDS=%s CACHE_MB=%s (git %s)."
        % (m.get("rows"), m.get("rounds"), m.get("threads"), m.get("scan_threads"),
           m.get("write_threads"), m.get("run_seconds"), m.get("warmup_seconds"),
           (m.get("cache_bytes") or 0) // 1048576, m.get("git_commit")),
        "",
        "%s; %s rounds; %s rows x %s B loaded by PE sequentialWrite (--presplit=4, %s clients), "
        "flushed, read once in full (block cache warm) before the timed runs; about %s s per run."
        % (m.get("date"), m.get("rounds"), m.get("loaded_rows"), m.get("value_size"),
           m.get("load_clients"), m.get("run_seconds")),
        "",
        "- Machine: %s, %s CPUs (load average %s before the run, %s after; the run took %s s); "
        "servers one at a time (each round: one server started, loaded, every command run, "
        "stopped; then the other; the order alternates between rounds)."
        % (m.get("cpu_model"), m.get("nproc"), m.get("loadavg_start"), m.get("loadavg_end"),
           m.get("elapsed_s")),
        "- cairn: `%s` (%s), block cache `hfile.block.cache.size=%s` bytes."
        % (m.get("cairn_bin"), m.get("cairn_version"), m.get("cache_bytes")),
        "- HBase 2.6.1 standalone (master, region server and ZooKeeper in one JVM, local "
        "filesystem): heap %s MiB, `hfile.block.cache.size=%s` of it = %s bytes (HBase logged: %s)."
        % (m.get("hbase_heap_mb"), m.get("hbase_cache_fraction"), m.get("cache_bytes"),
           m.get("hbase_cache_logged") or "—"),
        "- Client: HBase 2.6.1's PerformanceEvaluation (`--nomapred`), one JVM per run (%s), "
        "reaching either server through the RPC connection registry "
        "(`hbase.client.bootstrap.servers`; HBase: its master's port)." % m.get("client_jvm"),
        "- rows/s = rows the threads sent / the slowest thread's time (PE's own per-thread "
        "duration, no JVM start-up); multiGet counts rows, not batches. p99 = the largest of "
        "the threads' 99th percentiles (PE's per-thread \"Latency (us)\" line; per request, so "
        "per 100-row batch for multiGet; PE keeps a uniform sample of up to 512 K latencies per "
        "thread), median over "
        "rounds; for reads and scans the first 5% of each thread's rows (per cycle) are not "
        "measured "
        "(--measureAfter: the client JVM's warm-up). CPU = user + system time of the server "
        "process and of the PE JVM (/proc/PID/stat, sampled every 50 ms) inside the timed "
        "window (first thread's start to last thread's finish, PE's log stamps), median over "
        "rounds: JVM start-up, connection set-up and region lookups are left out.",
        "- Each random read draws keys from the whole loaded table (rows per thread = rows / "
        "threads; PE's --cycles or --sampleRate set the length).",
        "- The PE client JVM shares the machine's CPUs with the server: where its CPU per row "
        "is well above the server's, the client sets rows/s, and server CPU per row is the "
        "fairer comparison.",
    ]
    scans = [s for s in pe_summary if s["unit"] == "scans"]
    if scans:
        md.append("- scanRange10000 --filterAll: each scan reads up to 10,000 rows on the server "
                  "and returns none (about %.0f rows each here); its columns are scans/s and "
                  "server CPU µs per scan." % (scans[0]["rows_per_scan"] or 0))
    md += ["", "## PE", ""] + pe_lines
    if y_lines:
        md += ["", "## YCSB 0.17.0 (binding %s, %s threads)"
               % (m.get("ycsb_binding"), m.get("ycsb_threads")), ""] + y_lines
    elif m.get("ycsb_note"):
        md += ["", "YCSB: " + m["ycsb_note"]]
    md += ["", "![throughput against client threads](pe-threads.png)" if not err else err, ""]
    text = "\n".join(md)
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write(text)
    print(text)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    q = sub.add_parser("plan")
    q.add_argument("--results", required=True)
    q.add_argument("--server", required=True)
    q.add_argument("--label", required=True)
    q.add_argument("--seed", default="", help="labels to estimate from when LABEL has no runs")
    q.add_argument("--kind", choices=["read", "write", "load"], required=True)
    q.add_argument("--threads", type=int, required=True)
    q.add_argument("--seconds", type=float, required=True)
    q.add_argument("--rows", type=int, required=True)
    q.add_argument("--guess", type=float, required=True)

    def common(q):
        q.add_argument("--results", required=True)
        q.add_argument("--log", required=True)
        q.add_argument("--server", required=True)
        q.add_argument("--round", type=int, required=True)
        q.add_argument("--threads", type=int, required=True)
        q.add_argument("--samples", required=True)

    q = sub.add_parser("pe")
    common(q)
    q.add_argument("--label", required=True)
    q.add_argument("--command", required=True)
    q.add_argument("--rows", type=int, required=True)
    q.add_argument("--cycles", type=int, default=1)
    q.add_argument("--multiget", type=int, default=0)
    q.add_argument("--warmup", action="store_true")
    q.add_argument("--scan-range", type=int, default=0)
    q.add_argument("--loaded", type=int, default=0)

    q = sub.add_parser("ycsb")
    common(q)
    q.add_argument("--workload", required=True)
    q.add_argument("--phase", choices=["load", "run"], required=True)

    q = sub.add_parser("report")
    q.add_argument("--results", required=True)
    q.add_argument("--meta", required=True)
    q.add_argument("--out", required=True)

    a = p.parse_args()
    {"plan": cmd_plan, "pe": cmd_pe, "ycsb": cmd_ycsb, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    main()
