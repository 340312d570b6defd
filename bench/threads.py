"""Table and plot of bench/threads.sh: multi-get rows/s against client threads.

usage: threads.py RUNS_JSONL OUT_DIR LABEL ROUNDS ROWS VALUE_SIZE BATCH
Writes OUT_DIR/threads.md and, if matplotlib imports, OUT_DIR/threads.png (the style of
bench/report.py's throughput plot: solid median, dotted best of the rounds).
"""

import json
import platform
import sys


def med(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def main():
    runs_path, out, label, rounds, rows, value_size, batch = sys.argv[1:8]
    by_threads = {}
    with open(runs_path) as f:
        for line in f:
            d = json.loads(line)
            by_threads.setdefault(d["clients"], []).append(d)
    threads = sorted(by_threads)
    rates = {t: [d["rows_per_s"] for d in by_threads[t]] for t in threads}
    medians = {t: med(v) for t, v in rates.items()}
    best_t = max(threads, key=lambda t: medians[t])
    md = [
        f"# Multi-get rows/s against client threads ({label})",
        "",
        f"`cairn pe --multiGet={batch} --warmCache --blockCacheSize=2GiB randomRead N`, "
        f"{rows} rows x {value_size} B (one major-compacted file, every block cached), "
        f"{rows} rows read per run in all ({rows}/N per client); {rounds} rounds, thread "
        f"counts in alternating order. Machine: {platform.machine()}, "
        f"{_cpus()} CPUs, {platform.system()} {platform.release()}. "
        "CPU: the process's user and system time during the timed part (medians of the rounds).",
        "",
        "| threads | rows/s best | rows/s median | % of best median "
        f"({best_t} threads) | user CPU s | system CPU s | CPU us / row |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in threads:
        rs = by_threads[t]
        user = med([d["cpu"]["user_s"] for d in rs])
        sys_ = med([d["cpu"]["sys_s"] for d in rs])
        cpu_per_row = med(
            [(d["cpu"]["user_s"] + d["cpu"]["sys_s"]) * 1e6 / max(d["ops"], 1) for d in rs]
        )
        md.append(
            f"| {t} | {max(rates[t]):,.0f} | {medians[t]:,.0f} | "
            f"{100 * medians[t] / medians[best_t]:.1f}% | {user:.3f} | {sys_:.3f} | "
            f"{cpu_per_row:.2f} |"
        )
    md.append("")
    md.append("Every run: " + ", ".join(
        f"{t}: " + " / ".join(f"{x / 1e3:.0f}K" for x in rates[t]) for t in threads
    ) + " rows/s.")
    try:
        plot(threads, rates, out, label, batch)
        md += ["", "![rows/s against client threads](threads.png)"]
    except ImportError:
        md += ["", "- No plot: matplotlib is not installed."]
    with open(f"{out}/threads.md", "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


def _cpus():
    import os

    return os.cpu_count()


def plot(threads, rates, out, label, batch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 1, figsize=(5.6, 3.6))
    line, = ax.plot(threads, [med(rates[t]) for t in threads], marker="o", label="cairn")
    ax.plot(threads, [max(rates[t]) for t in threads], linestyle=":", color=line.get_color())
    ax.set_title(f"multi-get ({batch} rows), {label}")
    ax.set_xlabel("client threads")
    ax.set_xticks(threads)
    ax.set_ylabel("rows/s")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle("throughput (solid: median, dotted: best of the rounds)", fontsize=10)
    fig.tight_layout()
    fig.savefig(f"{out}/threads.png", dpi=90)
    plt.close(fig)


if __name__ == "__main__":
    main()
