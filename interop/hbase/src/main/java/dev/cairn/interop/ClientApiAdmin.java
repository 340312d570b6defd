package dev.cairn.interop;

import static dev.cairn.interop.ClientApiCheck.A;
import static dev.cairn.interop.ClientApiCheck.B;
import static dev.cairn.interop.ClientApiModel.b;
import static dev.cairn.interop.ClientApiModel.s;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.TreeSet;

import org.apache.hadoop.hbase.ClusterMetrics;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.NamespaceDescriptor;
import org.apache.hadoop.hbase.RegionMetrics;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.RegionStatesCount;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.io.encoding.DataBlockEncoding;
import org.apache.hadoop.hbase.regionserver.BloomType;

/** Admin and RegionLocator checks: cluster, namespaces, schema, regions, table life cycle. */
final class ClientApiAdmin {
  /** Family b's TTL in seconds: a week, far beyond the program's oldest timestamp. */
  static final int TTL = 7 * 24 * 3600;

  private ClientApiAdmin() {
  }

  /** The main table's families, with an option of every kind the issue lists. */
  static List<ColumnFamilyDescriptor> families() {
    return List.of(
        ColumnFamilyDescriptorBuilder.newBuilder(b(A)).setMaxVersions(3)
            .setBloomFilterType(BloomType.ROW).setCompressionType(Compression.Algorithm.GZ)
            .setBlocksize(16 * 1024).setInMemory(true)
            .setDataBlockEncoding(DataBlockEncoding.FAST_DIFF).build(),
        ColumnFamilyDescriptorBuilder.newBuilder(b(B)).setMaxVersions(1).setTimeToLive(TTL)
            .setBloomFilterType(BloomType.ROWCOL)
            .setCompressionType(Compression.Algorithm.NONE).setBlocksize(64 * 1024)
            .setInMemory(false).setDataBlockEncoding(DataBlockEncoding.NONE).build());
  }

  /** The options the checks set, printed the same way for what was sent and what came back. */
  static String options(ColumnFamilyDescriptor f) {
    return f.getNameAsString() + "{versions=" + f.getMaxVersions() + " ttl=" + f.getTimeToLive()
        + " bloom=" + f.getBloomFilterType() + " compression=" + f.getCompressionType()
        + " blocksize=" + f.getBlocksize() + " inMemory=" + f.isInMemory() + " encoding="
        + f.getDataBlockEncoding() + "}";
  }

  static byte[][] splitKeys(String[] splits) {
    return Arrays.stream(splits).map(ClientApiModel::b).toArray(byte[][]::new);
  }

  /** The regions split keys make, as {@code [start,end)} strings in key order. */
  static List<String> expectedRanges(String[] splits) {
    List<String> out = new ArrayList<>();
    String start = "";
    for (String split : splits) {
      out.add("[" + start + "," + split + ")");
      start = split;
    }
    out.add("[" + start + ",)");
    return out;
  }

  static String range(RegionInfo r) {
    return "[" + s(r.getStartKey()) + "," + s(r.getEndKey()) + ")";
  }

