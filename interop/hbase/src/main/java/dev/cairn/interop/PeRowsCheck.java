package dev.cairn.interop;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.PerformanceEvaluation;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Gets rows {@code 0 .. N-1} of a table by PerformanceEvaluation's own key function
 * ({@code PerformanceEvaluation.format}), column {@code info0:0} as PE writes it, and prints
 * {@code FOUND MISSING BYTES}: how many rows were there, how many were not, and the total
 * length of their values. What another PE implementation wrote must look up the same way.
 *
 * <pre>
 *   PeRowsCheck (--bootstrap HOST:PORT | --zk HOST:PORT) TABLE N
 * </pre>
 */
public final class PeRowsCheck {
  private PeRowsCheck() {}

  public static void main(String[] args) throws Exception {
    String usage = "PeRowsCheck (--bootstrap HOST:PORT | --zk HOST:PORT) TABLE N";
    Configuration conf = HBaseConfiguration.create();
    List<String> rest = CountRows.registry(args, conf, usage);
    if (rest.size() != 2) {
      CountRows.fail(usage, "name a table and a row count");
    }
    int n = Integer.parseInt(rest.get(1));
    byte[] family = Bytes.toBytes("info0");
    byte[] qualifier = Bytes.toBytes("0");
    long found = 0;
    long missing = 0;
    long bytes = 0;
    try (Connection conn = ConnectionFactory.createConnection(conf);
        Table table = conn.getTable(TableName.valueOf(rest.get(0)))) {
      for (int from = 0; from < n; from += 100) {
        List<Get> gets = new ArrayList<>();
        for (int i = from; i < Math.min(n, from + 100); i++) {
          gets.add(new Get(PerformanceEvaluation.format(i)).addColumn(family, qualifier));
        }
        for (Result r : table.get(gets)) {
          byte[] v = r.getValue(family, qualifier);
          if (v == null) {
            missing++;
          } else {
            found++;
            bytes += v.length;
          }
        }
      }
    }
    System.out.println(found + " " + missing + " " + bytes);
  }
}
