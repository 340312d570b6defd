"""happybase workloads against any HBase Thrift1 server (cairn serve or HBase's own gateway).

  python3 happybase_bench.py --port 9090 load|read|conc [--rows N] [--value-size B]
      [--seconds S] [--connections C] [--json FILE]
  python3 happybase_bench.py compare CAIRN.json HBASE.json

`load` (re)creates the table (one family, block cache on) and writes --rows rows in batches;
`read` warms the cache with a full scan, then runs single gets, 100-row multi-gets and full
scans (1000 rows per round trip) for --seconds each; `conc` runs single gets from
--connections client processes at once. Keys are random over the loaded rows. Every result is
rows per second; with --pids, load and read also report rows per second of the server
processes' CPU time (user + system), which the client's own speed does not cap.
"""

import argparse
import json
import multiprocessing
import os
import random
import sys
import time

import happybase

TABLE = "bench_thrift"


def key(i):
    return b"user%010d" % i


def connect(a):
    return happybase.Connection(a.host, a.port, timeout=120000)


def load(a):
    c = connect(a)
    if TABLE.encode() in c.tables():
        c.delete_table(TABLE, disable=True)
    c.create_table(TABLE, {"f": dict(max_versions=1, block_cache_enabled=True)})
    t = c.table(TABLE)
    value = os.urandom(a.value_size)
    start, cpu0 = time.perf_counter(), server_cpu()
    with t.batch(batch_size=500) as b:
        for i in range(a.rows):
            b.put(key(i), {b"f:q": value})
    took = time.perf_counter() - start
    out = {"load": a.rows / took}
    if PIDS:
        out["load_per_server_cpu_s"] = a.rows / max(server_cpu() - cpu0, 1e-9)
    return out


PIDS = []


def server_cpu():
    """CPU seconds (user + system) the server processes (--pids) have used so far."""
    total = 0.0
    for pid in PIDS:
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        total += (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    return total


def timed(seconds, op, out=None, name=None):
    """Runs op() (returning rows) until `seconds` pass; rows per second. With --pids, also
    records rows per second of server CPU time under `name + "_per_server_cpu_s"`."""
    rows, start, cpu0 = 0, time.perf_counter(), server_cpu()
    while True:
        rows += op()
        took = time.perf_counter() - start
        if took >= seconds:
            if out is not None and PIDS:
                cpu = server_cpu() - cpu0
                out[name + "_per_server_cpu_s"] = rows / cpu if cpu > 0 else float("nan")
            return rows / took


def read(a):
    c = connect(a)
    t = c.table(TABLE)
    n = sum(1 for _ in t.scan(batch_size=1000))
    assert n == a.rows, "table has %d rows, expected %d" % (n, a.rows)
    rnd = random.Random(1)

    def get():
        r = t.row(key(rnd.randrange(a.rows)))
        assert r
        return 1

    def multiget():
        rows = t.rows([key(rnd.randrange(a.rows)) for _ in range(100)])
        assert len(rows) == 100
        return len(rows)

    def scan():
        return sum(1 for _ in t.scan(batch_size=1000))

    out = {}
    out["gets"] = timed(a.seconds, get, out, "gets")
    out["multigets"] = timed(a.seconds, multiget, out, "multigets")
    out["scans"] = timed(a.seconds, scan, out, "scans")
    return out


def _conc_worker(args):
    host, port, rows, seconds, seed = args
    c = happybase.Connection(host, port, timeout=120000)
    t = c.table(TABLE)
    rnd = random.Random(seed)
    t.row(key(0))

    def get():
        t.row(key(rnd.randrange(rows)))
        return 1

    return timed(seconds, get)


def conc(a):
    with multiprocessing.Pool(a.connections) as p:
        rates = p.map(
            _conc_worker,
            [(a.host, a.port, a.rows, a.seconds, s) for s in range(a.connections)],
        )
    return {"conc_gets_%d" % a.connections: sum(rates)}


def compare(cairn_file, hbase_file):
    cairn = json.load(open(cairn_file))
    hbase = json.load(open(hbase_file))
    print("%-32s %14s %14s %8s" % ("rows per second", "cairn", "HBase", "ratio"))
    for k in cairn:
        if k in hbase and not k.endswith("_s"):
            print("%-32s %14.0f %14.0f %7.1fx" % (k, cairn[k], hbase[k], cairn[k] / hbase[k]))
    print("%-32s %14s %14s %8s" % ("rows per second of server CPU", "cairn", "HBase", "ratio"))
    for k in cairn:
        if k in hbase and k.endswith("_per_server_cpu_s"):
            name = k[: -len("_per_server_cpu_s")]
            print("%-32s %14.0f %14.0f %7.1fx" % (name, cairn[k], hbase[k], cairn[k] / hbase[k]))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
        return
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["load", "read", "conc"])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9090)
    p.add_argument("--rows", type=int, default=20000)
    p.add_argument("--value-size", type=int, default=1024)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--connections", type=int, default=4)
    p.add_argument("--json", help="merge the results into this JSON file")
    p.add_argument("--pids", default="", help="server process ids, to measure their CPU time")
    a = p.parse_args()
    PIDS.extend(int(x) for x in a.pids.split(",") if x)
    out = {"load": load, "read": read, "conc": conc}[a.mode](a)
    for k, v in out.items():
        print("%-14s %12.0f rows/s" % (k, v), flush=True)
    if a.json:
        merged = json.load(open(a.json)) if os.path.exists(a.json) else {}
        merged.update(out)
        json.dump(merged, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
