// HBase 2.6.1's own client over TLS against cairn serve's native RPC port (run by
// crates/cairn-cli/tests/tls_java.rs as a single-file program on the interop classpath).
//
// usage: TlsPutGet BOOTSTRAP CA_PEM KEYSTORE_PEM|- TABLE
// Exit 0 after a table is created, a put written and a get read it back equal; exit 3 with
// the error printed if anything failed (a refused client certificate, for one).

import java.nio.charset.StandardCharsets;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;

public class TlsPutGet {
  public static void main(String[] args) {
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    conf.set("hbase.client.bootstrap.servers", args[0]);
    conf.setBoolean("hbase.client.netty.tls.enabled", true);
    conf.set("hbase.rpc.tls.truststore.location", args[1]);
    if (!args[2].equals("-")) {
      conf.set("hbase.rpc.tls.keystore.location", args[2]);
    }
    conf.setInt("hbase.client.retries.number", 2);
    conf.setLong("hbase.client.pause", 100);
    conf.setInt("hbase.rpc.timeout", 10_000);
    conf.setInt("hbase.client.operation.timeout", 20_000);
    conf.setInt("hbase.client.meta.operation.timeout", 20_000);
    conf.setLong("hbase.client.sync.wait.timeout.msec", 30_000);
    byte[] f = "f".getBytes(StandardCharsets.UTF_8);
    byte[] q = "q".getBytes(StandardCharsets.UTF_8);
    byte[] row = ("row-" + args[3]).getBytes(StandardCharsets.UTF_8);
    byte[] value = ("over tls from java " + args[3]).getBytes(StandardCharsets.UTF_8);
    TableName name = TableName.valueOf(args[3]);
    try (Connection conn = ConnectionFactory.createConnection(conf);
        Admin admin = conn.getAdmin()) {
      if (!admin.tableExists(name)) {
        admin.createTable(TableDescriptorBuilder.newBuilder(name)
            .setColumnFamily(ColumnFamilyDescriptorBuilder.of(f)).build());
      }
      try (Table t = conn.getTable(name)) {
        t.put(new Put(row).addColumn(f, q, value));
        Result r = t.get(new Get(row));
        byte[] got = r.getValue(f, q);
        if (got == null || !java.util.Arrays.equals(got, value)) {
          System.out.println("WRONG: " + r);
          System.exit(4);
        }
      }
    } catch (Throwable e) {
      System.out.println("FAILED: " + e);
      System.exit(3);
    }
    System.out.println("OK");
    System.exit(0);
  }
}
