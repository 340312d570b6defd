package dev.cairn.interop;

import static dev.cairn.interop.ClientApiCheck.A;
import static dev.cairn.interop.ClientApiCheck.B;
import static dev.cairn.interop.ClientApiModel.b;
import static dev.cairn.interop.ClientApiModel.s;
import static dev.cairn.interop.ClientApiWrites.add;
import static dev.cairn.interop.ClientApiWrites.numbered;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.function.Predicate;

import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.metrics.ScanMetrics;
import org.apache.hadoop.hbase.filter.BinaryComparator;
import org.apache.hadoop.hbase.filter.ColumnPrefixFilter;
import org.apache.hadoop.hbase.filter.FilterList;
import org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter;
import org.apache.hadoop.hbase.filter.KeyOnlyFilter;
import org.apache.hadoop.hbase.filter.PageFilter;
import org.apache.hadoop.hbase.filter.PrefixFilter;
import org.apache.hadoop.hbase.filter.QualifierFilter;
import org.apache.hadoop.hbase.filter.RegexStringComparator;
import org.apache.hadoop.hbase.filter.SingleColumnValueFilter;
import org.apache.hadoop.hbase.filter.ValueFilter;

import dev.cairn.interop.ClientApiModel.KV;
import dev.cairn.interop.ClientApiModel.Sel;

/** Gets (versions, time ranges, columns, multi-gets, exists) and scans (ranges, filters). */
final class ClientApiReads {
  /** The numbered rows' range: every row in {@code [r, s)} is one of them. */
  static final String LO = "r";
  static final String HI = "s";

  private ClientApiReads() {
  }

  static void run(ClientApiCheck c) throws Exception {
    try (Table t = c.mainTable()) {
      versions(c, t);
      perFamily(c, t);
      gets(c, t);
      scans(c, t);
      filters(c, t);
      batches(c, t);
      partials(c, t);
    }
    bulkScan(c);
  }

  private static List<KV> get(Table t, Get g) throws Exception {
    return ClientApiModel.cells(t.get(g));
  }

  /** Every cell a scan returns, in order. */
  static List<KV> scan(Table t, Scan s) throws Exception {
    List<KV> out = new ArrayList<>();
    try (ResultScanner sc = t.getScanner(s)) {
      for (Result r : sc) {
        out.addAll(ClientApiModel.cells(r));
      }
    }
    return out;
  }

  /** The row keys a scan returns, in order. */
  static List<String> scanRows(Table t, Scan s) throws Exception {
    List<String> out = new ArrayList<>();
    try (ResultScanner sc = t.getScanner(s)) {
      for (Result r : sc) {
        out.add(s(r.getRow()));
      }
    }
    return out;
  }

  /** The model's newest cells of {@code rows}. */
  static List<KV> cellsOf(ClientApiCheck c, List<String> rows) {
    List<KV> out = new ArrayList<>();
    for (String row : rows) {
      out.addAll(c.model.get(row));
    }
    return out;
  }

  /** The numbered rows the model holds in {@code [start, stop)}. */
  static List<String> numberedRows(ClientApiCheck c, String start, String stop) {
    return c.model.rows(start, stop);
  }

