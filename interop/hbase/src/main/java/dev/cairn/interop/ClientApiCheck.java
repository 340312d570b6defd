package dev.cairn.interop;

import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Table;

/**
 * HBase 2.6.1's own Java client, public API only (Connection, Admin, Table, BufferedMutator,
 * RegionLocator), against a server: real HBase to prove the checks right, {@code cairn serve}
 * to prove cairn speaks HBase's native RPC.
 *
 * <pre>
 *   ClientApiCheck --bootstrap HOST:PORT [--prefix NAME] [--keep] [--deadline SECONDS]
 *   ClientApiCheck --zookeeper HOST:PORT [--prefix NAME] [--keep] [--deadline SECONDS]
 * </pre>
 *
 * <p>{@code --bootstrap} uses the RPC connection registry (ClientMetaService on that port, no
 * ZooKeeper); {@code --zookeeper} (or {@code --zk}) leaves the registry at its default, the
 * ZooKeeper registry, which finds the cluster id, the master and meta in that ZooKeeper's
 * znodes. Tables are named
 * {@code PREFIX_main}, {@code PREFIX_bulk} and {@code PREFIX_life} (default prefix
 * {@code cc_<millis>}, so reruns do not collide) and are dropped at the end unless
 * {@code --keep}.
 *
 * <p>Prints {@code ok NAME} or {@code FAIL NAME: EXPECTED vs ACTUAL} per check and a summary;
 * exits 1 on any failure, 2 on bad arguments. Every expectation comes from what the program
 * wrote ({@link ClientApiModel}) and HBase's documented semantics, never from a server's output.
 * Client retries and timeouts are small, so a missing feature fails in seconds; a run still
 * going after {@code --deadline} seconds (default 300) is a failure of its own, so a server
 * that never answers cannot hang the test that runs this.
 */
public final class ClientApiCheck {
  static final String A = "a";
  static final String B = "b";
  /** Family {@code a} keeps 3 versions, {@code b} HBase's default of 1. */
  static final Map<String, Integer> VERSIONS = Map.of(A, 3, B, 1);
  /** The main table's split keys: 4 regions, the numbered rows {@code r00000..r09990} in all. */
  static final String[] SPLITS = {"r02500", "r05000", "r07500"};
  /** The bulk table's split keys (its rows are {@code r00000..r29999}). */
  static final String[] BULK_SPLITS = {"r10000", "r20000"};

  final Connection conn;
  final Admin admin;
  final ClientApiReport report = new ClientApiReport();
  final ClientApiModel model = new ClientApiModel(VERSIONS);
  final TableName main;
  final TableName bulk;
  final TableName life;
  /**
   * The base of every explicit timestamp: an hour ago, so cells are in the past (a Delete
   * without a timestamp covers them) and well inside family b's TTL.
   */
  final long t0 = System.currentTimeMillis() - 3_600_000L;

  private ClientApiCheck(Connection conn, String prefix) throws java.io.IOException {
    this.conn = conn;
    this.admin = conn.getAdmin();
    this.main = TableName.valueOf(prefix + "_main");
    this.bulk = TableName.valueOf(prefix + "_bulk");
    this.life = TableName.valueOf(prefix + "_life");
  }

  Table mainTable() throws java.io.IOException {
    return conn.getTable(main);
  }

  /** Client settings that turn an unanswered call into an error within seconds. */
  static Configuration clientConf() {
    Configuration conf = HBaseConfiguration.create();
    conf.setInt("hbase.client.retries.number", 3);
    conf.setLong("hbase.client.pause", 100);
    conf.setInt("hbase.rpc.timeout", 20_000);
    conf.setInt("hbase.rpc.read.timeout", 20_000);
    conf.setInt("hbase.rpc.write.timeout", 20_000);
    conf.setInt("hbase.client.operation.timeout", 30_000);
    conf.setInt("hbase.client.meta.operation.timeout", 30_000);
    conf.setInt("hbase.client.scanner.timeout.period", 30_000);
    // Admin calls that wait for a master procedure (create, disable, enable, delete).
    conf.setLong("hbase.client.sync.wait.timeout.msec", 60_000);
    return conf;
  }

