package dev.cairn.interop;

import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;

/**
 * Creates a table with the given families unless it exists (YCSB's binding wants
 * {@code usertable} with its family beforehand, as {@code create 'usertable', 'family'} in the
 * HBase shell would). Prints "created" or "exists".
 *
 * <pre>
 *   CreateTable (--bootstrap HOST:PORT | --zk HOST:PORT) TABLE FAMILY...
 * </pre>
 */
public final class CreateTable {
  private CreateTable() {}

  public static void main(String[] args) throws Exception {
    String usage = "CreateTable (--bootstrap HOST:PORT | --zk HOST:PORT) TABLE FAMILY...";
    Configuration conf = HBaseConfiguration.create();
    List<String> rest = CountRows.registry(args, conf, usage);
    if (rest.size() < 2) {
      CountRows.fail(usage, "name a table and at least one family");
    }
    TableName name = TableName.valueOf(rest.get(0));
    TableDescriptorBuilder td = TableDescriptorBuilder.newBuilder(name);
    for (String f : rest.subList(1, rest.size())) {
      td.setColumnFamily(ColumnFamilyDescriptorBuilder.of(f));
    }
    try (Connection conn = ConnectionFactory.createConnection(conf);
        Admin admin = conn.getAdmin()) {
      if (admin.tableExists(name)) {
        System.out.println("exists");
        return;
      }
      admin.createTable(td.build());
      System.out.println("created");
    }
  }
}
