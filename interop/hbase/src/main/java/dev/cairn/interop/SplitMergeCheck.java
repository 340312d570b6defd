package dev.cairn.interop;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Splits and merges driven through HBase 2.6.1's own Admin, seen through its own Table and
 * RegionLocator: {@code Admin.split} at a row and without one, {@code splitRegionAsync},
 * {@code mergeRegionsAsync}, with one Table kept open across all of them (its cached region
 * locations go stale, so its puts and gets must be relocated by the client after a
 * NotServingRegionException), the region boundaries after each step, HBase's error texts for a
 * split row outside the region and a merge of regions that are not adjacent, the cluster-wide
 * split and merge switches (on, and not to be turned off), and at the end a
 * full scan that must return every row exactly once with its latest value.
 *
 * <pre>
 *   SplitMergeCheck --bootstrap HOST:PORT --data DIR
 * </pre>
 *
 * <p>{@code DIR} is the server's data directory: a split's daughters (and a merge's child)
 * refer to their parents' files until their first compaction, and may not split or merge
 * again until then (HBase's rule too); the program waits for those reference files
 * ({@code <hfile>.<parent>} in a family directory) to go before the next step. Prints one
 * {@code ok ...} line per check; exit status 1 with a {@code FAIL} line on the first failure.
 */
public final class SplitMergeCheck {
  private static final String USAGE = "SplitMergeCheck --bootstrap HOST:PORT --data DIR";
  private static final TableName TABLE = TableName.valueOf("splitmerge");
  private static final byte[] F = Bytes.toBytes("f");
  private static final byte[] A = Bytes.toBytes("a");
  private static final byte[] B = Bytes.toBytes("b");
  private static final int ROWS = 2000;

  private SplitMergeCheck() {}

  static byte[] row(int i) {
    return Bytes.toBytes(String.format("r%05d", i));
  }

  static void check(boolean ok, String what) {
    if (!ok) {
      System.out.println("FAIL " + what);
      System.exit(1);
    }
    System.out.println("ok " + what);
  }

  /** The table's regions in key order, as the client's RegionLocator reads them from meta. */
  static List<RegionInfo> regions(Connection conn) throws IOException {
    List<RegionInfo> out = new ArrayList<>();
    try (RegionLocator l = conn.getRegionLocator(TABLE)) {
      for (HRegionLocation loc : l.getAllRegionLocations()) {
        out.add(loc.getRegion());
      }
    }
    out.sort(Comparator.comparing(RegionInfo::getStartKey, Bytes.BYTES_COMPARATOR));
    return out;
  }

  static String show(List<RegionInfo> rs) {
    StringBuilder sb = new StringBuilder();
    for (RegionInfo r : rs) {
      sb.append('[').append(Bytes.toStringBinary(r.getStartKey())).append(',')
          .append(Bytes.toStringBinary(r.getEndKey())).append(") ");
    }
    return sb.toString().trim();
  }

  /** The regions tile the key space: first start and last end empty, no gap, no overlap. */
  static boolean tiles(List<RegionInfo> rs) {
    if (rs.isEmpty() || rs.get(0).getStartKey().length != 0
        || rs.get(rs.size() - 1).getEndKey().length != 0) {
      return false;
    }
    for (int i = 1; i < rs.size(); i++) {
      if (!Bytes.equals(rs.get(i - 1).getEndKey(), rs.get(i).getStartKey())) {
        return false;
      }
    }
    return true;
  }

  /** Waits until no region directory of the table holds a reference file. */
  static void awaitNoReferences(File data) throws InterruptedException {
    File tdir = new File(data, "data/default/" + TABLE.getNameAsString());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (true) {
      List<String> refs = new ArrayList<>();
      File[] regions = tdir.listFiles();
      for (File r : regions == null ? new File[0] : regions) {
        File[] fams = r.isDirectory() ? r.listFiles() : null;
        for (File fam : fams == null ? new File[0] : fams) {
          String[] names = fam.isDirectory() ? fam.list() : null;
          for (String n : names == null ? new String[0] : names) {
            if (!n.startsWith(".") && n.contains(".")) {
              refs.add(r.getName() + "/" + fam.getName() + "/" + n);
            }
          }
        }
      }
      if (refs.isEmpty()) {
        return;
      }
      if (System.nanoTime() > deadline) {
        check(false, "reference files still there after 120 s: " + refs);
      }
      Thread.sleep(200);
    }
  }

  /** The message chain of a failure, outermost first. */
  static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getClass().getName()).append(": ").append(c.getMessage()).append(" | ");
    }
    return sb.toString();
  }

  /** Puts a new value into column b of every 50th row and reads each back, all through t. */
  static void touchRows(Table t, String tag, byte[][] latest) throws IOException {
    for (int i = 0; i < ROWS; i += 50) {
      byte[] v = Bytes.toBytes(tag + i);
      t.put(new Put(row(i)).addColumn(F, B, v));
      latest[i] = v;
      Result r = t.get(new Get(row(i)));
      if (!Bytes.equals(r.getValue(F, B), v)) {
        check(false, tag + ": get of " + Bytes.toString(row(i)) + " after a put through the"
            + " same Table gave " + Bytes.toStringBinary(r.getValue(F, B)));
      }
    }
  }

  public static void main(String[] args) throws Exception {
    Configuration conf = HBaseConfiguration.create();
    List<String> rest = CountRows.registry(args, conf, USAGE);
    // Relocations after a split take a retry or two; leave room for more.
    conf.setInt("hbase.client.retries.number", 10);
    conf.setLong("hbase.client.pause", 100);
    if (rest.size() != 2 || !rest.get(0).equals("--data")) {
      CountRows.fail(USAGE, "name the server's data directory with --data");
    }
    File data = new File(rest.get(1));
    try (Connection conn = ConnectionFactory.createConnection(conf);
        Admin admin = conn.getAdmin()) {
      if (admin.tableExists(TABLE)) {
        admin.disableTable(TABLE);
        admin.deleteTable(TABLE);
      }
      // Small blocks: a region of a thousand rows has a middle block to split at.
      admin.createTable(TableDescriptorBuilder.newBuilder(TABLE)
          .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(F).setBlocksize(1024).build())
          .build());
      check(admin.isSplitEnabled() && admin.isMergeEnabled(),
          "the cluster's split and merge switches are on");
      check(admin.splitSwitch(true, true), "turning splits on: they were on");
      try {
        admin.mergeSwitch(false, true);
        check(false, "turning merges off was accepted by a server that cannot");
      } catch (IOException e) {
        check(messages(e).contains("no cluster-wide split or merge switch"),
            "turning merges off is refused: " + messages(e));
      }
      byte[][] latest = new byte[ROWS][];
      Table t = conn.getTable(TABLE);
      List<Put> puts = new ArrayList<>();
      for (int i = 0; i < ROWS; i++) {
        puts.add(new Put(row(i)).addColumn(F, A, Bytes.toBytes("v" + i)));
      }
      t.put(puts);
      touchRows(t, "before", latest);
      List<RegionInfo> before = regions(conn);
      check(before.size() == 1 && tiles(before), "one region before any split: " + show(before));

      // 1. Admin.split(table, row): the region containing the row splits there.
      byte[] mid = row(ROWS / 2);
      admin.split(TABLE, mid);
      RegionInfo parent = before.get(0);
      // The Table's cached location is still the parent's: the client must get
      // NotServingRegionException, look the row up again and retry. (Each step below writes
      // through the Table before asking the RegionLocator, which refreshes the cache.)
      RegionInfo now;
      try (RegionLocator l = conn.getRegionLocator(TABLE)) {
        RegionInfo cached = l.getRegionLocation(row(0), false).getRegion();
        check(cached.getEncodedName().equals(parent.getEncodedName()),
            "the client still caches the split parent " + cached.getEncodedName());
        touchRows(t, "after-split-at-row", latest);
        now = l.getRegionLocation(row(0), false).getRegion();
      }
      List<RegionInfo> two = regions(conn);
      check(two.size() == 2 && tiles(two) && Bytes.equals(two.get(0).getEndKey(), mid),
          "split at " + Bytes.toString(mid) + ": " + show(two));
      check(two.get(0).getRegionId() > parent.getRegionId()
          && two.get(0).getRegionId() == two.get(1).getRegionId(),
          "daughters share a region id later than their parent's");
      check(now.getEncodedName().equals(two.get(0).getEncodedName()),
          "after a put the client caches daughter " + now.getEncodedName());

      // 2. Admin.split(table): every region splits where the server picks.
      awaitNoReferences(data);
      admin.split(TABLE);
      touchRows(t, "after-split", latest);
      List<RegionInfo> four = regions(conn);
      check(four.size() == 4 && tiles(four) && Bytes.equals(four.get(1).getEndKey(), mid),
          "split without a row: " + show(four));

      // 3. Admin.mergeRegionsAsync: the first two regions merge into one with a later id.
      awaitNoReferences(data);
      RegionInfo m0 = four.get(0);
      RegionInfo m1 = four.get(1);
      admin.mergeRegionsAsync(new byte[][] {m0.getEncodedNameAsBytes(),
          m1.getEncodedNameAsBytes()}, false).get(60, TimeUnit.SECONDS);
      touchRows(t, "after-merge", latest);
      List<RegionInfo> three = regions(conn);
      check(three.size() == 3 && tiles(three) && Bytes.equals(three.get(0).getEndKey(), mid),
          "merged the first two: " + show(three));
      check(three.get(0).getRegionId() == Math.max(m0.getRegionId(), m1.getRegionId()) + 1,
          "the merged region's id is the larger parent id + 1");

      // 4. Admin.splitRegionAsync(region, row): the merged region splits again.
      awaitNoReferences(data);
      RegionInfo merged = three.get(0);
      byte[] inMerged = row(ROWS / 4);
      check(merged.containsRow(inMerged), "row " + Bytes.toString(inMerged) + " is in "
          + merged.getRegionNameAsString());
      admin.splitRegionAsync(merged.getRegionName(), inMerged).get(60, TimeUnit.SECONDS);
      touchRows(t, "after-split-region", latest);
      List<RegionInfo> again = regions(conn);
      check(again.size() == 4 && tiles(again)
          && Bytes.equals(again.get(0).getEndKey(), inMerged),
          "splitRegionAsync at " + Bytes.toString(inMerged) + ": " + show(again));

      // 5. HBase's refusals, with its texts.
      awaitNoReferences(data);
      RegionInfo last = again.get(again.size() - 1);
      try {
        admin.splitRegionAsync(last.getRegionName(), row(1)).get(60, TimeUnit.SECONDS);
        check(false, "a split row outside the region was accepted");
      } catch (ExecutionException | IOException e) {
        String m = messages(e);
        check(m.contains("DoNotRetryIOException")
            && m.contains("Split row is not inside region key range splitKey:r00001"),
            "a split row outside the region: " + m);
      }
      awaitNoReferences(data);
      try {
        admin.mergeRegionsAsync(new byte[][] {again.get(0).getEncodedNameAsBytes(),
            again.get(2).getEncodedNameAsBytes()}, false).get(60, TimeUnit.SECONDS);
        check(false, "a merge of regions that are not adjacent was accepted");
      } catch (ExecutionException | IOException e) {
        String m = messages(e);
        check(m.contains("MergeRegionException")
            && m.contains("Unable to merge non-adjacent or non-overlapping regions"),
            "a merge of regions that are not adjacent: " + m);
      }
      check(regions(conn).size() == 4, "the refused requests changed nothing");

      // 6. Every row once, in order, with its latest values, through the same Table.
      int n = 0;
      try (ResultScanner s = t.getScanner(new Scan())) {
        for (Result r : s) {
          if (n >= ROWS || !Bytes.equals(r.getRow(), row(n))) {
            check(false, "scan row " + n + " is " + Bytes.toStringBinary(r.getRow()));
          }
          if (!Bytes.equals(r.getValue(F, A), Bytes.toBytes("v" + n))
              || !Arrays.equals(r.getValue(F, B), latest[n])) {
            check(false, "scan row " + Bytes.toString(r.getRow()) + " has "
                + Bytes.toStringBinary(r.getValue(F, A)) + " / "
                + Bytes.toStringBinary(r.getValue(F, B)));
          }
          n++;
        }
      }
      check(n == ROWS, "a full scan returns every row exactly once: " + n + " of " + ROWS);
      t.close();
    }
    System.out.println("summary: all split and merge checks passed");
  }
}