  private static void usage(String why) {
    System.err.println("ClientApiCheck: " + why + "\nusage: ClientApiCheck "
        + "(--bootstrap HOST:PORT | --zookeeper HOST:PORT) [--prefix NAME] [--keep] "
        + "[--deadline SECONDS]");
    System.exit(2);
  }

  public static void main(String[] args) {
    Configuration conf = clientConf();
    String prefix = "cc_" + System.currentTimeMillis();
    String target = null;
    boolean keep = false;
    long deadline = 300;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("--keep")) {
        keep = true;
        continue;
      }
      if (i + 1 >= args.length) {
        usage("missing value after " + a);
      }
      String v = args[++i];
      switch (a) {
        case "--bootstrap":
          conf.set("hbase.client.registry.impl",
              "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
          conf.set("hbase.client.bootstrap.servers", v);
          target = "bootstrap " + v;
          break;
        case "--zk":
        case "--zookeeper": {
          int colon = v.lastIndexOf(':');
          if (colon < 0) {
            usage(a + " wants HOST:PORT, got " + v);
          }
          conf.set("hbase.zookeeper.quorum", v.substring(0, colon));
          conf.set("hbase.zookeeper.property.clientPort", v.substring(colon + 1));
          target = "zookeeper " + v;
          break;
        }
        case "--prefix":
          prefix = v;
          break;
        case "--deadline":
          try {
            deadline = Long.parseLong(v);
          } catch (NumberFormatException e) {
            usage("--deadline wants whole seconds, got " + v);
          }
          break;
        default:
          usage("unknown argument " + a);
      }
    }
    if (target == null) {
      usage("say where the server is");
    }
    watchdog(deadline);
    int code;
    try {
      code = run(conf, target, prefix, keep);
    } catch (Throwable t) {
      System.out.println("FAIL connect: a connection vs " + ClientApiReport.describe(t));
      t.printStackTrace();
      code = 1;
    }
    // HBase's client leaves non-daemon threads behind: only exit() ends the JVM.
    System.exit(code);
  }

  /**
   * Ends the JVM with a failure once {@code seconds} have passed: halt, not exit, since a
   * client thread stuck on a dead server may also block shutdown.
   */
  private static void watchdog(long seconds) {
    Thread t = new Thread(() -> {
      try {
        Thread.sleep(seconds * 1000);
      } catch (InterruptedException e) {
        return;
      }
      System.out.println("FAIL deadline: every check within " + seconds + " s vs still running");
      System.out.flush();
      Runtime.getRuntime().halt(1);
    }, "ClientApiCheck-deadline");
    t.setDaemon(true);
    t.start();
  }

  private static int run(Configuration conf, String target, String prefix, boolean keep)
      throws Exception {
    long start = System.currentTimeMillis();
    System.out.println("# ClientApiCheck against " + target + ", tables " + prefix + "_*");
    try (Connection conn = ConnectionFactory.createConnection(conf)) {
      ClientApiCheck c = new ClientApiCheck(conn, prefix);
      try {
        if (ClientApiAdmin.schema(c)) {
          ClientApiWrites.run(c);
          ClientApiReads.run(c);
          ClientApiMeta.run(c);
          ClientApiErrors.run(c);
        } else {
          c.report.note("the main table could not be created: skipping the table checks");
        }
        ClientApiAdmin.lifecycle(c);
        if (!keep) {
          ClientApiAdmin.drop(c, c.main);
          ClientApiAdmin.drop(c, c.bulk);
        }
      } finally {
        c.admin.close();
      }
      c.report.summary(System.currentTimeMillis() - start);
      return c.report.allPassed() ? 0 : 1;
    }
  }
}
