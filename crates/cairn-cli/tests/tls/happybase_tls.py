"""happybase over TLS against cairn serve's Thrift port (run by crates/cairn-cli/tests/tls.rs).

happybase has no TLS option: `_refresh_thrift_client` builds a plain TSocket. This subclass
builds thriftpy2's TSSLSocket instead, verifying the server against CA (thriftpy2 checks the
chain, not the host name) and showing the client certificate in CLIENT_PEM (key and
certificate in one file) when given.

usage: happybase_tls.py HOST PORT CA_PEM TABLE [CLIENT_PEM]
Exit 0 after a put and a get read back equal; exit 3 if the connection or a call failed
(the error is printed).
"""

import sys

import happybase
from thriftpy2.thrift import TClient
from thriftpy2.transport import TSSLSocket

from Hbase_thrift import Hbase  # loaded by happybase


class TlsConnection(happybase.Connection):
    def __init__(self, host, port, cafile, certfile=None, **kw):
        self._tls = dict(cafile=cafile, certfile=certfile)
        super().__init__(host=host, port=port, **kw)

    def _refresh_thrift_client(self):
        sock = TSSLSocket(host=self.host, port=self.port, socket_timeout=self.timeout,
                          cafile=self._tls["cafile"], certfile=self._tls["certfile"])
        self.transport = self._transport_class(sock)
        protocol = self._protocol_class(self.transport, decode_response=False)
        self.client = TClient(Hbase, protocol)


def main():
    host, port, ca, table = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    cert = sys.argv[5] if len(sys.argv) > 5 else None
    try:
        conn = TlsConnection(host, port, ca, cert, timeout=10000)
        if table.encode() not in conn.tables():
            conn.create_table(table, {"f": dict()})
        t = conn.table(table)
        row, value = b"row-" + table.encode(), b"value over tls " + table.encode()
        t.put(row, {b"f:q": value})
        got = t.row(row)
        conn.close()
    except Exception as e:  # the caller asserts on which clients fail
        print("FAILED: %s: %s" % (type(e).__name__, e))
        sys.exit(3)
    if got != {b"f:q": value}:
        print("WRONG: %r" % (got,))
        sys.exit(4)
    print("OK")


if __name__ == "__main__":
    main()