  /**
   * Cluster reachability, namespaces, and the main and bulk tables created and described;
   * false when the main table could not be created (the table checks are then pointless).
   */
  static boolean schema(ClientApiCheck c) throws Exception {
    ClientApiReport r = c.report;
    r.run("master reachable", () -> {
      ClusterMetrics m = c.admin.getClusterMetrics(EnumSet.of(ClusterMetrics.Option.MASTER));
      r.check("master reachable", m.getMasterName() != null, "a master name", "null");
    });
    r.run("cluster metrics", () -> {
      ClusterMetrics m = c.admin.getClusterMetrics(
          EnumSet.of(ClusterMetrics.Option.LIVE_SERVERS, ClusterMetrics.Option.CLUSTER_ID));
      r.check("cluster metrics live servers", m.getLiveServerMetrics().size() >= 1,
          ">= 1 live server", m.getLiveServerMetrics().keySet().toString());
      String id = m.getClusterId();
      r.check("cluster metrics cluster id", id != null && !id.isEmpty(), "a non-empty id",
          String.valueOf(id));
    });
    r.run("cluster version", () -> {
      String v = c.admin.getClusterMetrics(EnumSet.of(ClusterMetrics.Option.HBASE_VERSION))
          .getHBaseVersion();
      r.check("cluster metrics hbase version", v != null && v.startsWith("2."), "a 2.x version",
          String.valueOf(v));
    });
    r.run("namespaces", () -> {
      TreeSet<String> names = new TreeSet<>();
      for (NamespaceDescriptor d : c.admin.listNamespaceDescriptors()) {
        names.add(d.getName());
      }
      r.check("namespaces", names.contains("default") && names.contains("hbase"),
          "default and hbase among them", names.toString());
    });
    r.run("namespace create, list, delete", () -> {
      // What the shell's create_namespace, list_namespace and drop_namespace do.
      String ns = c.main.getNameAsString().replaceAll("[^A-Za-z0-9_]", "_") + "_ns";
      c.admin.createNamespace(NamespaceDescriptor.create(ns).build());
      r.check("createNamespace listed", namespaces(c).contains(ns), "listed " + ns,
          namespaces(c).toString());
      c.admin.deleteNamespace(ns);
      r.check("deleteNamespace gone", !namespaces(c).contains(ns), "without " + ns,
          namespaces(c).toString());
    });

    TableDescriptor desc = TableDescriptorBuilder.newBuilder(c.main)
        .setColumnFamilies(families()).build();
    try {
      c.admin.createTable(desc, splitKeys(ClientApiCheck.SPLITS));
      r.ok("create table pre-split");
    } catch (Exception e) {
      r.fail("create table pre-split", "created", ClientApiReport.describe(e));
      return false;
    }
    r.run("create bulk table", () -> {
      c.admin.createTable(TableDescriptorBuilder.newBuilder(c.bulk)
          .setColumnFamily(ColumnFamilyDescriptorBuilder.of(A)).build(),
          splitKeys(ClientApiCheck.BULK_SPLITS));
      r.ok("create bulk table");
    });
    r.run("tableExists", () -> {
      r.equal("tableExists true", true, c.admin.tableExists(c.main));
      r.equal("tableExists false", false,
          c.admin.tableExists(TableName.valueOf(c.main.getNameAsString() + "_missing")));
    });
    r.run("listTableNames", () -> {
      List<TableName> names = Arrays.asList(c.admin.listTableNames());
      r.check("listTableNames", names.contains(c.main), "contains " + c.main, names.toString());
    });
    r.run("cluster metrics, every option", () -> {
      // What HBase's tools ask: ITBLL reads getRegionServers(), the shell's `status 'detailed'`
      // every option.
      ClusterMetrics m = c.admin.getClusterMetrics(EnumSet.allOf(ClusterMetrics.Option.class));
      List<ServerName> names = m.getServersName();
      r.check("cluster metrics server names", names.size() == 1
          && m.getLiveServerMetrics().keySet().equals(new java.util.HashSet<>(names)),
          "one server, the live one", names + " vs " + m.getLiveServerMetrics().keySet());
      r.equal("getRegionServers", new ArrayList<>(names),
          new ArrayList<>(c.admin.getRegionServers()));
      // HBase's standalone master and region server are two server names; cairn's one.
      r.equal("cluster metrics master as the MASTER option says",
          c.admin.getClusterMetrics(EnumSet.of(ClusterMetrics.Option.MASTER)).getMasterName(),
          m.getMasterName());
      r.equal("cluster metrics dead servers", 0, m.getDeadServerNames().size());
      r.equal("cluster metrics unknown servers", 0, m.getUnknownServerNames().size());
      r.equal("cluster metrics backup masters", 0, m.getBackupMasterNames().size());
      r.equal("cluster metrics regions in transition", 0,
          m.getRegionStatesInTransition().size());
      r.check("cluster metrics balancer", m.getBalancerOn() != null, "a value", "null");
      r.check("cluster metrics version", m.getHBaseVersion().startsWith("2."), "2.x",
          m.getHBaseVersion());
      RegionStatesCount counts = m.getTableRegionStatesCount().get(c.main);
      int regions = ClientApiCheck.SPLITS.length + 1;
      r.check("cluster metrics table region counts", counts != null
          && counts.getTotalRegions() == regions && counts.getOpenRegions() == regions
          && counts.getRegionsInTransition() == 0,
          regions + " regions, all open", String.valueOf(counts));
    });
    r.run("getDescriptor", () -> {
      TableDescriptor got = c.admin.getDescriptor(c.main);
      r.equal("getDescriptor name", c.main, got.getTableName());
      List<String> want = new ArrayList<>();
      for (ColumnFamilyDescriptor f : families()) {
        want.add(options(f));
      }
      List<String> have = new ArrayList<>();
      for (ColumnFamilyDescriptor f : got.getColumnFamilies()) {
        have.add(options(f));
      }
      r.equal("getDescriptor families and options", want, have);
    });
    r.throwsClass("create existing table", "TableExistsException",
        () -> c.admin.createTable(desc, splitKeys(ClientApiCheck.SPLITS)));
    regions(c);
    return true;
  }

