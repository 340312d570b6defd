package dev.cairn.interop;

import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Counts a table's rows with a client-side full scan (FirstKeyOnlyFilter, so one cell per row
 * crosses the wire) and prints the count alone on stdout. PerformanceEvaluation never checks
 * what it wrote; this is the check, through HBase 2.6.1's own client.
 *
 * <pre>
 *   CountRows (--bootstrap HOST:PORT | --zk HOST:PORT) TABLE [FAMILY:QUALIFIER]
 * </pre>
 *
 * <p>With a column, only rows holding that column count, and the line also gives the total
 * bytes of its values and the sum of those values read as 8-byte longs (0 for any other
 * length): what PE's append and increment commands leave behind ({@code ROWS BYTES SUM}).
 *
 * <p>{@code --bootstrap} selects the RPC connection registry, {@code --zk} the default
 * ZooKeeper registry. Exit status 2 on bad arguments, 1 on any client error.
 */
public final class CountRows {
  private CountRows() {}

  /**
   * Reads the registry options from {@code args} into a client configuration and returns the
   * arguments left over; exits with status 2 when no registry is named.
   */
  static List<String> registry(String[] args, Configuration conf, String usage) {
    List<String> rest = new ArrayList<>();
    boolean named = false;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("--bootstrap") || a.equals("--zk")) {
        if (i + 1 >= args.length) {
          fail(usage, "missing HOST:PORT after " + a);
        }
        String v = args[++i];
        int colon = v.lastIndexOf(':');
        if (colon <= 0) {
          fail(usage, a + " wants HOST:PORT, got " + v);
        }
        if (a.equals("--bootstrap")) {
          conf.set("hbase.client.registry.impl",
              "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
          conf.set("hbase.client.bootstrap.servers", v);
        } else {
          conf.set("hbase.zookeeper.quorum", v.substring(0, colon));
          conf.set("hbase.zookeeper.property.clientPort", v.substring(colon + 1));
        }
        named = true;
      } else {
        rest.add(a);
      }
    }
    if (!named) {
      fail(usage, "name the registry with --bootstrap or --zk");
    }
    // Fail fast rather than retrying for minutes when the server is not there.
    conf.setInt("hbase.client.retries.number", 3);
    return rest;
  }

  static void fail(String usage, String why) {
    System.err.println(why + "\nusage: " + usage);
    System.exit(2);
  }

  public static void main(String[] args) throws Exception {
    String usage = "CountRows (--bootstrap HOST:PORT | --zk HOST:PORT) TABLE [FAMILY:QUALIFIER]";
    Configuration conf = HBaseConfiguration.create();
    List<String> rest = registry(args, conf, usage);
    if (rest.isEmpty() || rest.size() > 2) {
      fail(usage, "name one table and at most one column");
    }
    byte[] family = null;
    byte[] qualifier = null;
    Scan scan = new Scan().setCaching(1000);
    if (rest.size() == 2) {
      String column = rest.get(1);
      int colon = column.indexOf(':');
      if (colon <= 0) {
        fail(usage, "a column is FAMILY:QUALIFIER, got " + column);
      }
      family = Bytes.toBytes(column.substring(0, colon));
      qualifier = Bytes.toBytes(column.substring(colon + 1));
      scan.addColumn(family, qualifier);
    } else {
      scan.setFilter(new FirstKeyOnlyFilter());
    }
    long rows = 0;
    long bytes = 0;
    long sum = 0;
    try (Connection conn = ConnectionFactory.createConnection(conf);
        Table table = conn.getTable(TableName.valueOf(rest.get(0)));
        ResultScanner scanner = table.getScanner(scan)) {
      for (Result r : scanner) {
        if (r.isEmpty()) {
          continue;
        }
        rows++;
        if (family != null) {
          byte[] v = r.getValue(family, qualifier);
          if (v != null) {
            bytes += v.length;
            if (v.length == Bytes.SIZEOF_LONG) {
              sum += Bytes.toLong(v);
            }
          }
        }
      }
    }
    System.out.println(family == null ? Long.toString(rows) : rows + " " + bytes + " " + sum);
  }
}
