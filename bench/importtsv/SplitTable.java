import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;

/**
 * (Re)creates TABLE with FAMILY (HBase's default family settings) split at the keys in
 * SPLITS_FILE, one per line, so HBase's ImportTsv and cairn importtsv partition their output
 * at the same rows. The cluster comes from hbase-site.xml on the classpath.
 *
 * <pre>
 *   SplitTable TABLE FAMILY SPLITS_FILE
 * </pre>
 */
public final class SplitTable {
  private SplitTable() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: SplitTable TABLE FAMILY SPLITS_FILE");
      System.exit(2);
    }
    TableName name = TableName.valueOf(args[0]);
    List<byte[]> splits = new ArrayList<>();
    for (String line : Files.readAllLines(Paths.get(args[2]), StandardCharsets.UTF_8)) {
      if (!line.isEmpty()) {
        splits.add(line.getBytes(StandardCharsets.UTF_8));
      }
    }
    try (Connection conn = ConnectionFactory.createConnection(HBaseConfiguration.create());
        Admin admin = conn.getAdmin()) {
      if (admin.tableExists(name)) {
        admin.disableTable(name);
        admin.deleteTable(name);
      }
      admin.createTable(TableDescriptorBuilder.newBuilder(name)
        .setColumnFamily(ColumnFamilyDescriptorBuilder.of(args[1])).build(),
        splits.toArray(new byte[0][]));
      System.out.printf("created %s with %d regions%n", name, splits.size() + 1);
    }
  }
}
