"""Runs operations through happybase, as one client, and prints how each ended (run by
crates/cairn-cli/tests/authorization.rs): `ok OP`, `denied OP MESSAGE` when the server
answered with an IOError carrying HBase's AccessDeniedException, `error OP ...` otherwise.

usage: happybase_access.py HOST PORT (CA_PEM CLIENT_PEM | - -) OP...
OP is create:T, put:T, get:T or delete:T (disable, then delete). With a CA, the connection is
TLS (thriftpy2's TSSLSocket, showing CLIENT_PEM); with `- -`, plaintext.
"""

import os
import sys

import happybase

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tls"))
from happybase_tls import TlsConnection  # noqa: E402

from Hbase_thrift import IOError as HBaseIOError  # noqa: E402  (loaded by happybase)


def run(conn, op):
    kind, table = op.split(":", 1)
    if kind == "create":
        conn.create_table(table, {"f": dict()})
    elif kind == "put":
        conn.table(table).put(b"row", {b"f:q": b"value"})
    elif kind == "get":
        got = conn.table(table).row(b"row")
        if got != {b"f:q": b"value"}:
            raise RuntimeError("read back %r" % (got,))
    elif kind == "delete":
        conn.delete_table(table, disable=True)
    else:
        raise ValueError("unknown operation " + op)


def main():
    host, port, ca, cert = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    if ca == "-":
        conn = happybase.Connection(host, port, timeout=20000)
    else:
        conn = TlsConnection(host, port, ca, cert, timeout=20000)
    for op in sys.argv[5:]:
        try:
            run(conn, op)
            print("ok " + op, flush=True)
        except HBaseIOError as e:
            msg = e.message.decode() if isinstance(e.message, bytes) else str(e.message)
            if "AccessDeniedException" in msg:
                print("denied %s %s" % (op, msg.splitlines()[0]), flush=True)
            else:
                print("error %s IOError %s" % (op, msg), flush=True)
        except Exception as e:  # the caller asserts on every line
            print("error %s %s: %s" % (op, type(e).__name__, e), flush=True)
    conn.close()


if __name__ == "__main__":
    main()
