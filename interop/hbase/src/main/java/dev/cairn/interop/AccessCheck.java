package dev.cairn.interop;

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
import org.apache.hadoop.hbase.security.User;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * Runs operations through HBase 2.6.1's own client, as one user, and prints how each ended, so
 * a test can check what authorization lets through: {@code ok <op>}, or {@code denied <op>
 * <class>: <message>} when the client threw HBase's {@code AccessDeniedException} (found in
 * the exception or its causes), or {@code error <op> <exception>} for anything else.
 *
 * <pre>
 *   AccessCheck --bootstrap HOST:PORT [--user NAME] [--ca CA.pem --keystore KEY.pem] OP...
 * </pre>
 *
 * <p>{@code --user} connects as that SIMPLE user ({@code User.create} over
 * {@code UserGroupInformation.createRemoteUser}, the user name the client then sends in its
 * connection header); without it, the OS user. {@code --ca} turns on TLS
 * ({@code hbase.client.netty.tls.enabled}) trusting that CA, and {@code --keystore} shows that
 * client certificate (a PEM with the key). Each {@code OP} is {@code create:T},
 * {@code put:T}, {@code get:T}, {@code disable:T} or {@code delete:T} (disable, then delete).
 */
public final class AccessCheck {
  private static final byte[] F = Bytes.toBytes("f");
  private static final byte[] Q = Bytes.toBytes("q");
  private static final byte[] ROW = Bytes.toBytes("row");
  private static final byte[] VALUE = "value".getBytes(StandardCharsets.UTF_8);

  private AccessCheck() {}

  static void run(Connection conn, String op) throws Exception {
    String[] p = op.split(":", 2);
    TableName t = TableName.valueOf(p[1]);
    try (Admin admin = conn.getAdmin()) {
      switch (p[0]) {
        case "create":
          admin.createTable(TableDescriptorBuilder.newBuilder(t)
              .setColumnFamily(ColumnFamilyDescriptorBuilder.of(F)).build());
          break;
        case "put":
          try (Table table = conn.getTable(t)) {
            table.put(new Put(ROW).addColumn(F, Q, VALUE));
          }
          break;
        case "get":
          try (Table table = conn.getTable(t)) {
            Result r = table.get(new Get(ROW));
            if (!Bytes.equals(r.getValue(F, Q), VALUE)) {
              throw new IllegalStateException("read back " + r);
            }
          }
          break;
        case "disable":
          admin.disableTable(t);
          break;
        case "delete":
          if (admin.isTableEnabled(t)) {
            admin.disableTable(t);
          }
          admin.deleteTable(t);
          break;
        default:
          throw new IllegalArgumentException("unknown operation " + op);
      }
    }
  }

  public static void main(String[] args) throws Exception {
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    conf.setInt("hbase.client.retries.number", 2);
    conf.setLong("hbase.client.pause", 100);
    conf.setInt("hbase.rpc.timeout", 10_000);
    conf.setInt("hbase.client.operation.timeout", 20_000);
    conf.setInt("hbase.client.meta.operation.timeout", 20_000);
    conf.setLong("hbase.client.sync.wait.timeout.msec", 30_000);
    String user = null;
    int i = 0;
    for (; i + 1 < args.length && args[i].startsWith("--"); i += 2) {
      switch (args[i]) {
        case "--bootstrap": conf.set("hbase.client.bootstrap.servers", args[i + 1]); break;
        case "--user": user = args[i + 1]; break;
        case "--ca":
          conf.setBoolean("hbase.client.netty.tls.enabled", true);
          conf.set("hbase.rpc.tls.truststore.location", args[i + 1]);
          break;
        case "--keystore": conf.set("hbase.rpc.tls.keystore.location", args[i + 1]); break;
        default: throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    String[] ops = java.util.Arrays.copyOfRange(args, i, args.length);
    try (Connection conn = user == null ? ConnectionFactory.createConnection(conf)
        : ConnectionFactory.createConnection(conf,
            User.create(UserGroupInformation.createRemoteUser(user)))) {
      for (String op : ops) {
        try {
          run(conn, op);
          System.out.println("ok " + op);
        } catch (Throwable e) {
          Throwable denied = e;
          while (denied != null
              && !(denied instanceof org.apache.hadoop.hbase.security.AccessDeniedException)) {
            denied = denied.getCause();
          }
          if (denied != null) {
            System.out.println("denied " + op + " " + denied.getClass().getName() + ": "
                + denied.getMessage().lines().findFirst().orElse(""));
          } else {
            System.out.println("error " + op + " " + e);
          }
        }
      }
    }
    System.out.flush();
    System.exit(0);
  }
}