  private static void versions(ClientApiCheck c, Table t) {
    c.report.run("versions", () -> {
      long t0 = c.t0;
      // v-1: more versions than the families keep.
      Put p = new Put(b("v-1"));
      for (int v = 1; v <= 5; v++) {
        add(c, p, A, "q", t0 + v, "v" + v);
      }
      add(c, p, B, "q", t0 + 1, "b1");
      add(c, p, B, "q", t0 + 2, "b2");
      t.put(p);
      // v-2: no more versions than family a keeps, so time ranges have one answer.
      p = new Put(b("v-2"));
      for (int v = 1; v <= 3; v++) {
        add(c, p, A, "q", t0 + v, "v" + v);
      }
      add(c, p, A, "r", t0 + 2, "r2");
      add(c, p, B, "x", t0 + 1, "x1");
      t.put(p);

      Get g = new Get(b("v-1"));
      c.report.equal("get newest version", c.model.get("v-1"), get(t, g));
      c.report.equal("get readAllVersions capped at VERSIONS",
          c.model.get("v-1", new Sel().versions(Integer.MAX_VALUE)),
          get(t, new Get(b("v-1")).readAllVersions()));
      c.report.equal("get readVersions(2)", c.model.get("v-1", new Sel().versions(2)),
          get(t, new Get(b("v-1")).readVersions(2)));
      c.report.equal("get setTimeRange",
          c.model.get("v-2", new Sel().versions(Integer.MAX_VALUE).timeRange(t0 + 1, t0 + 3)),
          get(t, new Get(b("v-2")).readAllVersions().setTimeRange(t0 + 1, t0 + 3)));
      c.report.equal("get setTimestamp",
          c.model.get("v-2", new Sel().versions(Integer.MAX_VALUE).timestamp(t0 + 2)),
          get(t, new Get(b("v-2")).readAllVersions().setTimestamp(t0 + 2)));
      c.report.equal("get addColumn", c.model.get("v-2", new Sel().column(A, "r")),
          get(t, new Get(b("v-2")).addColumn(b(A), b("r"))));
      c.report.equal("get addFamily", c.model.get("v-2", new Sel().family(B)),
          get(t, new Get(b("v-2")).addFamily(b(B))));
      c.report.equal("get addColumn readVersions timeRange",
          c.model.get("v-2", new Sel().column(A, "q").versions(2).timeRange(t0 + 2, t0 + 10)),
          get(t, new Get(b("v-2")).addColumn(b(A), b("q")).readVersions(2)
              .setTimeRange(t0 + 2, t0 + 10)));
    });
  }

  /**
   * HBase's per-family limits (storeLimit and storeOffset) on gets and scans, over the rows
   * {@link #versions} wrote: family a holds several columns and versions, family b one cell.
   */
  private static void perFamily(ClientApiCheck c, Table t) {
    c.report.run("per-family limits", () -> {
      c.report.equal("get setMaxResultsPerColumnFamily(1)",
          c.model.get("v-2", new Sel().storeLimit(1)),
          get(t, new Get(b("v-2")).setMaxResultsPerColumnFamily(1)));
      c.report.equal("get readAllVersions setMaxResultsPerColumnFamily(2)",
          c.model.get("v-2", new Sel().versions(Integer.MAX_VALUE).storeLimit(2)),
          get(t, new Get(b("v-2")).readAllVersions().setMaxResultsPerColumnFamily(2)));
      c.report.equal("get readAllVersions setRowOffsetPerColumnFamily(2)",
          c.model.get("v-2", new Sel().versions(Integer.MAX_VALUE).storeOffset(2)),
          get(t, new Get(b("v-2")).readAllVersions().setRowOffsetPerColumnFamily(2)));
      c.report.equal("get offset 1 limit 1",
          c.model.get("v-2", new Sel().versions(Integer.MAX_VALUE).storeOffset(1).storeLimit(1)),
          get(t, new Get(b("v-2")).readAllVersions().setRowOffsetPerColumnFamily(1)
              .setMaxResultsPerColumnFamily(1)));
      c.report.equal("get setMaxResultsPerColumnFamily(0)",
          c.model.get("v-2", new Sel().storeLimit(0)),
          get(t, new Get(b("v-2")).setMaxResultsPerColumnFamily(0)));
      Sel sel = new Sel().versions(Integer.MAX_VALUE).storeOffset(1).storeLimit(2);
      List<KV> want = new ArrayList<>();
      for (String row : c.model.rows("v-", "v.")) {
        want.addAll(c.model.get(row, sel));
      }
      c.report.equal("scan offset 1 limit 2", want, scan(t, new Scan().withStartRow(b("v-"))
          .withStopRow(b("v.")).readAllVersions().setRowOffsetPerColumnFamily(1)
          .setMaxResultsPerColumnFamily(2)));
    });
  }

