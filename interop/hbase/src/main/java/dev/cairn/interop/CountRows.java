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

/**
 * Counts a table's rows with a client-side full scan (FirstKeyOnlyFilter, so one cell per row
 * crosses the wire) and prints the count alone on stdout. PerformanceEvaluation never checks
 * what it wrote; this is the check, through HBase 2.6.1's own client.
 *
 * <pre>
 *   CountRows (--bootstrap HOST:PORT | --zk HOST:PORT) TABLE
 * </pre>
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
    String usage = "CountRows (--bootstrap HOST:PORT | --zk HOST:PORT) TABLE";
    Configuration conf = HBaseConfiguration.create();
    List<String> rest = registry(args, conf, usage);
    if (rest.size() != 1) {
      fail(usage, "name exactly one table");
    }
    long rows = 0;
    Scan scan = new Scan().setFilter(new FirstKeyOnlyFilter()).setCaching(1000);
    try (Connection conn = ConnectionFactory.createConnection(conf);
        Table table = conn.getTable(TableName.valueOf(rest.get(0)));
        ResultScanner scanner = table.getScanner(scan)) {
      for (Result r : scanner) {
        if (!r.isEmpty()) {
          rows++;
        }
      }
    }
    System.out.println(rows);
  }
}
