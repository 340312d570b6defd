package dev.cairn.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.client.Result;

/**
 * What {@link ClientApiCheck} wrote to one table, kept on the client: every expectation is
 * computed from here, never from a server's answer.
 *
 * <p>Bytes are held as ISO-8859-1 strings: one char per byte, so {@code String.compareTo}
 * orders keys as HBase's unsigned byte comparison does. Every tracked cell carries an explicit
 * timestamp chosen by the program, so versions are exact. Reads cap versions at the family's
 * VERSIONS; the checks never ask a time range of a column holding more versions than that
 * (which HBase answers differently before and after a flush).
 */
final class ClientApiModel {
  /** One cell as both the model and a {@link Result} print it. */
  record KV(String row, String family, String qualifier, long ts, String value) {
    @Override
    public String toString() {
      return row + "/" + family + ":" + qualifier + "@" + ts + "=" + value;
    }

    /** The same cell with its value emptied, as KeyOnlyFilter returns it. */
    KV keyOnly() {
      return new KV(row, family, qualifier, ts, "");
    }
  }

  /** Which cells a read wants: a Get's or Scan's column and version selection. */
  static final class Sel {
    /** Whole families asked for; with {@link #columns} both empty, everything. */
    final Set<String> families = new TreeSet<>();
    /** {@code family:qualifier} columns asked for. */
    final Set<String> columns = new TreeSet<>();
    int versions = 1;
    long minTs = 0;
    long maxTs = Long.MAX_VALUE;
    /** HBase's storeLimit ({@code setMaxResultsPerColumnFamily}); -1 for none. */
    int storeLimit = -1;
    /** HBase's storeOffset ({@code setRowOffsetPerColumnFamily}). */
    int storeOffset = 0;

    Sel family(String f) {
      families.add(f);
      return this;
    }

    Sel column(String f, String q) {
      columns.add(f + ":" + q);
      return this;
    }

    Sel versions(int n) {
      versions = n;
      return this;
    }

    /** HBase's time range: min inclusive, max exclusive. */
    Sel timeRange(long min, long max) {
      minTs = min;
      maxTs = max;
      return this;
    }

    Sel timestamp(long ts) {
      return timeRange(ts, ts + 1);
    }

    /** At most {@code n} cells of each family (after the offset). */
    Sel storeLimit(int n) {
      storeLimit = n;
      return this;
    }

    /** The first {@code n} cells of each family left out. */
    Sel storeOffset(int n) {
      storeOffset = n;
      return this;
    }

    boolean wants(String f, String q) {
      if (families.isEmpty() && columns.isEmpty()) {
        return true;
      }
      return families.contains(f) || columns.contains(f + ":" + q);
    }
  }

  /** row -> family -> qualifier -> timestamp (newest first) -> value. */
  private final TreeMap<String, TreeMap<String, TreeMap<String, TreeMap<Long, String>>>> rows =
      new TreeMap<>();
  private final Map<String, Integer> maxVersions;

  /** {@code maxVersions}: each family's VERSIONS as the table was created with. */
  ClientApiModel(Map<String, Integer> maxVersions) {
    this.maxVersions = maxVersions;
  }

  static String s(byte[] b) {
    return b == null ? "" : new String(b, StandardCharsets.ISO_8859_1);
  }

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  void put(String row, String family, String qualifier, long ts, String value) {
    rows.computeIfAbsent(row, k -> new TreeMap<>())
        .computeIfAbsent(family, k -> new TreeMap<>())
        .computeIfAbsent(qualifier, k -> new TreeMap<>(Collections.reverseOrder()))
        .put(ts, value);
  }

  void deleteRow(String row) {
    rows.remove(row);
  }

  void deleteFamily(String row, String family) {
    Map<String, TreeMap<String, TreeMap<Long, String>>> r = rows.get(row);
    if (r != null) {
      r.remove(family);
    }
    tidy(row);
  }

  /** Every column of the family loses its cell at exactly {@code ts}. */
  void deleteFamilyVersion(String row, String family, long ts) {
    TreeMap<String, TreeMap<Long, String>> f = family(row, family);
    if (f != null) {
      f.values().forEach(versions -> versions.remove(ts));
    }
    tidy(row);
  }

  /** All versions of one column. */
  void deleteColumns(String row, String family, String qualifier) {
    TreeMap<String, TreeMap<Long, String>> f = family(row, family);
    if (f != null) {
      f.remove(qualifier);
    }
    tidy(row);
  }

