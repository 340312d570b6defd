import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * The few Admin and scan calls bench/pe-vs-hbase.sh needs around HBase's PerformanceEvaluation,
 * through HBase 2.6.1's own client, so cairn and HBase are prepared the same way. The server is
 * the one hbase-site.xml on the classpath names (the RPC connection registry).
 *
 * <pre>
 *   PeTool flush TABLE              flush every region of TABLE (memstores to store files)
 *   PeTool warm TABLE EXPECTED      scan every row and cell of TABLE once (fills the block
 *                                   cache); exit 1 unless exactly EXPECTED rows came back
 *   PeTool create TABLE FAMILY N    (re)create TABLE with one FAMILY, N regions split evenly
 *                                   over YCSB's "user" + 19-digit key space (YCSB's usertable)
 *   PeTool hasclass NAME            exit 0 if NAME loads, 3 if not
 * </pre>
 *
 * Prints one line saying what it did (and how long it took).
 */
public final class PeTool {
  private PeTool() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      usage();
    }
    String cmd = args[0];
    if (cmd.equals("hasclass")) {
      try {
        Class.forName(args[1]);
        System.out.println("class " + args[1] + " found");
        System.exit(0);
      } catch (ClassNotFoundException e) {
        System.out.println("class " + args[1] + " not on the classpath");
        System.exit(3);
      }
    }
    long t0 = System.nanoTime();
    int status = 0;
    try (Connection conn = ConnectionFactory.createConnection(HBaseConfiguration.create());
        Admin admin = conn.getAdmin()) {
      TableName table = TableName.valueOf(args[1]);
      switch (cmd) {
        case "flush":
          admin.flush(table);
          System.out.printf("flushed %s in %.1f s%n", table, secs(t0));
          break;
        case "warm":
          if (args.length != 3) {
            usage();
          }
          status = warm(conn, table, Long.parseLong(args[2]), t0);
          break;
        case "create":
          if (args.length != 4) {
            usage();
          }
          create(admin, table, args[2], Integer.parseInt(args[3]));
          System.out.printf("created %s in %.1f s%n", table, secs(t0));
          break;
        default:
          usage();
      }
    }
    // Client threads are not all daemons: leave explicitly.
    System.exit(status);
  }

  private static int warm(Connection conn, TableName table, long expected, long t0)
      throws Exception {
    long rows = 0;
    long cells = 0;
    long bytes = 0;
    Scan scan = new Scan().setCaching(500).setCacheBlocks(true);
    try (Table t = conn.getTable(table); ResultScanner s = t.getScanner(scan)) {
      for (Result r : s) {
        rows++;
        cells += r.size();
        for (var c : r.rawCells()) {
          bytes += c.getValueLength();
        }
      }
    }
    System.out.printf("scanned %s: %d rows, %d cells, %d value bytes in %.1f s%n", table, rows,
        cells, bytes, secs(t0));
    if (rows != expected) {
      System.out.printf("expected %d rows in %s, scanned %d%n", expected, table, rows);
      return 1;
    }
    return 0;
  }

  private static void create(Admin admin, TableName table, String family, int regions)
      throws Exception {
    if (admin.tableExists(table)) {
      if (admin.isTableEnabled(table)) {
        admin.disableTable(table);
      }
      admin.deleteTable(table);
    }
    TableDescriptorBuilder b = TableDescriptorBuilder.newBuilder(table)
        .setColumnFamily(ColumnFamilyDescriptorBuilder.of(family));
    if (regions <= 1) {
      admin.createTable(b.build());
      return;
    }
    // YCSB's hashed keys are "user" + a decimal number of up to 19 digits: split on the first
    // digit after "user", spread evenly over 1..9.
    List<byte[]> splits = new ArrayList<>();
    for (int i = 1; i < regions; i++) {
      long lead = 1 + (long) i * 9 / regions;
      splits.add(Bytes.toBytes("user" + lead));
    }
    admin.createTable(b.build(), splits.toArray(new byte[0][]));
  }

  private static double secs(long t0) {
    return (System.nanoTime() - t0) / 1e9;
  }

  private static void usage() {
    System.err.println("usage: PeTool flush TABLE | warm TABLE EXPECTED_ROWS"
        + " | create TABLE FAMILY REGIONS | hasclass NAME");
    System.exit(2);
  }
}
