package dev.cairn.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * The two halves of moving from an HBase that died (kill -9) to cairn on the same root, through
 * HBase 2.6.1's own client.
 *
 * <pre>
 *   WalHandoff load   (--bootstrap HOST:PORT | --zk HOST:PORT) TABLE ROWS
 *   WalHandoff verify (--bootstrap HOST:PORT | --zk HOST:PORT) TABLE ROWS
 * </pre>
 *
 * <p>{@code load} creates TABLE (family {@code f}, split in three regions), puts ROWS rows with
 * {@code SYNC_WAL} in batches, then deletes every 97th row ({@code SYNC_WAL} too), printing
 * {@code acked N} after each batch the server acknowledged and {@code loaded} at the end.
 *
 * <p>{@code verify} scans TABLE and checks that it holds exactly the rows {@code load} left
 * (every put row but the deleted ones, each with its value), and lists the tables: {@code
 * table <name>} per table, {@code FAIL <why>} per difference, then {@code ok <rows>} or exit
 * status 1.
 */
public final class WalHandoff {
  private WalHandoff() {}

  static final byte[] F = Bytes.toBytes("f");
  static final byte[] Q = Bytes.toBytes("q");
  static final int BATCH = 500;

  static byte[] row(int n) {
    return Bytes.toBytes(String.format("row-%06d", n));
  }

  static byte[] value(int n) {
    return Bytes.toBytes("value-" + n);
  }

  static boolean deleted(int n) {
    return n % 97 == 0;
  }

  public static void main(String[] args) throws Exception {
    String usage = "WalHandoff (load|verify) (--bootstrap HOST:PORT | --zk HOST:PORT) TABLE ROWS";
    if (args.length < 1) {
      CountRows.fail(usage, "name a command");
    }
    Configuration conf = HBaseConfiguration.create();
    String[] rest0 = new String[args.length - 1];
    System.arraycopy(args, 1, rest0, 0, rest0.length);
    List<String> rest = CountRows.registry(rest0, conf, usage);
    if (rest.size() != 2) {
      CountRows.fail(usage, "name a table and a row count");
    }
    TableName name = TableName.valueOf(rest.get(0));
    int rows = Integer.parseInt(rest.get(1));
    int code;
    try (Connection conn = ConnectionFactory.createConnection(conf)) {
      switch (args[0]) {
        case "load":
          load(conn, name, rows);
          code = 0;
          break;
        case "verify":
          code = verify(conn, name, rows) ? 0 : 1;
          break;
        default:
          CountRows.fail(usage, "unknown command " + args[0]);
          return;
      }
    }
    System.out.flush();
    // The client leaves non-daemon threads behind.
    System.exit(code);
  }

  static void load(Connection conn, TableName name, int rows) throws Exception {
    try (Admin admin = conn.getAdmin()) {
      admin.createTable(
          TableDescriptorBuilder.newBuilder(name)
              .setColumnFamily(ColumnFamilyDescriptorBuilder.of(F))
              .build(),
          new byte[][] {row(rows / 3), row(2 * rows / 3)});
    }
    try (Table t = conn.getTable(name)) {
      List<Put> batch = new ArrayList<>();
      for (int n = 0; n < rows; n++) {
        batch.add(new Put(row(n)).addColumn(F, Q, value(n)).setDurability(Durability.SYNC_WAL));
        if (batch.size() == BATCH || n == rows - 1) {
          t.put(batch);
          batch.clear();
          System.out.println("acked " + (n + 1));
        }
      }
      List<Delete> deletes = new ArrayList<>();
      for (int n = 0; n < rows; n++) {
        if (deleted(n)) {
          deletes.add(new Delete(row(n)).setDurability(Durability.SYNC_WAL));
        }
      }
      t.delete(deletes);
    }
    System.out.println("loaded");
  }

  static boolean verify(Connection conn, TableName name, int rows) throws Exception {
    boolean ok = true;
    try (Admin admin = conn.getAdmin()) {
      for (TableName t : admin.listTableNames()) {
        System.out.println("table " + t.getNameAsString());
      }
    }
    TreeSet<String> missing = new TreeSet<>();
    for (int n = 0; n < rows; n++) {
      if (!deleted(n)) {
        missing.add(Bytes.toString(row(n)));
      }
    }
    long seen = 0;
    try (Table t = conn.getTable(name);
        ResultScanner s = t.getScanner(new Scan().setCaching(1000))) {
      for (Result r : s) {
        String key = Bytes.toString(r.getRow());
        seen++;
        if (!missing.remove(key)) {
          System.out.println("FAIL unexpected row " + key);
          ok = false;
          continue;
        }
        int n = Integer.parseInt(key.substring(4));
        byte[] v = r.getValue(F, Q);
        if (v == null || !Bytes.equals(v, value(n)) || r.size() != 1) {
          System.out.println("FAIL row " + key + " holds " + r);
          ok = false;
        }
      }
    }
    if (!missing.isEmpty()) {
      System.out.println("FAIL " + missing.size() + " rows missing, first " + missing.first()
          + ", last " + missing.last());
      ok = false;
    }
    if (ok) {
      System.out.println("ok " + seen);
    }
    return ok;
  }
}
