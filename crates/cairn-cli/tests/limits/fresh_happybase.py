"""How long a new happybase connection takes to be served (run by crates/cairn-cli/tests/limits.rs).

A warm-up connection creates TABLE (family f) and puts and reads a row, then closes; the script
prints READY and waits for a line on stdin (the test meanwhile fills the server's ports with
idle sockets); then a new connection puts and reads a row, and the script prints SERVED <ms>
with the time that took, or FAILED <error> (exit 3).

usage: fresh_happybase.py HOST PORT TABLE
"""

import sys
import time

import happybase


def put_get(conn, table, row):
    t = conn.table(table)
    value = b"value of " + row
    t.put(row, {b"f:q": value})
    got = t.row(row)
    if got != {b"f:q": value}:
        raise RuntimeError("read back %r" % (got,))


def main():
    host, port, table = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    conn = happybase.Connection(host, port, timeout=10000)
    if table.encode() not in conn.tables():
        conn.create_table(table, {"f": dict()})
    put_get(conn, table, b"warm-up")
    conn.close()
    print("READY", flush=True)
    sys.stdin.readline()
    start = time.monotonic()
    try:
        conn = happybase.Connection(host, port, timeout=5000)
        put_get(conn, table, b"fresh")
        conn.close()
    except Exception as e:  # the caller asserts on the outcome
        print("FAILED after %d ms: %s: %s" % ((time.monotonic() - start) * 1000, type(e).__name__, e), flush=True)
        sys.exit(3)
    print("SERVED %d" % ((time.monotonic() - start) * 1000), flush=True)


if __name__ == "__main__":
    main()
