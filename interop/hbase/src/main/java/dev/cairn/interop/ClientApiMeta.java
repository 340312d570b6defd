package dev.cairn.interop;

import static dev.cairn.interop.ClientApiModel.b;
import static dev.cairn.interop.ClientApiModel.s;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter;

/**
 * {@code hbase:meta} read directly through the public client API, as tools and the client's
 * own locator read it: a table's region rows between {@code <table>,,} and
 * {@code <table> ,,} (meta's own row order, not byte order), the locator's reversed scan with
 * an inclusive stop row, an exclusive start row, the table-state row, columns, a filter, and
 * per-family limits. The main table's regions come from {@link ClientApiCheck#SPLITS}.
 */
final class ClientApiMeta {
  private static final byte[] INFO = HConstants.CATALOG_FAMILY;

  private ClientApiMeta() {
  }

  /** The start key of the region each row of {@code s} describes. */
  private static List<String> startKeys(Table meta, Scan s) throws Exception {
    List<String> out = new ArrayList<>();
    try (ResultScanner sc = meta.getScanner(s)) {
      for (Result r : sc) {
        RegionInfo ri = RegionInfo.parseFromOrNull(r.getValue(INFO, HConstants.REGIONINFO_QUALIFIER));
        out.add(ri == null ? "<no regioninfo>" : s(ri.getStartKey()));
      }
    }
    return out;
  }

  /** The qualifiers of a result's cells, in order. */
  private static List<String> qualifiers(Result r) {
    List<String> out = new ArrayList<>();
    if (r.rawCells() != null) {
      for (Cell cell : r.rawCells()) {
        out.add(s(CellUtil.cloneQualifier(cell)));
      }
    }
    return out;
  }

  static void run(ClientApiCheck c) {
    c.report.run("meta", () -> {
      try (Table meta = c.conn.getTable(TableName.META_TABLE_NAME)) {
        String tn = c.main.getNameAsString();
        List<String> starts = new ArrayList<>();
        starts.add("");
        starts.addAll(Arrays.asList(ClientApiCheck.SPLITS));

        Scan regions = new Scan().withStartRow(b(tn + ",,")).withStopRow(b(tn + " ,,"))
            .addColumn(INFO, HConstants.REGIONINFO_QUALIFIER);
        c.report.equal("meta scan of a table's region rows", starts, startKeys(meta, regions));

        // The locator: from the row's key down to the table's first region row, inclusive.
        byte[] firstRow = RegionInfo.createRegionName(c.main, HConstants.EMPTY_START_ROW, "",
            false);
        List<String> found = new ArrayList<>();
        List<String> want = new ArrayList<>();
        for (String row : new String[] {"", "r00000", "r02500", "r02499", "r06000", "r09990"}) {
          byte[] key = RegionInfo.createRegionName(c.main, b(row), HConstants.NINES, false);
          Scan locate = new Scan().withStartRow(key).withStopRow(firstRow, true).addFamily(INFO)
              .setReversed(true).setLimit(1);
          found.addAll(startKeys(meta, locate));
          String holder = "";
          for (String s : starts) {
            if (s.compareTo(row) <= 0) {
              holder = s;
            }
          }
          want.add(holder);
        }
        c.report.equal("meta reversed locator scans", want, found);

        // The region rows themselves; an exclusive start row leaves out the one it names.
        List<byte[]> rows = new ArrayList<>();
        try (ResultScanner sc = meta.getScanner(regions)) {
          for (Result r : sc) {
            rows.add(r.getRow());
          }
        }
        Scan after = new Scan().withStartRow(rows.get(1), false).withStopRow(b(tn + " ,,"))
            .addFamily(INFO);
        c.report.equal("meta scan from an exclusive start row", starts.subList(2, starts.size()),
            startKeys(meta, after));
        Scan down = new Scan().withStartRow(rows.get(2), false).withStopRow(rows.get(0), false)
            .addFamily(INFO).setReversed(true);
        c.report.equal("meta reversed scan between exclusive rows", starts.subList(1, 2),
            startKeys(meta, down));

        Result state = meta.get(new Get(b(tn)).addColumn(HConstants.TABLE_FAMILY,
            HConstants.TABLE_STATE_QUALIFIER));
        c.report.equal("meta get of the table state", List.of("state"), qualifiers(state));

        Scan first = new Scan().withStartRow(b(tn + ",,")).withStopRow(b(tn + " ,,"))
            .addFamily(INFO).setFilter(new FirstKeyOnlyFilter());
        List<Integer> cells = new ArrayList<>();
        try (ResultScanner sc = meta.getScanner(first)) {
          for (Result r : sc) {
            cells.add(r.rawCells().length);
          }
        }
        List<Integer> ones = new ArrayList<>();
        for (int i = 0; i < starts.size(); i++) {
          ones.add(1);
        }
        c.report.equal("meta scan with FirstKeyOnlyFilter", ones, cells);

        byte[] row = rows.get(1);
        List<String> all = qualifiers(meta.get(new Get(row).addFamily(INFO)));
        c.report.check("meta region row has its columns",
            all.containsAll(List.of("regioninfo", "server", "serverstartcode")),
            "regioninfo, server, serverstartcode among them", all.toString());
        c.report.equal("meta get setMaxResultsPerColumnFamily(2)", all.subList(0, 2),
            qualifiers(meta.get(new Get(row).addFamily(INFO).setMaxResultsPerColumnFamily(2))));
        c.report.equal("meta get offset 1 limit 2", all.subList(1, 3),
            qualifiers(meta.get(new Get(row).addFamily(INFO).setRowOffsetPerColumnFamily(1)
                .setMaxResultsPerColumnFamily(2))));
        c.report.throwsClass("meta get of a family meta lacks", "NoSuchColumnFamilyException",
            () -> meta.get(new Get(row).addFamily(b("nosuch"))));
      }
    });
  }
}
