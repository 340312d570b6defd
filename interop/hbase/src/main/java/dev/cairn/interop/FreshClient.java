package dev.cairn.interop;

import java.io.BufferedReader;
import java.io.InputStreamReader;
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
import org.apache.hadoop.hbase.util.Bytes;

/**
 * How long a new HBase 2.6.1 client connection takes to be served: a warm-up connection first
 * creates the table and does a put and a get (so the JVM has loaded and compiled what a call
 * needs), then closes; the program prints {@code READY} and waits for a line on stdin (the test
 * meanwhile fills the server's ports with idle sockets); then a new connection — new sockets for
 * the connection registry, the meta look-up and the call — puts and gets a row, and the program
 * prints {@code SERVED <ms>} with the time that took, or {@code FAILED <error>}.
 *
 * <pre>
 *   FreshClient --bootstrap HOST:PORT --table NAME
 * </pre>
 */
public final class FreshClient {
  private static final byte[] F = Bytes.toBytes("f");
  private static final byte[] Q = Bytes.toBytes("q");

  private FreshClient() {}

  static void putGet(Connection conn, TableName name, String row) throws Exception {
    byte[] r = Bytes.toBytes(row);
    byte[] v = Bytes.toBytes("value of " + row);
    try (Table t = conn.getTable(name)) {
      t.put(new Put(r).addColumn(F, Q, v));
      Result got = t.get(new Get(r));
      if (!Bytes.equals(got.getValue(F, Q), v)) {
        throw new IllegalStateException("read back " + got);
      }
    }
  }

  public static void main(String[] args) throws Exception {
    String bootstrap = null;
    String table = null;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--bootstrap": bootstrap = args[i + 1]; break;
        case "--table": table = args[i + 1]; break;
        default: throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (bootstrap == null || table == null) {
      throw new IllegalArgumentException("FreshClient --bootstrap HOST:PORT --table NAME");
    }
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    conf.set("hbase.client.bootstrap.servers", bootstrap);
    // A refused connection must show as a slow or failed call, not as minutes of retries.
    conf.setInt("hbase.client.retries.number", 3);
    conf.setLong("hbase.client.pause", 100);
    conf.setInt("hbase.rpc.timeout", 5_000);
    conf.setInt("hbase.client.operation.timeout", 10_000);
    conf.setInt("hbase.client.meta.operation.timeout", 10_000);
    conf.setInt("hbase.ipc.client.socket.timeout.connect", 5_000);
    TableName name = TableName.valueOf(table);
    try (Connection conn = ConnectionFactory.createConnection(conf); Admin admin = conn.getAdmin()) {
      if (!admin.tableExists(name)) {
        admin.createTable(TableDescriptorBuilder.newBuilder(name)
            .setColumnFamily(ColumnFamilyDescriptorBuilder.of(F)).build());
      }
      putGet(conn, name, "warm-up");
    }
    System.out.println("READY");
    System.out.flush();
    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
    long start = System.nanoTime();
    try (Connection conn = ConnectionFactory.createConnection(conf)) {
      putGet(conn, name, "fresh");
      System.out.println("SERVED " + (System.nanoTime() - start) / 1_000_000);
    } catch (Throwable e) {
      System.out.println("FAILED after " + (System.nanoTime() - start) / 1_000_000 + " ms: " + e);
      System.exit(3);
    }
    System.exit(0);
  }
}