  private static void gets(ClientApiCheck c, Table t) {
    c.report.run("gets", () -> {
      Result missing = t.get(new Get(b("r00005")));
      c.report.check("get missing row", missing.isEmpty() && missing.getRow() == null,
          "an empty Result", missing.toString());

      String present = numbered(7);
      c.report.equal("exists true", true, t.exists(new Get(b(present))));
      c.report.equal("exists false", false, t.exists(new Get(b("r00005"))));

      // 100 rows over all four regions, every fifth one missing.
      List<Get> gets = new ArrayList<>();
      List<String> rows = new ArrayList<>();
      for (int k = 0; k < 100; k++) {
        String row = String.format("r%05d", k * 100 + (k % 5 == 0 ? 5 : 0));
        rows.add(row);
        gets.add(new Get(b(row)));
      }
      List<List<KV>> want = new ArrayList<>();
      List<Boolean> wantExists = new ArrayList<>();
      for (String row : rows) {
        want.add(c.model.get(row));
        wantExists.add(!c.model.get(row).isEmpty());
      }
      Result[] results = t.get(gets);
      List<List<KV>> have = new ArrayList<>();
      for (Result r : results) {
        have.add(ClientApiModel.cells(r));
      }
      c.report.equal("get list of 100 across regions", want, have);
      boolean[] exists = t.exists(gets);
      List<Boolean> haveExists = new ArrayList<>();
      for (boolean e : exists) {
        haveExists.add(e);
      }
      c.report.equal("exists list (existsAll)", wantExists, haveExists);
    });
  }

  private static void scans(ClientApiCheck c, Table t) {
    c.report.run("scans", () -> {
      c.report.equal("scan numbered rows", cellsOf(c, numberedRows(c, LO, HI)),
          scan(t, new Scan().withStartRow(b(LO)).withStopRow(b(HI))));

      List<String> range = numberedRows(c, "r02000", "r05500");
      c.report.equal("scan start/stop across regions", cellsOf(c, range),
          scan(t, new Scan().withStartRow(b("r02000")).withStopRow(b("r05500"))));

      Scan cached = new Scan().withStartRow(b("r02000")).withStopRow(b("r03000")).setCaching(7)
          .setScanMetricsEnabled(true);
      List<String> want = numberedRows(c, "r02000", "r03000");
      long rpcs;
      try (ResultScanner sc = t.getScanner(cached)) {
        List<String> got = new ArrayList<>();
        for (Result r : sc) {
          got.add(s(r.getRow()));
        }
        c.report.equal("scan caching 7 rows", want, got);
        ScanMetrics m = sc.getScanMetrics();
        rpcs = m == null ? -1 : m.countOfRPCcalls.get();
      }
      int atLeast = (want.size() + 6) / 7;
      c.report.note("scan of " + want.size() + " rows with caching 7: " + rpcs + " scan RPCs");
      c.report.check("scan caching 7 calls", rpcs >= atLeast, ">= " + atLeast + " scan RPCs",
          Long.toString(rpcs));

      // Reversed: start row inclusive, stop row exclusive, descending.
      List<String> rev = new ArrayList<>(numberedRows(c, "r02000\0", "r05500\0"));
      Collections.reverse(rev);
      c.report.equal("scan reversed", rev, scanRows(t, new Scan().withStartRow(b("r05500"))
          .withStopRow(b("r02000")).setReversed(true)));

      List<String> from = numberedRows(c, "r02400", HI);
      c.report.equal("scan setLimit 13", from.subList(0, 13),
          scanRows(t, new Scan().withStartRow(b("r02400")).setLimit(13)));

      c.report.equal("scan start exclusive stop inclusive",
          numberedRows(c, "r02490\0", "r02530\0"), scanRows(t,
              new Scan().withStartRow(b("r02490"), false).withStopRow(b("r02530"), true)));

      // Reversed, across the region edge r02500: down from below r02530 to r02490 itself.
      List<String> down = new ArrayList<>(numberedRows(c, "r02490", "r02530"));
      Collections.reverse(down);
      c.report.equal("scan reversed start exclusive stop inclusive", down, scanRows(t,
          new Scan().withStartRow(b("r02530"), false).withStopRow(b("r02490"), true)
              .setReversed(true)));
    });
  }

  /** The model's newest cells of the numbered rows, kept where {@code keep} says. */
  private static List<KV> cellsWhere(ClientApiCheck c, Predicate<KV> keep) {
    List<KV> out = new ArrayList<>();
    for (KV kv : cellsOf(c, numberedRows(c, LO, HI))) {
      if (keep.test(kv)) {
        out.add(kv);
      }
    }
    return out;
  }