  /** The newest version of one column (a Delete.addColumn without a timestamp). */
  void deleteLatest(String row, String family, String qualifier) {
    TreeMap<Long, String> v = versions(row, family, qualifier);
    if (v != null && !v.isEmpty()) {
      v.pollFirstEntry();
    }
    tidy(row);
  }

  /** One version of one column. */
  void deleteVersion(String row, String family, String qualifier, long ts) {
    TreeMap<Long, String> v = versions(row, family, qualifier);
    if (v != null) {
      v.remove(ts);
    }
    tidy(row);
  }

  /** The newest value of a column, or null. */
  String latest(String row, String family, String qualifier) {
    TreeMap<Long, String> v = versions(row, family, qualifier);
    return v == null || v.isEmpty() ? null : v.firstEntry().getValue();
  }

  /** The cells a Get of {@code row} with {@code sel} returns, in HBase's cell order. */
  List<KV> get(String row, Sel sel) {
    List<KV> out = new ArrayList<>();
    TreeMap<String, TreeMap<String, TreeMap<Long, String>>> r = rows.get(row);
    if (r == null) {
      return out;
    }
    for (Map.Entry<String, TreeMap<String, TreeMap<Long, String>>> f : r.entrySet()) {
      int cap = Math.min(sel.versions, maxVersions.getOrDefault(f.getKey(), 1));
      // Every cell the read selects counts against the family's storeOffset and storeLimit,
      // each version on its own (HBase's StoreScanner counts what its matcher includes). The
      // family stops once a cell is returned at count >= offset + limit: a limit of 0 returns
      // one cell, as HBase 2's StoreScanner does.
      int counted = 0;
      boolean full = false;
      for (Map.Entry<String, TreeMap<Long, String>> q : f.getValue().entrySet()) {
        if (!sel.wants(f.getKey(), q.getKey())) {
          continue;
        }
        int n = 0;
        for (Map.Entry<Long, String> v : q.getValue().entrySet()) {
          if (v.getKey() < sel.minTs || v.getKey() >= sel.maxTs) {
            continue;
          }
          if (n++ >= cap) {
            break;
          }
          if (full) {
            break;
          }
          counted++;
          if (counted <= sel.storeOffset) {
            continue;
          }
          out.add(new KV(row, f.getKey(), q.getKey(), v.getKey(), v.getValue()));
          full = sel.storeLimit >= 0 && counted >= sel.storeOffset + sel.storeLimit;
        }
      }
    }
    return out;
  }

  /** The newest version of every column of {@code row}. */
  List<KV> get(String row) {
    return get(row, new Sel());
  }

  /** The rows in {@code [start, stop)} that hold any cell; an empty stop means no end. */
  List<String> rows(String start, String stop) {
    NavigableMap<String, ?> m = stop.isEmpty() ? rows.tailMap(start, true)
        : rows.subMap(start, true, stop, false);
    return new ArrayList<>(m.keySet());
  }

  /** A Result's cells, printed as the model prints its own. */
  static List<KV> cells(Result r) {
    List<KV> out = new ArrayList<>();
    if (r == null || r.rawCells() == null) {
      return out;
    }
    for (Cell c : r.rawCells()) {
      out.add(new KV(s(CellUtil.cloneRow(c)), s(CellUtil.cloneFamily(c)),
          s(CellUtil.cloneQualifier(c)), c.getTimestamp(), s(CellUtil.cloneValue(c))));
    }
    return out;
  }

  private TreeMap<String, TreeMap<Long, String>> family(String row, String family) {
    TreeMap<String, TreeMap<String, TreeMap<Long, String>>> r = rows.get(row);
    return r == null ? null : r.get(family);
  }

  private TreeMap<Long, String> versions(String row, String family, String qualifier) {
    TreeMap<String, TreeMap<Long, String>> f = family(row, family);
    return f == null ? null : f.get(qualifier);
  }

  /** Drops empty columns, families and rows, so a deleted row reads as absent. */
  private void tidy(String row) {
    TreeMap<String, TreeMap<String, TreeMap<Long, String>>> r = rows.get(row);
    if (r == null) {
      return;
    }
    for (TreeMap<String, TreeMap<Long, String>> f : r.values()) {
      f.values().removeIf(Map::isEmpty);
    }
    r.values().removeIf(Map::isEmpty);
    if (r.isEmpty()) {
      rows.remove(row);
    }
  }
}
