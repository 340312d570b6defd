package dev.cairn.interop;

import static dev.cairn.interop.ClientApiCheck.A;
import static dev.cairn.interop.ClientApiModel.b;

import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Table;

/**
 * Errors the server must report the way HBase does, each followed by a successful Get: a
 * failed call must leave the connection usable.
 */
final class ClientApiErrors {
  private ClientApiErrors() {
  }

  /** A Get of a row written earlier, compared with the model. */
  private static void stillWorks(ClientApiCheck c, Table t, String after) {
    c.report.run("get after " + after, () -> ClientApiWrites.compareRow(c, t,
        "get after " + after, "s-1"));
  }

  static void run(ClientApiCheck c) throws Exception {
    try (Table t = c.mainTable()) {
      c.report.throwsClass("put to missing family", "NoSuchColumnFamilyException",
          () -> t.put(new Put(b("e-single")).addColumn(b("zz"), b("q"), b("v"))));
      stillWorks(c, t, "put to missing family");

      // A batch with one bad Put: the others are applied all the same.
      List<Put> puts = new ArrayList<>();
      List<String> good = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        String row = "e-" + i;
        if (i == 4) {
          puts.add(new Put(b(row)).addColumn(b("zz"), b("q"), b("bad")));
        } else {
          puts.add(ClientApiWrites.add(c, new Put(b(row)), A, "q", c.t0, "good" + i));
          good.add(row);
        }
      }
      c.report.throwsClass("batch put with a missing family", "NoSuchColumnFamilyException",
          () -> t.put(puts));
      c.report.run("batch put good rows applied", () -> {
        for (int i = 0; i < 10; i++) {
          ClientApiWrites.compareRow(c, t, "batch put row e-" + i, "e-" + i);
        }
      });
      stillWorks(c, t, "batch put with a missing family");
    }

    TableName missing = TableName.valueOf(c.main.getNameAsString() + "_nosuch");
    try (Table m = c.conn.getTable(missing)) {
      c.report.throwsClass("get on missing table", "TableNotFoundException",
          () -> m.get(new Get(b("x"))));
    }
    try (Table t = c.mainTable()) {
      stillWorks(c, t, "get on missing table");
    }
  }
}