  private static void regions(ClientApiCheck c) {
    ClientApiReport r = c.report;
    List<String> want = expectedRanges(ClientApiCheck.SPLITS);
    r.run("RegionLocator", () -> {
      try (RegionLocator loc = c.conn.getRegionLocator(c.main)) {
        List<HRegionLocation> all = loc.getAllRegionLocations();
        List<String> ranges = new ArrayList<>();
        boolean served = true;
        for (HRegionLocation l : all) {
          ranges.add(range(l.getRegion()));
          served &= l.getServerName() != null;
        }
        r.equal("RegionLocator all regions", want, ranges);
        r.check("RegionLocator servers", served, "a server for every region", all.toString());
        // One row in each region, located one at a time.
        List<String> located = new ArrayList<>();
        for (String row : new String[] {"a", "r02500", "r06000", "z"}) {
          located.add(range(loc.getRegionLocation(b(row), true).getRegion()));
        }
        r.equal("RegionLocator row lookup", want, located);
      }
    });
    r.run("getRegions", () -> {
      List<RegionInfo> regions = c.admin.getRegions(c.main);
      List<String> ranges = new ArrayList<>();
      for (RegionInfo info : regions) {
        ranges.add(range(info));
      }
      List<String> sorted = new ArrayList<>(ranges);
      sorted.sort(null);
      r.note("Admin.getRegions order as returned: " + ranges);
      r.equal("getRegions", want, sorted);
    });
    r.run("region server admin", () -> {
      // What the shell's `list_regions` and `status 'detailed'` ask a region server:
      // GetOnlineRegion and GetRegionLoad.
      TreeSet<String> mainRegions = new TreeSet<>();
      for (RegionInfo info : c.admin.getRegions(c.main)) {
        mainRegions.add(info.getEncodedName());
      }
      TreeSet<String> online = new TreeSet<>();
      TreeSet<String> loaded = new TreeSet<>();
      for (ServerName sn : c.admin.getRegionServers()) {
        for (RegionInfo info : c.admin.getRegions(sn)) {
          if (info.getTable().equals(c.main)) {
            online.add(info.getEncodedName());
          }
        }
        for (RegionMetrics m : c.admin.getRegionMetrics(sn, c.main)) {
          loaded.add(RegionInfo.encodeRegionName(m.getRegionName()));
        }
      }
      r.equal("getRegions(server): every region of the table online", mainRegions, online);
      r.equal("getRegionMetrics(server, table): one per region", mainRegions, loaded);
    });
    r.run("master switches and listings", () -> {
      // The shell's balance_switch, balancer_enabled, in_maintenance_mode and
      // list_namespace_tables.
      boolean enabled = c.admin.isBalancerEnabled();
      r.equal("balancerSwitch returns the previous state", enabled,
          c.admin.balancerSwitch(enabled, true));
      r.equal("isMasterInMaintenanceMode", false, c.admin.isMasterInMaintenanceMode());
      List<TableName> inNs = new ArrayList<>();
      for (TableDescriptor d : c.admin.listTableDescriptorsByNamespace(
          b(c.main.getNamespaceAsString()))) {
        inNs.add(d.getTableName());
      }
      r.check("listTableDescriptorsByNamespace", inNs.contains(c.main), "contains " + c.main,
          inNs.toString());
    });
  }

