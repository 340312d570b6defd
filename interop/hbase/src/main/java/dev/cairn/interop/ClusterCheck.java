package dev.cairn.interop;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.ClusterMetrics;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hbase.thirdparty.com.google.gson.JsonArray;
import org.apache.hbase.thirdparty.com.google.gson.JsonElement;
import org.apache.hbase.thirdparty.com.google.gson.JsonObject;
import org.apache.hbase.thirdparty.com.google.gson.JsonParser;

/**
 * Drives a distributed HBase 2.6.1 cluster (an HMaster and its region servers, HBase's or
 * cairn's) through HBase's own client and the default ZooKeeper registry, configured from the
 * cluster's conf dir (its {@code hbase-site.xml}), for the Rust cluster tests.
 *
 * <pre>
 *   ClusterCheck CONFDIR COMMAND ARGS...
 *   ClusterCheck CONFDIR shell          (commands from stdin, one per line)
 *
 *   wait-ready N [SECONDS]      master initialized, N region servers live and serving, meta assigned
 *   balancer off|on             the master's balancer switch
 *   create TABLE SPLIT,...      family f, split at row(SPLIT) for each SPLIT
 *   load TABLE FROM TO          row(n) = value(n) for n in [FROM, TO), one SYNC_WAL put each
 *   verify TABLE FROM TO        every row in [FROM, TO) exact, by gets and by a scan
 *   regions [TABLE]             where every region is (meta, namespace, all tables by default)
 *   move TABLE SERVERNAME       Admin.move of each region of TABLE, until open on SERVERNAME
 *   wait-dead SERVERNAME [S]    no longer live, no region left on it, no crash procedure running
 *   procedures                  the master's ServerCrashProcedures (finished ones only for a while)
 * </pre>
 *
 * <p>Lines printed: {@code SERVER name}, {@code META name}, {@code CREATED table regions},
 * {@code ACKED n}, {@code LOADED n}, {@code VERIFIED n}, {@code MISMATCH ...}, {@code REGION
 * table encoded startkey server}, {@code MOVED encoded server millis}, {@code BALANCER was
 * now}, {@code DEAD name}, {@code SCP pid state server splitWal carryingMeta}. A failure prints
 * {@code FAIL why} and exits 1 (the shell prints it and goes on); bad arguments exit 2. In the
 * shell each command ends with {@code DONE 0} or {@code DONE 1}.
 */
public final class ClusterCheck {
  private ClusterCheck() {}

  static final String USAGE = "ClusterCheck CONFDIR (shell | COMMAND ARGS...)";
  static final byte[] F = Bytes.toBytes("f");
  static final byte[] Q = Bytes.toBytes("q");

  /** A failed check: its message is the FAIL line. */
  static final class Failure extends Exception {
    private static final long serialVersionUID = 1L;

    Failure(String why) {
      super(why);
    }
  }

  static byte[] row(long n) {
    return Bytes.toBytes(String.format("row-%08d", n));
  }

