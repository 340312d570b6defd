package dev.cairn.interop;

import java.io.BufferedReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellComparator;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.filter.Filter;
import org.apache.hadoop.hbase.filter.ParseFilter;

/**
 * HBase 2.6's ParseFilter and filter classes, driven over a sorted list of cells in the region
 * scanner's call order (RegionScannerImpl.nextInternal, FilterWrapper, StoreScanner.next,
 * UserScanQueryMatcher.mergeFilterResponse with the wildcard column tracker). cairn-filter's
 * differential test runs the same cases through its own parser and filters.
 *
 * <p>Input file: {@code CELL hexRow hexFamily hexQualifier ts hexValue} lines (sorted; "-" is
 * empty), then {@code CASE hexFilterString maxVersions} lines. Output per case: {@code ERROR i}
 * if the string does not parse, else {@code KEEP i row family qualifier ts value} per kept cell
 * and {@code END i stoppedEarly}.
 */
public final class FilterInterop {
  private FilterInterop() {
  }

  private static byte[] unhex(String s) {
    if (s.equals("-")) {
      return new byte[0];
    }
    byte[] out = new byte[s.length() / 2];
    for (int i = 0; i < out.length; i++) {
      out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    }
    return out;
  }

  private static String hex(byte[] b, int off, int len) {
    if (len == 0) {
      return "-";
    }
    StringBuilder sb = new StringBuilder();
    for (int i = off; i < off + len; i++) {
      sb.append(String.format("%02x", b[i] & 0xff));
    }
    return sb.toString();
  }

  public static void main(String[] args) throws Exception {
    List<Cell> cells = new ArrayList<>();
    int caseNo = 0;
    StringBuilder out = new StringBuilder();
    try (BufferedReader r = Files.newBufferedReader(Paths.get(args[0]), StandardCharsets.UTF_8)) {
      String line;
      while ((line = r.readLine()) != null) {
        String[] p = line.split(" ");
        if (p[0].equals("CELL")) {
          cells.add(new KeyValue(unhex(p[1]), unhex(p[2]), unhex(p[3]), Long.parseLong(p[4]),
            KeyValue.Type.Put, unhex(p[5])));
        } else if (p[0].equals("CASE")) {
          String text = new String(unhex(p[1]), StandardCharsets.UTF_8);
          int maxVersions = Integer.parseInt(p[2]);
          Filter filter;
          try {
            filter = new ParseFilter().parseFilterString(text);
          } catch (Throwable t) {
            out.append("ERROR ").append(caseNo).append('\n');
            caseNo++;
            continue;
          }
          run(caseNo, filter, cells, maxVersions, out);
          caseNo++;
        }
      }
    }
    System.out.print(out);
    System.out.flush();
  }

  private static void run(int caseNo, Filter f, List<Cell> cells, int maxVersions,
    StringBuilder out) throws Exception {
    boolean stopped = false;
    int start = 0;
    while (start < cells.size()) {
      Cell first = cells.get(start);
      int end = start;
      while (end < cells.size() && CellUtil.matchingRows(cells.get(end), first)) {
        end++;
      }
      f.reset();
      if (f.filterAllRemaining() || f.filterRowKey(first)) {
        if (f.filterAllRemaining()) {
          stopped = true;
          break;
        }
        start = end;
        continue;
      }
      List<Cell> results = new ArrayList<>();
      boolean doneScan = false;
      Cell column = null;
      int count = 0;
      int i = start;
      while (i < end) {
        Cell c = cells.get(i);
        if (f.filterAllRemaining()) {
          doneScan = true;
          break;
        }
        Filter.ReturnCode rc = f.filterCell(c);
        switch (rc) {
          case SKIP:
            i++;
            break;
          case NEXT_COL:
            i = skipColumn(cells, i, end, c);
            break;
          case NEXT_ROW:
            i = skipFamily(cells, i, end, c);
            break;
          case SEEK_NEXT_USING_HINT: {
            Cell hint = f.getNextCellHint(c);
            if (hint != null && CellComparator.getInstance().compare(hint, c) > 0) {
              int familyEnd = skipFamily(cells, i, end, c);
              i++;
              while (i < familyEnd && CellComparator.getInstance().compare(cells.get(i), hint) < 0) {
                i++;
              }
            } else {
              i++;
            }
            break;
          }
          default: {
            if (column == null || !CellUtil.matchingColumn(column, c)) {
              column = c;
              count = 0;
            }
            count++;
            if (count > maxVersions) {
              i = rc == Filter.ReturnCode.INCLUDE_AND_SEEK_NEXT_ROW
                ? skipFamily(cells, i, end, c)
                : skipColumn(cells, i, end, c);
            } else {
              results.add(f.transformCell(c));
              if (rc == Filter.ReturnCode.INCLUDE_AND_NEXT_COL) {
                i = skipColumn(cells, i, end, c);
              } else if (rc == Filter.ReturnCode.INCLUDE_AND_SEEK_NEXT_ROW) {
                i = skipFamily(cells, i, end, c);
              } else {
                i++;
              }
            }
          }
        }
      }
      boolean isEmptyRow = results.isEmpty();
      boolean excluded;
      if (f.hasFilterRow()) {
        f.filterRowCells(results);
        excluded = !results.isEmpty() && f.filterRow();
      } else {
        excluded = !isEmptyRow && f.filterRow();
      }
      if (!isEmptyRow && !excluded) {
        for (Cell c : results) {
          out.append("KEEP ").append(caseNo).append(' ')
            .append(hex(c.getRowArray(), c.getRowOffset(), c.getRowLength())).append(' ')
            .append(hex(c.getFamilyArray(), c.getFamilyOffset(), c.getFamilyLength())).append(' ')
            .append(hex(c.getQualifierArray(), c.getQualifierOffset(), c.getQualifierLength()))
            .append(' ').append(c.getTimestamp()).append(' ')
            .append(hex(c.getValueArray(), c.getValueOffset(), c.getValueLength())).append('\n');
        }
      }
      start = end;
      // RegionScannerImpl.nextRaw: resetFilters() after each row, then isFilterDone().
      if (doneScan) {
        stopped = true;
        break;
      }
      f.reset();
      if (f.filterAllRemaining()) {
        stopped = start < cells.size();
        break;
      }
    }
    out.append("END ").append(caseNo).append(' ').append(stopped).append('\n');
  }

  private static int skipColumn(List<Cell> cells, int i, int end, Cell c) {
    while (i < end && CellUtil.matchingColumn(cells.get(i), c)) {
      i++;
    }
    return i;
  }

  private static int skipFamily(List<Cell> cells, int i, int end, Cell c) {
    while (i < end && CellUtil.matchingFamily(cells.get(i), c)) {
      i++;
    }
    return i;
  }
}
