"""Data written through one protocol reads back identically through the other: happybase
(Thrift1) against HBase 2.6.1's Java client over cairn's native RPC, on one `cairn serve`.

The Java half is interop/hbase's CrossCheck (built by scripts/test.sh with the other interop
jars); both halves compute the same data model. Skipped when the jars are not built, unless
CAIRN_REQUIRE_HBASE_INTEROP=1.
"""

import glob
import os
import struct
import subprocess

import pytest

from test_happybase import ROOT, Serve, data_dir

TARGET = os.path.join(ROOT, "interop", "hbase", "target")
JAVA_FLAGS = [
    "-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true",
    "--add-modules", "jdk.unsupported",
    "--add-opens", "java.base/java.nio=ALL-UNNAMED",
    "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang=ALL-UNNAMED",
    "--add-opens", "java.base/java.util=ALL-UNNAMED",
    "--add-opens", "java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
]
ROWS = 300


def model(i):
    m = {
        b"f:s": b"value-%d" % i,
        b"f:b": bytes([i % 256, (7 * i) % 256, 0, 255]),
        b"g:n": struct.pack(">q", 1000 * i),
    }
    if i % 2 == 0:
        m[b"f:e"] = b""
    return m


def row(i):
    return b"x%05d" % i


def java(rpc_port, *args):
    jars = glob.glob(os.path.join(TARGET, "cairn-hbase-interop-*.jar"))
    if not jars:
        if os.environ.get("CAIRN_REQUIRE_HBASE_INTEROP") == "1":
            pytest.fail("interop jars missing: mvn -f interop/hbase/pom.xml package")
        pytest.skip("interop jars not built (mvn -f interop/hbase/pom.xml package)")
    cp = "%s:%s" % (jars[0], os.path.join(TARGET, "lib", "*"))
    p = subprocess.run(
        ["java", *JAVA_FLAGS, "-cp", cp, "dev.cairn.interop.CrossCheck",
         "--bootstrap", "127.0.0.1:%d" % rpc_port, *args],
        capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr[-4000:]
    return p.stdout


@pytest.fixture(scope="module")
def server():
    with data_dir() as d:
        s = Serve(d)
        yield s
        s.stop()


def test_java_writes_happybase_reads(server):
    out = java(server.rpc, "write", "from_java", str(ROWS))
    assert "wrote %d rows" % ROWS in out
    c = server.connect()
    t = c.table("from_java")
    got = list(t.scan())
    assert [k for k, _ in got] == [row(i) for i in range(ROWS)]
    for i, (_, cells) in enumerate(got):
        assert cells == model(i), i
    assert t.row(row(7)) == model(7)
    c.close()


def test_happybase_writes_java_reads(server):
    c = server.connect()
    c.create_table("from_thrift", {"f": dict(), "g": dict()})
    t = c.table("from_thrift")
    with t.batch(batch_size=100) as b:
        for i in range(ROWS):
            b.put(row(i), model(i))
    c.close()
    out = java(server.rpc, "verify", "from_thrift", str(ROWS))
    assert "verified %d rows" % ROWS in out