  /** Deterministic, length varying with n, so a value from another row never passes. */
  static byte[] value(long n) {
    StringBuilder s = new StringBuilder("value-").append(n).append('-');
    int extra = (int) ((n * 2654435761L) % 97);
    for (int i = 0; i < extra; i++) {
      s.append((char) ('a' + (n + i) % 26));
    }
    return Bytes.toBytes(s.toString());
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      CountRows.fail(USAGE, "name the conf dir and a command");
    }
    File site = new File(args[0], "hbase-site.xml");
    if (!site.isFile()) {
      CountRows.fail(USAGE, "no hbase-site.xml in " + args[0]);
    }
    Configuration conf = HBaseConfiguration.create();
    conf.addResource(new Path(site.getAbsolutePath()));
    int code;
    try (Connection conn = ConnectionFactory.createConnection(conf)) {
      if (args[1].equals("shell")) {
        BufferedReader in =
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
          line = line.trim();
          if (line.isEmpty()) {
            continue;
          }
          int c = runReporting(conn, line.split("\\s+"));
          System.out.println("DONE " + c);
          System.out.flush();
        }
        code = 0;
      } else {
        code = runReporting(conn, Arrays.copyOfRange(args, 1, args.length));
      }
    }
    System.out.flush();
    // The client leaves non-daemon threads behind.
    System.exit(code);
  }

  static int runReporting(Connection conn, String[] cmd) {
    try {
      run(conn, cmd);
      return 0;
    } catch (Failure e) {
      System.out.println("FAIL " + e.getMessage());
    } catch (NumberFormatException e) {
      System.out.println("FAIL bad number in " + String.join(" ", cmd) + ": " + e.getMessage());
    } catch (Exception e) {
      System.out.println("FAIL " + String.join(" ", cmd) + ": " + e);
      e.printStackTrace();
    }
    System.out.flush();
    return 1;
  }

  static void want(String[] cmd, int min, int max) throws Failure {
    if (cmd.length - 1 < min || cmd.length - 1 > max) {
      throw new Failure("wrong number of arguments for " + cmd[0] + ": " + String.join(" ", cmd));
    }
  }

  static void run(Connection conn, String[] cmd) throws Exception {
    switch (cmd[0]) {
      case "wait-ready":
        want(cmd, 1, 2);
        waitReady(conn, Integer.parseInt(cmd[1]), seconds(cmd, 2, 180));
        break;
      case "balancer":
        want(cmd, 1, 1);
        try (Admin admin = conn.getAdmin()) {
          boolean on = cmd[1].equals("on");
          if (!on && !cmd[1].equals("off")) {
            throw new Failure("balancer on|off, got " + cmd[1]);
          }
          boolean was = admin.balancerSwitch(on, true);
          System.out.println("BALANCER " + (was ? "on" : "off") + " " + (on ? "on" : "off"));
        }
        break;
      case "create":
        want(cmd, 2, 2);
        create(conn, TableName.valueOf(cmd[1]), cmd[2]);
        break;
      case "load":
        want(cmd, 3, 3);
        load(conn, TableName.valueOf(cmd[1]), Long.parseLong(cmd[2]), Long.parseLong(cmd[3]));
        break;
      case "verify":
        want(cmd, 3, 3);
        verify(conn, TableName.valueOf(cmd[1]), Long.parseLong(cmd[2]), Long.parseLong(cmd[3]));
        break;
      case "regions":
        want(cmd, 0, 1);
        for (String line : regions(conn, cmd.length > 1 ? TableName.valueOf(cmd[1]) : null)) {
          System.out.println(line);
        }
        break;
      case "move":
        want(cmd, 2, 2);
        move(conn, TableName.valueOf(cmd[1]), ServerName.valueOf(cmd[2]));
        break;
      case "shutdown":
        want(cmd, 0, 0);
        try (Admin admin = conn.getAdmin()) {
          // The master deletes /hbase/running and stops; region servers stop on seeing it.
          admin.shutdown();
        }
        System.out.println("SHUTDOWN");
        break;
      case "split":
        want(cmd, 2, 2);
        split(conn, TableName.valueOf(cmd[1]), Bytes.toBytes(cmd[2]));
        break;
      case "wait-dead":
        want(cmd, 1, 2);
        waitDead(conn, ServerName.valueOf(cmd[1]), seconds(cmd, 2, 120));
        break;
      case "procedures":
        want(cmd, 0, 0);
        try (Admin admin = conn.getAdmin()) {
          for (String line : crashProcedures(admin)) {
            System.out.println(line);
          }
        }
        break;
      default:
        throw new Failure("unknown command " + cmd[0] + "; usage: " + USAGE);
    }
  }

  static long seconds(String[] cmd, int at, long dflt) {
    return cmd.length > at ? Long.parseLong(cmd[at]) : dflt;
  }

  static void waitReady(Connection conn, int servers, long seconds) throws Exception {
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    String last = "nothing yet";
    while (true) {
      try (Admin admin = conn.getAdmin()) {
        // Throws PleaseHoldException until the master has initialized.
        admin.listNamespaceDescriptors();
        ClusterMetrics m = admin.getClusterMetrics(EnumSet.of(ClusterMetrics.Option.LIVE_SERVERS));
        int live = m.getLiveServerMetrics().size();
        if (live == servers) {
          // A region server is live for the master once it reported for duty, but it takes
          // regions only after its first load report (HBASE-25032: the master's assignment
          // candidates have a last report time; a move to any other goes elsewhere), and
          // serves only once online (ServerNotRunningYetException before): both, for each.
          List<String> waiting = new ArrayList<>();
          for (Map.Entry<ServerName, org.apache.hadoop.hbase.ServerMetrics> e
              : m.getLiveServerMetrics().entrySet()) {
            if (e.getValue().getLastReportTimestamp() <= 0) {
              waiting.add(e.getKey().toString());
            } else {
              admin.getRegions(e.getKey());
            }
          }
          HRegionLocation meta = waiting.isEmpty() ? metaLocation(conn) : null;
          if (!waiting.isEmpty()) {
            last = "no load report yet from " + waiting;
          } else if (meta != null
              && admin.isTableAvailable(TableName.NAMESPACE_TABLE_NAME)) {
            for (ServerName sn : m.getLiveServerMetrics().keySet()) {
              System.out.println("SERVER " + sn);
            }
            System.out.println("META " + meta.getServerName());
            return;
          } else {
            last = "meta or hbase:namespace not assigned yet";
          }
        } else {
          last = live + " live region servers " + m.getLiveServerMetrics().keySet();
        }
      } catch (IOException e) {
        last = e.toString().split("\n")[0];
      }
      if (System.nanoTime() > deadline) {
        throw new Failure("cluster not ready with " + servers + " region servers after "
            + seconds + " s: " + last);
      }
      Thread.sleep(250);
    }
  }

  static HRegionLocation metaLocation(Connection conn) throws IOException {
    try (RegionLocator l = conn.getRegionLocator(TableName.META_TABLE_NAME)) {
      return l.getRegionLocation(HConstants.EMPTY_START_ROW, true);
    }
  }

  static void create(Connection conn, TableName name, String splitList) throws Exception {
    List<byte[]> splits = new ArrayList<>();
    for (String s : splitList.split(",")) {
      if (!s.isEmpty()) {
        splits.add(row(Long.parseLong(s)));
      }
    }
    try (Admin admin = conn.getAdmin()) {
      admin.createTable(
          TableDescriptorBuilder.newBuilder(name)
              .setColumnFamily(ColumnFamilyDescriptorBuilder.of(F))
              .build(),
          splits.toArray(new byte[0][]));
      System.out.println("CREATED " + name + " " + admin.getRegions(name).size());
    }
  }

  static void load(Connection conn, TableName name, long from, long to) throws Exception {
    try (Table t = conn.getTable(name)) {
      for (long n = from; n < to; n++) {
        t.put(new Put(row(n)).addColumn(F, Q, value(n)).setDurability(Durability.SYNC_WAL));
        System.out.println("ACKED " + n);
        // The Rust side reads these as they come, to kill a server mid-load.
        System.out.flush();
      }
    }
    System.out.println("LOADED " + (to - from));
  }

  static String mismatch(long n, Result r) {
    if (r == null || r.isEmpty()) {
      return "MISMATCH " + Bytes.toString(row(n)) + " missing";
    }
    byte[] v = r.getValue(F, Q);
    if (r.size() != 1 || v == null || !Bytes.equals(v, value(n))) {
      return "MISMATCH " + Bytes.toString(row(n)) + " cells=" + r.size() + " value="
          + (v == null ? "null" : Bytes.toStringBinary(v));
    }
    return null;
  }

  static void verify(Connection conn, TableName name, long from, long to) throws Exception {
    final int batch = 500;
    try (Table t = conn.getTable(name)) {
      for (long start = from; start < to; start += batch) {
        List<Get> gets = new ArrayList<>();
        for (long n = start; n < Math.min(to, start + batch); n++) {
          gets.add(new Get(row(n)));
        }
        Result[] got = t.get(gets);
        for (int i = 0; i < got.length; i++) {
          String bad = mismatch(start + i, got[i]);
          if (bad != null) {
            System.out.println(bad + " (get)");
            throw new Failure("verify " + name + " " + from + " " + to + ": " + bad);
          }
        }
      }
      long n = from;
      Scan scan = new Scan().withStartRow(row(from)).withStopRow(row(to)).setCaching(1000);
      try (ResultScanner s = t.getScanner(scan)) {
        for (Result r : s) {
          String want = Bytes.toString(row(n));
          String got = Bytes.toString(r.getRow());
          String bad = got.equals(want) ? mismatch(n, r) : "MISMATCH scan gave " + got
              + " where " + want + " was due";
          if (bad != null) {
            System.out.println(bad + " (scan)");
            throw new Failure("verify " + name + " " + from + " " + to + ": " + bad);
          }
          n++;
        }
      }
      if (n != to) {
        String bad = "MISMATCH scan ended before " + Bytes.toString(row(n));
        System.out.println(bad);
        throw new Failure("verify " + name + " " + from + " " + to + ": " + bad);
      }
    }
    System.out.println("VERIFIED " + (to - from));
  }

  /** {@code REGION table encoded startkey server}, meta first, read from meta (and ZooKeeper). */
  static List<String> regions(Connection conn, TableName only) throws Exception {
    List<TableName> tables = new ArrayList<>();
    if (only != null) {
      tables.add(only);
    } else {
      tables.add(TableName.META_TABLE_NAME);
      try (Admin admin = conn.getAdmin()) {
        for (TableName t : admin.listTableNames(Pattern.compile(".*"), true)) {
          if (!t.equals(TableName.META_TABLE_NAME)) {
            tables.add(t);
          }
        }
      }
    }
    List<String> out = new ArrayList<>();
    for (TableName t : tables) {
      List<HRegionLocation> locs;
      if (t.equals(TableName.META_TABLE_NAME)) {
        locs = List.of(metaLocation(conn));
      } else {
        try (RegionLocator l = conn.getRegionLocator(t)) {
          locs = l.getAllRegionLocations();
        }
      }
      for (HRegionLocation loc : locs) {
        out.add("REGION " + t + " " + loc.getRegion().getEncodedName() + " "
            + startKey(loc.getRegion().getStartKey()) + " "
            + (loc.getServerName() == null ? "-" : loc.getServerName()));
      }
    }
    return out;
  }

  /** A region's start key for a line: {@code -} for the first region's empty one. */
  static String startKey(byte[] key) {
    return key.length == 0 ? "-" : Bytes.toStringBinary(key);
  }

  /** Encoded name -> server name (or "-"), as {@link #regions} sees them. */
  static Map<String, String> assignment(Connection conn, TableName table) throws Exception {
    Map<String, String> out = new TreeMap<>();
    for (String line : regions(conn, table)) {
      String[] f = line.split(" ");
      out.put(f[2], f[f.length - 1]);
    }
    return out;
  }

  /**
   * Splits the region of {@code table} holding {@code row} at {@code row} with Admin.split (the
   * master's SplitTableRegionProcedure), then waits until meta lists both daughters open: prints
   * {@code SPLIT <daughter> <server>} for each.
   */
  static void split(Connection conn, TableName table, byte[] row) throws Exception {
    long deadline = System.nanoTime() + 60_000_000_000L;
    int before = assignment(conn, table).size();
    try (Admin admin = conn.getAdmin()) {
      admin.split(table, row);
    }
    while (true) {
      List<String> lines = regions(conn, table);
      boolean open = lines.stream().noneMatch(l -> l.endsWith(" -") || l.endsWith(" null"));
      if (lines.size() == before + 1 && open) {
        for (String line : lines) {
          String[] f = line.split(" ");
          if (f.length > 3 && f[3].equals(Bytes.toString(row))) {
            System.out.println("SPLIT " + f[2] + " " + f[f.length - 1]);
          }
        }
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new Failure("split of " + table + " at " + Bytes.toString(row)
            + " not done in 60 s: " + lines);
      }
      Thread.sleep(100);
    }
  }

  /**
   * Moves every region of {@code table} that is elsewhere to {@code target}, all at once (one
   * Admin.move per region, each on its own thread: a move takes about a second of the master's
   * procedure round trips), then waits until meta says each is on {@code target}.
   */
  static void move(Connection conn, TableName table, ServerName target) throws Exception {
    long timeoutMs = 60_000;
    long start = System.nanoTime();
    List<String> moving = new ArrayList<>();
    for (Map.Entry<String, String> e : assignment(conn, table).entrySet()) {
      if (e.getValue().equals(target.toString())) {
        System.out.println("MOVED " + e.getKey() + " " + target + " 0 (already there)");
      } else {
        moving.add(e.getKey());
      }
    }
    List<Thread> threads = new ArrayList<>();
    List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
    for (String encoded : moving) {
      Thread t = new Thread(() -> {
        try (Admin admin = conn.getAdmin()) {
          admin.move(Bytes.toBytes(encoded), target);
        } catch (IOException e) {
          errors.add("Admin.move of " + encoded + " to " + target + ": " + e);
        }
      });
      t.start();
      threads.add(t);
    }
    for (Thread t : threads) {
      t.join();
    }
    if (!errors.isEmpty()) {
      throw new Failure(String.join("; ", errors));
    }
    for (String encoded : moving) {
      while (true) {
        String now = assignment(conn, table).get(encoded);
        if (target.toString().equals(now)) {
          break;
        }
        if ((System.nanoTime() - start) / 1_000_000 > timeoutMs) {
          throw new Failure("region " + encoded + " of " + table + " not open on " + target
              + " " + timeoutMs + " ms after Admin.move; it is on " + now);
        }
        Thread.sleep(100);
      }
      System.out.println("MOVED " + encoded + " " + target + " "
          + (System.nanoTime() - start) / 1_000_000);
    }
    for (String line : regions(conn, table)) {
      System.out.println(line);
    }
  }

  /**
   * Waits until the master has processed {@code dead}'s death; prints {@code DEAD name} and
   * the last state of every crash procedure for it seen while waiting (a finished one may
   * have gone from the list before it was seen: the master's cleaner drops them).
   */
  static void waitDead(Connection conn, ServerName dead, long seconds) throws Exception {
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    Map<String, String> seen = new TreeMap<>();
    String last;
    while (true) {
      try (Admin admin = conn.getAdmin()) {
        ClusterMetrics m = admin.getClusterMetrics(EnumSet.of(ClusterMetrics.Option.LIVE_SERVERS));
        List<String> on = new ArrayList<>();
        for (String line : regions(conn, null)) {
          if (line.endsWith(" " + dead)) {
            on.add(line);
          }
        }
        List<String> running = new ArrayList<>();
        for (String scp : crashProcedures(admin)) {
          if (scp.contains(" " + dead + " ")) {
            seen.put(scp.split(" ")[1], scp);
            if (!scp.contains(" SUCCESS ")) {
              running.add(scp);
            }
          }
        }
        if (!m.getLiveServerMetrics().containsKey(dead) && on.isEmpty() && running.isEmpty()) {
          System.out.println("DEAD " + dead);
          for (String scp : seen.values()) {
            System.out.println(scp);
          }
          return;
        }
        last = "live=" + m.getLiveServerMetrics().containsKey(dead) + " regions=" + on
            + " crash procedures=" + running;
      } catch (IOException e) {
        last = e.toString().split("\n")[0];
      }
      if (System.nanoTime() > deadline) {
        throw new Failure(dead + " not processed as dead after " + seconds + " s: " + last);
      }
      Thread.sleep(250);
    }
  }

  /**
   * {@code SCP pid state server splitWal carryingMeta} for each ServerCrashProcedure the master
   * lists, from {@code Admin.getProcedures()}' JSON. A finished one stays listed only until the
   * master's completed-procedure cleaner next runs ({@code hbase.procedure.cleaner.interval},
   * 30 s): do not count on seeing it.
   */
  static List<String> crashProcedures(Admin admin) throws IOException {
    List<String> out = new ArrayList<>();
    JsonElement all = JsonParser.parseString(admin.getProcedures());
    if (!all.isJsonArray()) {
      return out;
    }
    for (JsonElement e : all.getAsJsonArray()) {
      JsonObject p = e.getAsJsonObject();
      String cls = p.has("className") ? p.get("className").getAsString() : "";
      if (!cls.endsWith(".ServerCrashProcedure")) {
        continue;
      }
      String server = "?";
      String split = "?";
      String meta = "?";
      if (p.has("stateMessage") && p.get("stateMessage").isJsonArray()) {
        JsonArray msgs = p.getAsJsonArray("stateMessage");
        for (JsonElement m : msgs) {
          JsonObject o = m.getAsJsonObject();
          if (o.has("serverName")) {
            JsonObject sn = o.getAsJsonObject("serverName");
            server = ServerName.valueOf(sn.get("hostName").getAsString(),
                sn.get("port").getAsInt(), sn.get("startCode").getAsLong()).toString();
          }
          if (o.has("shouldSplitWal")) {
            split = o.get("shouldSplitWal").getAsString();
          }
          if (o.has("carryingMeta")) {
            meta = o.get("carryingMeta").getAsString();
          }
        }
      }
      out.add("SCP " + p.get("procId").getAsString() + " " + p.get("state").getAsString() + " "
          + server + " splitWal=" + split + " carryingMeta=" + meta);
    }
    return out;
  }
}