  /**
   * A table's whole life: data survives disable and enable, a disabled table refuses reads,
   * an enabled one refuses deletion, and a deleted one is gone.
   */
  static void lifecycle(ClientApiCheck c) {
    ClientApiReport r = c.report;
    r.run("lifecycle", () -> {
      c.admin.createTable(TableDescriptorBuilder.newBuilder(c.life)
          .setColumnFamily(ColumnFamilyDescriptorBuilder.of(A)).build());
      Get get = new Get(b("k"));
      try (Table t = c.conn.getTable(c.life)) {
        t.put(new Put(b("k")).addColumn(b(A), b("q"), b("kept")));
        r.throwsClass("delete enabled table", "TableNotDisabledException",
            () -> c.admin.deleteTable(c.life));
        c.admin.disableTable(c.life);
        r.equal("disableTable isTableDisabled", true, c.admin.isTableDisabled(c.life));
        r.equal("disableTable isTableEnabled", false, c.admin.isTableEnabled(c.life));
        r.throwsClass("get on disabled table", "TableNotEnabledException", () -> t.get(get));
        // A connection that never located the table's regions: it finds them in hbase:meta.
        try (Connection fresh = ConnectionFactory.createConnection(c.conn.getConfiguration());
            Table ft = fresh.getTable(c.life)) {
          r.throwsClass("get on disabled table, new connection", "TableNotEnabledException",
              () -> ft.get(get));
        }
        c.admin.enableTable(c.life);
        r.equal("enableTable isTableEnabled", true, c.admin.isTableEnabled(c.life));
        r.equal("enableTable data kept", "kept", s(t.get(get).getValue(b(A), b("q"))));
      }
      // What the shell's flush, compact, major_compact and truncate do.
      c.admin.flush(c.life);
      c.admin.compact(c.life);
      c.admin.majorCompact(c.life);
      try (Table t = c.conn.getTable(c.life)) {
        r.equal("flush, compact, majorCompact: data kept", "kept", s(t.get(get).getValue(b(A), b("q"))));
      }
      c.admin.disableTable(c.life);
      c.admin.truncateTable(c.life, false);
      r.equal("truncateTable isTableEnabled", true, c.admin.isTableEnabled(c.life));
      try (Table t = c.conn.getTable(c.life)) {
        r.equal("truncateTable empties the table", true, t.get(get).isEmpty());
      }
      c.admin.disableTable(c.life);
      c.admin.deleteTable(c.life);
      r.equal("deleteTable tableExists", false, c.admin.tableExists(c.life));
      r.check("deleteTable listTableNames", !Arrays.asList(c.admin.listTableNames())
          .contains(c.life), "without " + c.life, "still listed");
    });
  }

  /** The names of every namespace. */
  private static TreeSet<String> namespaces(ClientApiCheck c) throws java.io.IOException {
    TreeSet<String> names = new TreeSet<>();
    for (NamespaceDescriptor d : c.admin.listNamespaceDescriptors()) {
      names.add(d.getName());
    }
    return names;
  }

  /** Disables and deletes {@code t}: the checks' tables do not outlive the run. */
  static void drop(ClientApiCheck c, TableName t) {
    c.report.run("drop " + t, () -> {
      c.admin.disableTable(t);
      c.admin.deleteTable(t);
      c.report.equal("drop " + t, false, c.admin.tableExists(t));
    });
  }
}