  private static Scan numberedScan() {
    return new Scan().withStartRow(b(LO)).withStopRow(b(HI));
  }

  private static void filters(ClientApiCheck c, Table t) {
    c.report.run("filters", () -> {
      c.report.equal("filter PrefixFilter", cellsWhere(c, kv -> kv.row().startsWith("r001")),
          scan(t, numberedScan().setFilter(new PrefixFilter(b("r001")))));

      // Rows whose b:n is "3" (rows without b:n would pass too; every numbered row has one).
      Predicate<String> n3 = row -> {
        String n = c.model.latest(row, B, "n");
        return n == null || n.equals("3");
      };
      c.report.equal("filter SingleColumnValueFilter", cellsWhere(c, kv -> n3.test(kv.row())),
          scan(t, numberedScan().setFilter(
              new SingleColumnValueFilter(b(B), b("n"), CompareOperator.EQUAL, b("3")))));

      // PageFilter counts rows per region scanner: up to 5 rows from each region.
      List<String> paged = new ArrayList<>();
      List<String> bounds = new ArrayList<>(Arrays.asList(ClientApiCheck.SPLITS));
      bounds.add(0, LO);
      bounds.add(HI);
      for (int i = 0; i + 1 < bounds.size(); i++) {
        List<String> inRegion = numberedRows(c, bounds.get(i), bounds.get(i + 1));
        paged.addAll(inRegion.subList(0, Math.min(5, inRegion.size())));
      }
      c.report.equal("filter PageFilter(5) per region", paged,
          scanRows(t, numberedScan().setFilter(new PageFilter(5))));

      List<KV> keysOnly = new ArrayList<>();
      for (KV kv : cellsWhere(c, kv -> true)) {
        keysOnly.add(kv.keyOnly());
      }
      c.report.equal("filter KeyOnlyFilter", keysOnly,
          scan(t, numberedScan().setFilter(new KeyOnlyFilter())));

      List<KV> firsts = new ArrayList<>();
      for (String row : numberedRows(c, LO, HI)) {
        firsts.add(c.model.get(row).get(0));
      }
      c.report.equal("filter FirstKeyOnlyFilter", firsts,
          scan(t, numberedScan().setFilter(new FirstKeyOnlyFilter())));

      c.report.equal("filter ValueFilter", cellsWhere(c, kv -> kv.value().equals("val-42")),
          scan(t, numberedScan().setFilter(
              new ValueFilter(CompareOperator.EQUAL, new BinaryComparator(b("val-42"))))));

      c.report.equal("filter ColumnPrefixFilter",
          cellsWhere(c, kv -> kv.qualifier().startsWith("ta")),
          scan(t, numberedScan().setFilter(new ColumnPrefixFilter(b("ta")))));

      FilterList all = new FilterList(FilterList.Operator.MUST_PASS_ALL,
          new PrefixFilter(b("r00")),
          new SingleColumnValueFilter(b(B), b("n"), CompareOperator.EQUAL, b("3")));
      c.report.equal("filter FilterList MUST_PASS_ALL",
          cellsWhere(c, kv -> kv.row().startsWith("r00") && n3.test(kv.row())),
          scan(t, numberedScan().setFilter(all)));

      FilterList one = new FilterList(FilterList.Operator.MUST_PASS_ONE,
          new ValueFilter(CompareOperator.EQUAL, new BinaryComparator(b("val-42"))),
          new QualifierFilter(CompareOperator.EQUAL, new BinaryComparator(b("n"))));
      c.report.equal("filter FilterList MUST_PASS_ONE",
          cellsWhere(c, kv -> kv.value().equals("val-42") || kv.qualifier().equals("n")),
          scan(t, numberedScan().setFilter(one)));

      c.report.equal("filter QualifierFilter regex",
          cellsWhere(c, kv -> kv.qualifier().matches("^t.g$")),
          scan(t, numberedScan().setFilter(new QualifierFilter(CompareOperator.EQUAL,
              new RegexStringComparator("^t.g$")))));
    });
  }

