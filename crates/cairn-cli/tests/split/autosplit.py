"""Loads and checks table `auto` through cairn's Thrift gateway with happybase.

    autosplit.py HOST:PORT load START END
        Creates the table (family f) if missing, then puts rows START..END in batches,
        printing `acked=N` (one past the last row acknowledged) after each batch. A failed
        batch (the server killed) ends the load quietly: what was acknowledged is printed.
    autosplit.py HOST:PORT check N [--min-regions K] [--upto M]
        Waits up to 60 s for at least K regions, then checks the regions tile the key space,
        a full scan returns every row 0..N exactly once, in order, with its value, and no row
        beyond M (default N); gets every 97th row. Prints `regions=` and `rows=`; exit 1 on
        any mismatch.
"""
import sys
import time

import happybase

TABLE = b"auto"


def row(i):
    return b"r%08d" % i


def value(i):
    # ~200 bytes, different per row, so a row read back under another key shows.
    return (b"%d:" % i) * (200 // len(b"%d:" % i))


def connect(addr):
    host, port = addr.rsplit(":", 1)
    return happybase.Connection(host, int(port), timeout=60000)


def load(conn, start, end):
    if TABLE not in conn.tables():
        conn.create_table(TABLE, {"f": {}})
    t = conn.table(TABLE)
    acked = start
    step = 200
    try:
        for lo in range(start, end, step):
            hi = min(lo + step, end)
            with t.batch() as b:
                for i in range(lo, hi):
                    b.put(row(i), {b"f:v": value(i)})
            acked = hi
            print("acked=%d" % acked, flush=True)
    except Exception as e:  # the server went away: report what it acknowledged
        print("load stopped at %d: %r" % (acked, e), flush=True)
    print("acked=%d" % acked, flush=True)


def fail(why):
    print("FAIL " + why, flush=True)
    sys.exit(1)


def check(conn, n, min_regions, upto):
    t = conn.table(TABLE)
    deadline = time.time() + 60
    while True:
        regions = sorted(t.regions(), key=lambda r: r["start_key"])
        if len(regions) >= min_regions or time.time() > deadline:
            break
        time.sleep(0.5)
    print("regions=%d" % len(regions), flush=True)
    if len(regions) < min_regions:
        fail("%d regions, wanted at least %d" % (len(regions), min_regions))
    if regions[0]["start_key"] != b"" or regions[-1]["end_key"] != b"":
        fail("regions do not cover the key space: %r" % regions)
    for a, b in zip(regions, regions[1:]):
        if a["end_key"] != b["start_key"]:
            fail("gap or overlap between %r and %r" % (a, b))
    expect = 0
    count = 0
    for key, data in t.scan():
        i = int(key[1:])
        if i < expect:
            fail("row %r returned twice or out of order" % key)
        if i != expect and expect < n:
            fail("row %r missing (next was %r)" % (row(expect), key))
        if i >= upto:
            fail("row %r was never written" % key)
        if data.get(b"f:v") != value(i):
            fail("row %r has %r" % (key, data))
        expect = i + 1
        count += 1
    if expect < n:
        fail("rows from %r on are missing" % row(expect))
    for i in range(0, n, 97):
        got = t.row(row(i))
        if got.get(b"f:v") != value(i):
            fail("get %r gave %r" % (row(i), got))
    print("rows=%d" % count, flush=True)


def main():
    addr, cmd = sys.argv[1], sys.argv[2]
    conn = connect(addr)
    if cmd == "load":
        load(conn, int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "check":
        n = int(sys.argv[3])
        opts = dict(zip(sys.argv[4::2], sys.argv[5::2]))
        check(conn, n, int(opts.get("--min-regions", 1)), int(opts.get("--upto", n)))
    else:
        fail("unknown command " + cmd)


if __name__ == "__main__":
    main()
