package dev.cairn.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * One half of a cross-protocol check: writes a table through HBase's Java client, or verifies
 * one written by another client (happybase over Thrift), against a data model both sides compute
 * the same way (tests/happybase/test_native_rpc.py has the other half).
 *
 * <pre>CrossCheck --bootstrap HOST:PORT (write|verify) TABLE ROWS</pre>
 *
 * Row i is "x%05d"; f:s = "value-i"; f:b = bytes [i%256, 7i%256, 0, 255]; f:e = "" on even rows;
 * g:n = the 8-byte big-endian long 1000*i.
 */
public final class CrossCheck {
  private CrossCheck() {
  }

  static NavigableMap<String, byte[]> model(int i) {
    NavigableMap<String, byte[]> m = new TreeMap<>();
    m.put("f:s", ("value-" + i).getBytes(StandardCharsets.UTF_8));
    m.put("f:b", new byte[] { (byte) (i % 256), (byte) ((7 * i) % 256), 0, (byte) 255 });
    if (i % 2 == 0) {
      m.put("f:e", new byte[0]);
    }
    m.put("g:n", Bytes.toBytes(1000L * i));
    return m;
  }

  static String row(int i) {
    return String.format("x%05d", i);
  }

  public static void main(String[] args) throws Exception {
    int status = 1;
    try {
      status = run(args);
    } catch (Throwable t) {
      t.printStackTrace();
    }
    System.exit(status);
  }

  static int run(String[] args) throws Exception {
    if (args.length != 5 || !args[0].equals("--bootstrap")) {
      System.err.println("usage: CrossCheck --bootstrap HOST:PORT (write|verify) TABLE ROWS");
      return 2;
    }
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.client.registry.impl",
      "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    conf.set("hbase.client.bootstrap.servers", args[1]);
    conf.setInt("hbase.client.retries.number", 3);
    TableName name = TableName.valueOf(args[3]);
    int rows = Integer.parseInt(args[4]);
    try (Connection c = ConnectionFactory.createConnection(conf)) {
      if (args[2].equals("write")) {
        try (Admin admin = c.getAdmin()) {
          admin.createTable(TableDescriptorBuilder.newBuilder(name)
            .setColumnFamily(ColumnFamilyDescriptorBuilder.of("f"))
            .setColumnFamily(ColumnFamilyDescriptorBuilder.of("g")).build());
        }
        try (Table t = c.getTable(name)) {
          List<Put> puts = new ArrayList<>();
          for (int i = 0; i < rows; i++) {
            Put p = new Put(Bytes.toBytes(row(i)));
            for (var e : model(i).entrySet()) {
              String[] fq = e.getKey().split(":", 2);
              p.addColumn(Bytes.toBytes(fq[0]), Bytes.toBytes(fq[1]), e.getValue());
            }
            puts.add(p);
          }
          t.put(puts);
        }
        System.out.println("wrote " + rows + " rows to " + name);
        return 0;
      }
      int bad = 0;
      int seen = 0;
      try (Table t = c.getTable(name); ResultScanner s = t.getScanner(new Scan())) {
        for (Result r : s) {
          String key = Bytes.toString(r.getRow());
          int i = seen++;
          if (!key.equals(row(i))) {
            System.out.println("FAIL row " + i + ": expected " + row(i) + ", got " + key);
            bad++;
            continue;
          }
          NavigableMap<String, byte[]> got = new TreeMap<>();
          for (Cell cell : r.rawCells()) {
            got.put(Bytes.toString(CellUtil.cloneFamily(cell)) + ":"
              + Bytes.toString(CellUtil.cloneQualifier(cell)), CellUtil.cloneValue(cell));
          }
          NavigableMap<String, byte[]> want = model(i);
          boolean same = got.keySet().equals(want.keySet());
          for (String k : want.keySet()) {
            same &= got.containsKey(k) && Arrays.equals(got.get(k), want.get(k));
          }
          if (!same) {
            System.out.println("FAIL " + key + ": cells " + got.keySet() + " differ from "
              + want.keySet() + " or in value");
            bad++;
          }
        }
      }
      if (seen != rows) {
        System.out.println("FAIL expected " + rows + " rows, scanned " + seen);
        bad++;
      }
      System.out.println(bad == 0 ? "verified " + seen + " rows of " + name : bad + " failures");
      return bad == 0 ? 0 : 1;
    }
  }
}
