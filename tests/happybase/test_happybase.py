"""happybase (the real client, from PyPI) against `cairn serve`.

Starts `cairn serve` on free loopback ports with a temporary data directory and runs
happybase's documented usage, asserting every result; then hostile bytes on the wire, limits,
metrics, and a restart after a graceful stop. The binary is $CAIRN_BIN (default
target/debug/cairn, which scripts/test.sh builds).

With CAIRN_HAPPYBASE_HDFS=1 the servers keep their data (store files and WAL) on a
MiniDFSCluster (interop/hdfs, built by scripts/test.sh) instead: cairn must then be built with
`--features hdfs`.
"""

import atexit
import contextlib
import json
import os
import re
import signal
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request

import happybase
import pytest
import thriftpy2
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import TBufferedTransportFactory

from Hbase_thrift import AlreadyExists, IllegalArgument  # loaded by happybase
from Hbase_thrift import IOError as HBaseIOError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CAIRN = os.environ.get("CAIRN_BIN", os.path.join(ROOT, "target", "debug", "cairn"))

MAX_REQUEST = 1 << 20
MAX_SCANNERS = 40
LEASE_MS = 3000


_minidfs = []
_data_dirs = [0]


def minidfs_url():
    """A MiniDFSCluster for this test run, started on first use, stopped at exit."""
    if not _minidfs:
        target = os.path.join(ROOT, "interop", "hdfs", "target")
        cp = "%s:%s" % (os.path.join(target, "cairn-hdfs-minicluster-0.1.0.jar"),
                        os.path.join(target, "lib", "*"))
        base = tempfile.mkdtemp(prefix="cairn-minidfs-")
        log = open(os.path.join(base, "minidfs.log"), "w")
        p = subprocess.Popen(
            ["java", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", cp,
             "dev.cairn.hdfs.MiniDfs", base, "1"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
        line = p.stdout.readline()
        while line and not line.startswith("READY "):
            line = p.stdout.readline()
        if not line:
            raise RuntimeError("MiniDFSCluster did not start; see " + log.name)

        def stop():
            try:
                p.stdin.write("quit\n")
                p.stdin.flush()
                p.wait(timeout=60)
            except Exception:
                p.kill()

        atexit.register(stop)
        _minidfs.append(line.split()[1])
    return _minidfs[0]


@contextlib.contextmanager
def data_dir():
    """A fresh data directory: local and temporary, or on HDFS with CAIRN_HAPPYBASE_HDFS=1."""
    if os.environ.get("CAIRN_HAPPYBASE_HDFS"):
        _data_dirs[0] += 1
        yield "%s/happybase-%d-%d" % (minidfs_url(), os.getpid(), _data_dirs[0])
    else:
        with tempfile.TemporaryDirectory() as d:
            yield d


class Serve:
    """One `cairn serve` process."""

    def __init__(self, data, *defines, config=None):
        args = [CAIRN, "serve", "--thrift", "127.0.0.1:0", "--http", "127.0.0.1:0", "--hbase", "127.0.0.1:0",
                "--info", ""]
        if data is not None:
            args += ["--data", data]
        if config is not None:
            args += ["--config", config]
        for d in defines:
            args += ["-D", d]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.port = self.http = self.rpc = None
        deadline = time.time() + 60
        while (self.port is None or self.http is None) and time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("cairn serve exited: " + self.proc.stderr.read())
            m = re.search(r"thrift on 127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
            m = re.search(r"hbase rpc on 127\.0\.0\.1:(\d+)", line)
            if m:
                self.rpc = int(m.group(1))
            m = re.search(r"http on (127\.0\.0\.1:\d+)", line)
            if m:
                self.http = m.group(1)
        assert self.port and self.http

    def connect(self, **kw):
        return happybase.Connection("127.0.0.1", self.port, timeout=20000, **kw)

    def get(self, path):
        with urllib.request.urlopen("http://%s%s" % (self.http, path), timeout=10) as r:
            return r.status, r.read().decode()

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, out, err


@pytest.fixture(scope="module")
def server():
    with data_dir() as d:
        s = Serve(
            d,
            "cairn.thrift.max.request.bytes=%d" % MAX_REQUEST,
            "hbase.regionserver.thrift.framed.max_frame_size_in_mb=1",
            "cairn.thrift.max.open.scanners=%d" % MAX_SCANNERS,
            "hbase.client.scanner.timeout.period=%d" % LEASE_MS,
        )
        yield s
        code, _, err = s.stop()
        assert code == 0, err


_n = [0]


@pytest.fixture
def conn(server):
    c = server.connect()
    yield c
    c.close()


@pytest.fixture
def table(conn):
    _n[0] += 1
    name = "t%d" % _n[0]
    conn.create_table(name, {"cf1": dict(max_versions=5), "cf2": dict()})
    yield conn.table(name)
    conn.delete_table(name, disable=True)


def test_create_table_with_options_and_admin(conn):
    conn.create_table(
        "opts",
        {
            "a": dict(max_versions=7, compression="GZ", bloom_filter_type="ROWCOL",
                      in_memory=True, block_cache_enabled=True, time_to_live=3600),
            "b": dict(),
        },
    )
    assert b"opts" in conn.tables()
    fams = conn.table("opts").families()
    assert fams[b"a"]["max_versions"] == 7
    assert fams[b"a"]["compression"] == b"GZ"
    assert fams[b"a"]["bloom_filter_type"] == b"ROWCOL"
    assert fams[b"a"]["in_memory"] is True
    assert fams[b"a"]["block_cache_enabled"] is True
    assert fams[b"a"]["time_to_live"] == 3600
    assert fams[b"a"]["name"] == b"a:"
    # happybase/HBase defaults for options left out
    assert fams[b"b"]["max_versions"] == 3
    assert fams[b"b"]["compression"] == b"NONE"
    assert fams[b"b"]["time_to_live"] == 2**31 - 1
    regions = conn.table("opts").regions()
    assert len(regions) == 1 and regions[0]["start_key"] == b"" and regions[0]["end_key"] == b""
    assert regions[0]["name"].startswith(b"opts,,")
    with pytest.raises(AlreadyExists):
        conn.create_table("opts", {"a": dict()})
    with pytest.raises(IllegalArgument) as e:
        conn.create_table("badcomp", {"a": dict(compression="LZMA")})
    assert "compression" in str(e.value.message)
    with pytest.raises(IllegalArgument) as e:
        conn.client.createTable(b"nofam", [])  # happybase itself refuses this
    assert "columnFamilies" in str(e.value.message)
    with pytest.raises(IllegalArgument):
        conn.create_table("bad name!", {"a": dict()})
    assert conn.is_table_enabled("opts")
    conn.compact_table("opts")
    conn.compact_table("opts", major=True)
    with pytest.raises(HBaseIOError):
        conn.delete_table("opts")  # must be disabled first
    conn.delete_table("opts", disable=True)
    assert b"opts" not in conn.tables()
    with pytest.raises(HBaseIOError):
        conn.table("opts").families()


def test_put_row_and_columns(table):
    table.put(b"r1", {b"cf1:a": b"1", b"cf1:b": b"2", b"cf2:c": b"3"})
    assert table.row(b"r1") == {b"cf1:a": b"1", b"cf1:b": b"2", b"cf2:c": b"3"}
    assert table.row(b"r1", columns=[b"cf1:a", b"cf2"]) == {b"cf1:a": b"1", b"cf2:c": b"3"}
    assert table.row(b"r1", columns=[b"cf1"]) == {b"cf1:a": b"1", b"cf1:b": b"2"}
    assert table.row(b"missing") == {}
    row = table.row(b"r1", include_timestamp=True)
    v, ts = row[b"cf1:a"]
    assert v == b"1" and abs(ts - time.time() * 1000) < 60_000
    with pytest.raises(HBaseIOError):
        table.row(b"r1", columns=[b"nosuchfamily:x"])


def test_versions_and_timestamps(table):
    for ts in (10, 20, 30):
        table.put(b"v", {b"cf1:q": b"at%d" % ts}, timestamp=ts)
    assert table.cells(b"v", b"cf1:q") == [b"at30", b"at20", b"at10"]
    assert table.cells(b"v", b"cf1:q", versions=2, include_timestamp=True) == [
        (b"at30", 30), (b"at20", 20)]
    # timestamp: only versions strictly older (HBase's setTimeRange(0, ts))
    assert table.cells(b"v", b"cf1:q", timestamp=30) == [b"at20", b"at10"]
    assert table.row(b"v", timestamp=21) == {b"cf1:q": b"at20"}
    assert table.row(b"v", timestamp=10) == {}
    assert table.rows([b"v"], timestamp=25) == [(b"v", {b"cf1:q": b"at20"})]
    # cf2 keeps 3 versions
    for ts in range(1, 6):
        table.put(b"w", {b"cf2:q": b"%d" % ts}, timestamp=ts)
    assert table.cells(b"w", b"cf2:q") == [b"5", b"4", b"3"]
    with pytest.raises(ValueError):
        table.cells(b"w", b"cf2:q", versions=0)


def test_batch_and_rows(table):
    with table.batch(batch_size=7) as b:
        for i in range(50):
            b.put(b"row%03d" % i, {b"cf1:n": b"%d" % i, b"cf2:sq": b"%d" % (i * i)})
        b.delete(b"row010")
        b.delete(b"row011", columns=[b"cf2:sq"])
    rows = table.rows([b"row001", b"row010", b"row011", b"row049", b"nope"])
    assert rows == [
        (b"row001", {b"cf1:n": b"1", b"cf2:sq": b"1"}),
        (b"row011", {b"cf1:n": b"11"}),
        (b"row049", {b"cf1:n": b"49", b"cf2:sq": b"2401"}),
    ]
    assert table.rows([b"row002", b"row003"], columns=[b"cf2:sq"]) == [
        (b"row002", {b"cf2:sq": b"4"}), (b"row003", {b"cf2:sq": b"9"})]
    with table.batch(timestamp=5, wal=False) as b:
        b.put(b"old", {b"cf1:n": b"x"})
    assert table.row(b"old", include_timestamp=True) == {b"cf1:n": (b"x", 5)}
    # a mutation to a family that does not exist fails the batch, naming the family
    with pytest.raises((HBaseIOError, IllegalArgument)) as e:
        table.put(b"bad", {b"nofam:x": b"1"})
    assert "nofam" in str(e.value.message)
    # a put to a bare family (no qualifier): HBase drops it with a log line, cairn refuses it
    with pytest.raises(IllegalArgument) as e:
        table.put(b"bad", {b"cf1": b"1"})
    assert "no qualifier" in str(e.value.message)
    assert table.row(b"bad") == {}


def scan_rows(it):
    return [(k, v) for k, v in it]


def test_scan(table):
    with table.batch() as b:
        for i in range(30):
            b.put(b"k%02d" % i, {b"cf1:a": b"%d" % i, b"cf1:b": b"b%d" % i, b"cf2:c": b"c"})
        b.put(b"other", {b"cf1:a": b"o"})
    keys = lambda rows: [k for k, _ in rows]
    everything = scan_rows(table.scan())
    assert keys(everything) == [b"k%02d" % i for i in range(30)] + [b"other"]
    assert everything[3][1] == {b"cf1:a": b"3", b"cf1:b": b"b3", b"cf2:c": b"c"}
    assert keys(table.scan(row_start=b"k05", row_stop=b"k08")) == [b"k05", b"k06", b"k07"]
    assert keys(table.scan(row_start=b"k28")) == [b"k28", b"k29", b"other"]
    assert keys(table.scan(row_stop=b"k02")) == [b"k00", b"k01"]
    assert keys(table.scan(row_prefix=b"k1")) == [b"k1%d" % i for i in range(10)]
    assert scan_rows(table.scan(row_prefix=b"k2", columns=[b"cf1:b"], limit=2)) == [
        (b"k20", {b"cf1:b": b"b20"}), (b"k21", {b"cf1:b": b"b21"})]
    assert scan_rows(table.scan(row_prefix=b"k0", columns=[b"cf2"], limit=1)) == [
        (b"k00", {b"cf2:c": b"c"})]
    # filter strings (HBase's filter language)
    assert keys(table.scan(filter="ValueFilter(=, 'binary:o')")) == [b"other"]
    assert keys(table.scan(filter="PrefixFilter('k2') AND KeyOnlyFilter()", limit=3)) == [
        b"k20", b"k21", b"k22"]
    assert scan_rows(table.scan(row_prefix=b"k03", filter="KeyOnlyFilter()")) == [
        (b"k03", {b"cf1:a": b"", b"cf1:b": b"", b"cf2:c": b""})]
    assert keys(table.scan(filter="SingleColumnValueFilter('cf1', 'a', =, 'binary:7')")) == [b"k07"]
    assert scan_rows(table.scan(row_prefix=b"k04", filter="ColumnPrefixFilter('b')")) == [
        (b"k04", {b"cf1:b": b"b4"})]
    with pytest.raises(HBaseIOError) as e:
        list(table.scan(filter="NoSuchFilter('x')"))
    assert "filterString" in str(e.value.message)
    # limit and batch_size (rows per scannerGetList round trip)
    assert keys(table.scan(limit=4)) == [b"k00", b"k01", b"k02", b"k03"]
    assert keys(table.scan(batch_size=3)) == keys(everything)
    assert keys(table.scan(batch_size=2, limit=5)) == [b"k%02d" % i for i in range(5)]
    # scan_batching: at most N cells per result (a wide row comes back in parts)
    parts = scan_rows(table.scan(row_prefix=b"k01", scan_batching=2))
    assert parts == [(b"k01", {b"cf1:a": b"1", b"cf1:b": b"b1"}), (b"k01", {b"cf2:c": b"c"})]
    # reverse
    assert keys(table.scan(reverse=True, limit=3)) == [b"other", b"k29", b"k28"]
    assert keys(table.scan(row_prefix=b"k1", reverse=True)) == [b"k1%d" % i for i in range(9, -1, -1)]
    assert keys(table.scan(row_start=b"k05", row_stop=b"k02", reverse=True)) == [b"k05", b"k04", b"k03"]
    # sorted columns and timestamps
    rows = scan_rows(table.scan(row_prefix=b"k09", sorted_columns=True))
    assert list(rows[0][1].keys()) == [b"cf1:a", b"cf1:b", b"cf2:c"]
    rows = scan_rows(table.scan(row_prefix=b"k09", include_timestamp=True))
    assert rows[0][1][b"cf1:a"][0] == b"9"
    table.put(b"k09", {b"cf1:a": b"new"}, timestamp=2**42)
    assert scan_rows(table.scan(row_prefix=b"k09", columns=[b"cf1:a"], timestamp=2**42)) == [
        (b"k09", {b"cf1:a": b"9"})]
    assert scan_rows(table.scan(row_prefix=b"k09", columns=[b"cf1:a"])) == [
        (b"k09", {b"cf1:a": b"new"})]


def test_delete(table):
    table.put(b"d", {b"cf1:a": b"1", b"cf1:b": b"2", b"cf2:c": b"3"})
    table.delete(b"d", columns=[b"cf1:a"])
    assert table.row(b"d") == {b"cf1:b": b"2", b"cf2:c": b"3"}
    table.delete(b"d", columns=[b"cf2"])
    assert table.row(b"d") == {b"cf1:b": b"2"}
    table.delete(b"d")
    assert table.row(b"d") == {}
    # a delete with a timestamp removes versions at or before it
    for ts in (1, 2, 3):
        table.put(b"e", {b"cf1:q": b"%d" % ts}, timestamp=ts)
    table.delete(b"e", columns=[b"cf1:q"], timestamp=2)
    assert table.cells(b"e", b"cf1:q", include_timestamp=True) == [(b"3", 3)]
    table.delete(b"e", timestamp=3)
    assert table.row(b"e") == {}
    # the row can be written again with a newer timestamp
    table.put(b"e", {b"cf1:q": b"again"})
    assert table.row(b"e") == {b"cf1:q": b"again"}


def test_counters(table):
    assert table.counter_get(b"c", b"cf1:n") == 0
    assert table.counter_inc(b"c", b"cf1:n") == 1
    assert table.counter_inc(b"c", b"cf1:n", value=41) == 42
    assert table.counter_dec(b"c", b"cf1:n", value=2) == 40
    # As in HBase, an increment writes at max(now, previous + 1) ms, so increments within one
    # millisecond run ahead of the clock; a plain put (counter_set) made right after could be
    # older than them. Let the clock pass them first.
    time.sleep(0.05)
    table.counter_set(b"c", b"cf1:n", 1000)
    assert table.counter_get(b"c", b"cf1:n") == 1000
    assert table.row(b"c") == {b"cf1:n": struct.pack(">q", 1000)}
    assert table.counter_dec(b"c", b"cf1:m", value=5) == -5
    table.put(b"c", {b"cf1:text": b"abc"})
    with pytest.raises((HBaseIOError, IllegalArgument)) as e:
        table.counter_inc(b"c", b"cf1:text")
    assert "8" in str(e.value.message)


def test_enable_disable_delete(conn):
    conn.create_table("ed", {"f": dict()})
    t = conn.table("ed")
    t.put(b"r", {b"f:q": b"v"})
    conn.disable_table("ed")
    assert not conn.is_table_enabled("ed")
    with pytest.raises(HBaseIOError) as e:
        t.row(b"r")
    assert "disabled" in str(e.value.message)
    with pytest.raises(HBaseIOError):
        t.put(b"r2", {b"f:q": b"v"})
    conn.enable_table("ed")
    assert conn.is_table_enabled("ed")
    assert t.row(b"r") == {b"f:q": b"v"}
    conn.delete_table("ed", disable=True)
    assert b"ed" not in conn.tables()
    with pytest.raises(HBaseIOError):
        conn.is_table_enabled("ed")
    # the name can be used again
    conn.create_table("ed", {"g": dict()})
    assert conn.table("ed").row(b"r") == {}
    conn.delete_table("ed", disable=True)


@pytest.mark.parametrize("transport", ["buffered", "framed"])
@pytest.mark.parametrize("protocol", ["binary", "compact"])
def test_transports_and_protocols(server, transport, protocol):
    c = server.connect(transport=transport, protocol=protocol)
    name = "tp_%s_%s" % (transport, protocol)
    c.create_table(name, {"f": dict(max_versions=2)})
    t = c.table(name)
    big = os.urandom(200_000)
    with t.batch() as b:
        for i in range(20):
            b.put(b"r%02d" % i, {b"f:a": b"%d" % i, b"f:big": big if i == 3 else b"s"})
    t.put(b"r00", {b"f:a": b"older"}, timestamp=1)
    assert t.row(b"r03")[b"f:big"] == big
    assert t.cells(b"r00", b"f:a", include_timestamp=True)[-1] == (b"older", 1)
    assert [k for k, _ in t.scan(row_start=b"r10", batch_size=4)] == [b"r%02d" % i for i in range(10, 20)]
    assert [k for k, _ in t.scan(filter="ValueFilter(=, 'binary:7')")] == [b"r07"]
    assert t.counter_inc(b"cnt", b"f:n", 3) == 3
    assert dict(t.rows([b"r01", b"r02"]))[b"r02"][b"f:a"] == b"2"
    c.delete_table(name, disable=True)
    c.close()


# --- hostile bytes, limits -------------------------------------------------------------


def raw(server, data, read=True):
    """Sends bytes on a fresh socket; returns what came back before the server closed."""
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    got = b""
    if read:
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except (ConnectionResetError, socket.timeout):
            pass
    s.close()
    return got


def binary_header(name, seq=1):
    return struct.pack(">iI", -2147418112 | 1, len(name)) + name + struct.pack(">i", seq)


def check_alive_and_intact(server, table_name, row, expected):
    assert server.alive()
    c = server.connect()
    assert c.table(table_name).row(row) == expected
    c.close()


def test_hostile_bytes_close_the_connection_and_lose_nothing(server, conn):
    conn.create_table("hostile", {"f": dict()})
    t = conn.table("hostile")
    t.put(b"keep", {b"f:q": b"safe"})
    cases = [
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",                       # not Thrift at all
        b"\x00\x00\x00\x05\x01\x02\x03\x04\x05",                       # a frame of garbage
        struct.pack(">i", 100 << 20) + b"\x80\x01\x00\x01",            # a 100 MiB frame
        struct.pack(">i", -1) + b"\x80\x01",                           # a negative frame
        struct.pack(">I", 0x80010001) + struct.pack(">i", -1),         # name length -1
        struct.pack(">I", 0x80010001) + struct.pack(">i", 0x7FFFFFF0),  # name length 2 GiB
        b"\x82\x21\x01\xff\xff\xff\xff\x0f",                          # compact: name of 4 GiB
        b"\x82\x3f",                                                   # compact: bad version
        b"\x80\x02\x00\x01",                                           # binary: bad version
        # getRow whose first argument claims 2 GiB
        binary_header(b"getRow") + b"\x0b\x00\x01" + struct.pack(">i", 0x7FFFFFF0),
        # getRows whose list claims -5 elements
        binary_header(b"getRows") + b"\x0b\x00\x01" + struct.pack(">i", 7) + b"hostile"
        + b"\x0f\x00\x02\x0b" + struct.pack(">i", -5),
        # getRows whose list claims 2^31-1 elements, then ends
        binary_header(b"getRows") + b"\x0f\x00\x02\x0b" + struct.pack(">i", 2**31 - 1),
        # a struct with a field of an unknown type
        binary_header(b"getRow") + b"\x42\x00\x01",
        # truncated mid-request
        binary_header(b"mutateRow") + b"\x0b\x00\x01\x00\x00",
    ]
    for data in cases:
        raw(server, data)
        check_alive_and_intact(server, "hostile", b"keep", {b"f:q": b"safe"})
    # deep nesting of unknown fields is refused, not recursed into without bound
    deep = binary_header(b"getRow") + b"\x0c\x00\x09" * 200
    raw(server, deep)
    check_alive_and_intact(server, "hostile", b"keep", {b"f:q": b"safe"})
    _, metrics = server.get("/metrics")
    m = re.search(r"cairn_thrift_protocol_error_count_total (\d+)", metrics)
    assert m and int(m.group(1)) >= len(cases)
    m = re.search(r"cairn_thrift_oversized_request_count_total (\d+)", metrics)
    assert m and int(m.group(1)) >= 5
    conn.delete_table("hostile", disable=True)


def test_argument_errors_get_an_exception_reply(server):
    # getRows with a 2 GiB list: the reply is an exception naming the size, then close
    reply = raw(server, binary_header(b"getRows") + b"\x0f\x00\x02\x0b" + struct.pack(">i", 2**31 - 1))
    assert b"getRows" in reply and b"list size" in reply


def test_unknown_method_is_answered_and_the_connection_stays_usable(server, tmp_path):
    idl = tmp_path / "extra.thrift"
    idl.write_text(
        "service Hbase {\n"
        "  list<binary> getTableNames()\n"
        "  void noSuchMethod(1: binary a, 2: list<i32> b, 3: map<binary,binary> c)\n"
        "}\n"
    )
    mod = thriftpy2.load(str(idl), module_name="extra_thrift")
    for proto in ["binary", "compact"]:
        if proto == "binary":
            client = make_client(mod.Hbase, "127.0.0.1", server.port,
                                 trans_factory=TBufferedTransportFactory(),
                                 proto_factory=TBinaryProtocolFactory(decode_response=False))
        else:
            from thriftpy2.protocol import TCompactProtocolFactory
            client = make_client(mod.Hbase, "127.0.0.1", server.port,
                                 trans_factory=TBufferedTransportFactory(),
                                 proto_factory=TCompactProtocolFactory(decode_response=False))
        before = client.getTableNames()
        with pytest.raises(TApplicationException) as e:
            client.noSuchMethod(b"x" * 1000, [1, 2, 3], {b"k": b"v"})
        assert e.value.type == TApplicationException.UNKNOWN_METHOD
        msg = e.value.message
        assert "noSuchMethod" in (msg.decode() if isinstance(msg, bytes) else msg)
        assert client.getTableNames() == before  # same connection, still in step
        client.close()


def test_oversized_requests_are_refused(server, conn):
    conn.create_table("big", {"f": dict()})
    t = conn.table("big")
    t.put(b"keep", {b"f:q": b"safe"})
    too_big = b"x" * (MAX_REQUEST + 10)
    for transport in ["buffered", "framed"]:
        c = server.connect(transport=transport)
        with pytest.raises(Exception):
            c.table("big").put(b"huge", {b"f:q": too_big})
        check_alive_and_intact(server, "big", b"keep", {b"f:q": b"safe"})
        c2 = server.connect(transport=transport)
        assert c2.table("big").row(b"huge") == {}
        c2.close()
    conn.delete_table("big", disable=True)


def test_scanner_limit_and_lease(server, conn):
    conn.create_table("leases", {"f": dict()})
    t = conn.table("leases")
    t.put(b"a", {b"f:q": b"1"})
    t.put(b"b", {b"f:q": b"2"})
    client = conn.client
    from Hbase_thrift import TScan
    ids = [client.scannerOpenWithScan(b"leases", TScan(), {}) for _ in range(MAX_SCANNERS)]
    assert len(set(ids)) == MAX_SCANNERS
    # past the cap, the least recently used scanner (the first) makes room
    time.sleep(0.01)
    client.scannerGetList(ids[1], 0)
    extra = client.scannerOpenWithScan(b"leases", TScan(), {})
    with pytest.raises(IllegalArgument):
        client.scannerGetList(ids[0], 1)
    ids = ids[1:] + [extra]
    # one kept busy survives; the others expire after the lease
    keep = ids[0]
    deadline = time.time() + LEASE_MS * 3 / 1000
    got = []
    while time.time() < deadline:
        got += client.scannerGetList(keep, 0)
        time.sleep(0.2)
    time.sleep(0.5)
    rows = client.scannerGetList(keep, 10)
    assert [r.row for r in rows] == [b"a", b"b"]
    with pytest.raises(IllegalArgument):
        client.scannerGetList(ids[1], 1)
    with pytest.raises(IllegalArgument):
        client.scannerClose(ids[1])
    client.scannerClose(keep)
    assert [k for k, _ in t.scan()] == [b"a", b"b"]
    _, metrics = server.get("/metrics")
    m = re.search(r"cairn_thrift_expired_scanner_count_total (\d+)", metrics)
    assert m and int(m.group(1)) >= MAX_SCANNERS - 1
    conn.delete_table("leases", disable=True)


def test_metrics_jmx_health(server, conn):
    conn.create_table("met", {"f": dict()})
    t = conn.table("met")
    for i in range(10):
        t.put(b"r%d" % i, {b"f:q": b"v"})
    t.row(b"r1")
    status, text = server.get("/metrics")
    assert status == 200
    assert re.search(r'cairn_thrift_call_count_total\{method="getRowWithColumns"\} [1-9]', text)
    assert re.search(r'cairn_thrift_call_count_total\{method="mutateRows"\} ([1-9]\d*)', text)
    m = re.search(r'cairn_regions_write_request_count_total\{namespace="default",table="met",region="[0-9a-f]{32}"\} (\d+)', text)
    assert m and int(m.group(1)) == 10
    m = re.search(r'cairn_regions_read_request_count_total\{namespace="default",table="met",region="[0-9a-f]{32}"\} (\d+)', text)
    assert m and int(m.group(1)) >= 1
    m = re.search(r"cairn_wal_append_count_total (\d+)", text)
    assert m and int(m.group(1)) >= 10
    assert re.search(r"cairn_server_regions [1-9]", text)
    assert "cairn_blockcache_block_cache_hit_count_total" in text
    assert "cairn_checksum_fs_checksum_failure_count_total 0" in text
    # every family's samples are together, after its HELP and TYPE lines (a histogram's
    # samples are its name with _bucket, _sum and _count)
    seen = []
    for line in text.splitlines():
        if line.startswith("# HELP"):
            continue
        if line.startswith("# TYPE"):
            name = line.split()[2]
            assert name not in seen, name
            seen.append(name)
        else:
            sample = line.split("{")[0].split(" ")[0]
            assert sample in [seen[-1] + s for s in ("", "_bucket", "_sum", "_count")], line
    assert 'cairn_thrift_call_time_seconds_count{method="mutateRows"}' in text
    _, again = server.get("/prometheus")
    assert [l.split(" ")[0] for l in again.splitlines() if l.startswith("# TYPE")] == \
        [l.split(" ")[0] for l in text.splitlines() if l.startswith("# TYPE")]
    status, body = server.get("/jmx")
    beans = {b["name"]: b for b in json.loads(body)["beans"]}
    regions = beans["Hadoop:service=HBase,name=RegionServer,sub=Regions"]
    assert any(k.startswith("Namespace_default_table_met_region_") and k.endswith("_metric_writeRequestCount")
               for k in regions)
    assert beans["Hadoop:service=HBase,name=RegionServer,sub=WAL"]["appendCount"] >= 10
    status, body = server.get("/jmx?qry=Hadoop:service=HBase,name=RegionServer,sub=WAL")
    assert [b["name"] for b in json.loads(body)["beans"]] == ["Hadoop:service=HBase,name=RegionServer,sub=WAL"]
    status, body = server.get("/health")
    assert status == 200 and json.loads(body)["status"] == "ok"
    conn.delete_table("met", disable=True)


def test_graceful_stop_flushes_and_restart_keeps_everything():
    with data_dir() as d:
        s = Serve(d)
        c = s.connect()
        c.create_table("dur", {"f": dict(max_versions=3)})
        t = c.table("dur")
        with t.batch() as b:
            for i in range(500):
                b.put(b"r%04d" % i, {b"f:q": b"%d" % i})
        t.put(b"r0001", {b"f:q": b"v1"}, timestamp=1)
        t.counter_inc(b"n", b"f:c", 7)
        c.disable_table("dur")
        c.enable_table("dur")
        c.close()
        code, out, err = s.stop()
        assert code == 0, err
        assert "stopped" in out
        if not d.startswith("hdfs://"):
            stores = [f for root, _, files in os.walk(os.path.join(d, "data", "default", "dur"))
                      for f in files if re.fullmatch(r"[0-9a-f]{32}", f)]
            assert stores, "memstores were not flushed to store files"
        s = Serve(d)
        c = s.connect()
        t = c.table("dur")
        assert len(list(t.scan())) == 501
        assert t.row(b"r0499") == {b"f:q": b"499"}
        assert t.cells(b"r0001", b"f:q") == [b"1", b"v1"]
        assert t.counter_get(b"n", b"f:c") == 7
        c.close()
        code, out, err = s.stop()
        assert code == 0, err


def test_toml_config_with_hbase_property_names(tmp_path):
    data = tmp_path / "data"
    cfg = tmp_path / "cairn.toml"
    cfg.write_text(
        'data = "%s"\n'
        '"hbase.regionserver.thrift.framed.max_frame_size_in_mb" = 1\n'
        "[properties]\n"
        '"cairn.thrift.max.open.scanners" = 1\n'
        '"hbase.regionserver.maxlogs" = 8\n'
        '"some.property.cairn.does.not.know" = "ignored"\n' % data
    )
    s = Serve(None, config=str(cfg))
    try:
        c = s.connect()
        c.create_table("cfg", {"f": dict()})
        client = c.client
        from Hbase_thrift import TScan
        first = client.scannerOpenWithScan(b"cfg", TScan(), {})
        # the cap of one: the second scanner closes the first
        second = client.scannerOpenWithScan(b"cfg", TScan(), {})
        with pytest.raises(IllegalArgument):
            client.scannerGetList(first, 1)
        assert client.scannerGetList(second, 1) == []
        c.close()
    finally:
        code, _, err = s.stop()
    assert code == 0, err
    assert (data / "data" / "default" / "cfg").is_dir()
    # a known name with a bad value stops the start, naming it
    cfg.write_text('"hbase.client.scanner.timeout.period" = "soon"\n')
    p = subprocess.run([CAIRN, "serve", "--config", str(cfg), "--data", str(data), "--thrift", "127.0.0.1:0", "--hbase", "",
                        "--http", "", "--info", ""], capture_output=True, text=True, timeout=60)
    assert p.returncode != 0
    assert "hbase.client.scanner.timeout.period" in p.stderr


def test_shell_equivalents(conn):
    """docs/shell.md's happybase column, in the order of its table: each shell command's
    equivalent does what the shell command does."""
    c = conn
    c.create_table("shell_t", {"cf": dict(max_versions=3)})
    t = c.table("shell_t")
    assert b"shell_t" in c.tables()
    assert c.is_table_enabled("shell_t")
    assert t.families()[b"cf"]["max_versions"] == 3
    # Explicit timestamps: two puts in the same millisecond would be one version.
    t.put(b"r1", {b"cf:a": b"v"}, timestamp=10)
    assert t.row(b"r1") == {b"cf:a": b"v"}
    t.put(b"r1", {b"cf:a": b"v2"}, timestamp=20)
    assert t.cells(b"r1", b"cf:a", versions=3) == [b"v2", b"v"]
    for k in (b"a", b"f", b"m", b"z"):
        t.put(k, {b"cf:a": k, b"cf:b": k})
    assert [k for k, _ in t.scan(row_start=b"a", row_stop=b"m", limit=10)] == [b"a", b"f"]
    assert [d for _, d in t.scan(row_start=b"a", row_stop=b"b", columns=[b"cf:a"])] == [
        {b"cf:a": b"a"}
    ]
    assert sum(1 for _ in t.scan(filter="FirstKeyOnlyFilter()")) == 5
    t.delete(b"a", columns=[b"cf:a"])
    assert t.row(b"a") == {b"cf:b": b"a"}
    t.delete(b"f")
    assert t.row(b"f") == {}
    assert t.counter_inc(b"r1", b"cf:n", 5) == 5
    assert t.counter_get(b"r1", b"cf:n") == 5
    c.compact_table("shell_t")
    c.compact_table("shell_t", major=True)
    assert len(t.regions()) == 1
    c.disable_table("shell_t")
    assert not c.is_table_enabled("shell_t")
    c.enable_table("shell_t")
    c.delete_table("shell_t", disable=True)
    assert b"shell_t" not in c.tables()