  /** Wide rows read with setBatch: each row comes back in Results of at most 2 cells. */
  private static void batches(ClientApiCheck c, Table t) {
    c.report.run("scan setBatch", () -> {
      List<Put> puts = new ArrayList<>();
      for (int r = 0; r < 3; r++) {
        Put p = new Put(b("w-" + r));
        for (int q = 0; q < 5; q++) {
          add(c, p, A, "c" + q, c.t0, "w" + r + q);
        }
        puts.add(p);
      }
      t.put(puts);
      List<String> want = new ArrayList<>();
      for (String row : c.model.rows("w-", "w.")) {
        int n = c.model.get(row).size();
        for (int done = 0; done < n; done += 2) {
          want.add(row + ":" + Math.min(2, n - done));
        }
      }
      List<String> got = new ArrayList<>();
      List<KV> cells = new ArrayList<>();
      try (ResultScanner sc = t.getScanner(new Scan().withStartRow(b("w-"))
          .withStopRow(b("w.")).setBatch(2))) {
        for (Result r : sc) {
          got.add(s(r.getRow()) + ":" + r.size());
          cells.addAll(ClientApiModel.cells(r));
        }
      }
      c.report.equal("scan setBatch partial rows", want, got);
      c.report.equal("scan setBatch cells", cellsOf(c, c.model.rows("w-", "w.")), cells);
    });
  }

  /**
   * Rows larger than the scan's maxResultSize: the server may send them in parts flagged
   * partial; without setAllowPartialResults the client must hand back whole rows.
   */
  private static void partials(ClientApiCheck c, Table t) {
    c.report.run("scan maxResultSize wide rows", () -> {
      List<Put> puts = new ArrayList<>();
      for (int r = 0; r < 3; r++) {
        Put p = new Put(b("wide-" + r));
        for (int q = 0; q < 30; q++) {
          add(c, p, A, String.format("c%02d", q), c.t0, "p" + r + q + "-".repeat(1000));
        }
        puts.add(p);
      }
      t.put(puts);
      List<String> want = new ArrayList<>();
      for (String row : c.model.rows("wide-", "wide.")) {
        want.add(row + ":" + c.model.get(row).size());
      }
      List<String> got = new ArrayList<>();
      List<KV> cells = new ArrayList<>();
      try (ResultScanner sc = t.getScanner(new Scan().withStartRow(b("wide-"))
          .withStopRow(b("wide.")).setMaxResultSize(8_000).setCaching(100))) {
        for (Result r : sc) {
          got.add(s(r.getRow()) + ":" + r.size());
          cells.addAll(ClientApiModel.cells(r));
        }
      }
      c.report.equal("scan maxResultSize whole rows", want, got);
      c.report.equal("scan maxResultSize cells", cellsOf(c, c.model.rows("wide-", "wide.")), cells);
      // With partial results allowed the parts arrive as the server cut them.
      int parts = 0;
      int total = 0;
      try (ResultScanner sc = t.getScanner(new Scan().withStartRow(b("wide-"))
          .withStopRow(b("wide.")).setMaxResultSize(8_000).setAllowPartialResults(true))) {
        for (Result r : sc) {
          parts++;
          total += r.size();
        }
      }
      c.report.equal("scan allowPartialResults cells", 90, total);
      c.report.check("scan allowPartialResults parts", parts > 3, "more than 3 parts", "" + parts);
    });
  }

  /** 5,000 rows of the bulk table across a region boundary, every row and value checked. */
  private static void bulkScan(ClientApiCheck c) {
    c.report.run("scan 5000 rows", () -> {
      int first = 8_000;
      int n = 5_000;
      List<String> want = new ArrayList<>();
      for (int i = first; i < first + n; i++) {
        want.add(ClientApiWrites.bulkRow(i) + "=" + ClientApiWrites.bulkValue(i));
      }
      List<String> got = new ArrayList<>();
      try (Table t = c.conn.getTable(c.bulk);
          ResultScanner sc = t.getScanner(new Scan()
              .withStartRow(b(ClientApiWrites.bulkRow(first)))
              .withStopRow(b(ClientApiWrites.bulkRow(first + n))))) {
        for (Result r : sc) {
          got.add(s(r.getRow()) + "=" + s(r.getValue(b(A), b("q"))));
        }
      }
      c.report.equal("scan 5000 rows count", want.size(), got.size());
      c.report.equal("scan 5000 rows", want, got);
    });
  }
}
