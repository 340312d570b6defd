package dev.cairn.interop;

import static dev.cairn.interop.ClientApiCheck.A;
import static dev.cairn.interop.ClientApiCheck.B;
import static dev.cairn.interop.ClientApiModel.b;
import static dev.cairn.interop.ClientApiModel.s;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.BufferedMutatorParams;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.CheckAndMutateResult;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.RowMutations;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

/** Puts, BufferedMutator, every Delete kind, Increment, Append, checkAndMutate, mutateRow. */
final class ClientApiWrites {
  /** The numbered rows {@code r00000, r00010, ..., r09990}: all four regions. */
  static final int NUMBERED = 1000;
  /** Rows the BufferedMutator writes to the bulk table. */
  static final int BULK = 30_000;

  private ClientApiWrites() {
  }

  /** Row {@code i} of the numbered rows. */
  static String numbered(int i) {
    return String.format("r%05d", i * 10);
  }

  /** Row {@code i} of the bulk table, and its value. */
  static String bulkRow(int i) {
    return String.format("r%05d", i);
  }

  static String bulkValue(int i) {
    return "b" + (i * 7919 % 100_000);
  }

  static void run(ClientApiCheck c) throws Exception {
    try (Table t = c.mainTable()) {
      single(c, t);
      batch(c, t);
      deletes(c, t);
      increments(c, t);
      appends(c, t);
      checkAndMutate(c, t);
      mutateRow(c, t);
    }
    bufferedMutator(c);
  }

  /** Adds {@code family:qualifier=value@ts} to the Put and to the model. */
  static Put add(ClientApiCheck c, Put p, String family, String qualifier, long ts,
      String value) {
    c.model.put(s(p.getRow()), family, qualifier, ts, value);
    return p.addColumn(b(family), b(qualifier), ts, b(value));
  }

  /** A Get of every version of {@code row} compared with the model. */
  static void compareRow(ClientApiCheck c, Table t, String name, String row) throws Exception {
    Result got = t.get(new Get(b(row)).readAllVersions());
    c.report.equal(name, c.model.get(row, new ClientApiModel.Sel().versions(Integer.MAX_VALUE)),
        ClientApiModel.cells(got));
  }

  private static void single(ClientApiCheck c, Table t) {
    c.report.run("put single", () -> {
      Put p = new Put(b("s-1"));
      add(c, p, A, "q", c.t0 + 1, "single");
      add(c, p, B, "n", c.t0 + 1, "1");
      t.put(p);
      compareRow(c, t, "put single", "s-1");
    });
  }

  private static void batch(ClientApiCheck c, Table t) {
    c.report.run("put batch", () -> {
      List<Put> puts = new ArrayList<>();
      for (int i = 0; i < NUMBERED; i++) {
        Put p = new Put(b(numbered(i)));
        add(c, p, A, "q", c.t0, "val-" + i);
        add(c, p, B, "n", c.t0, Integer.toString(i % 10));
        if (i % 2 == 0) {
          add(c, p, A, "tag", c.t0, "t" + (i % 4));
        }
        puts.add(p);
      }
      t.put(puts);
      // The first and last row of each region read back one by one (Reads scans them all).
      for (int i : new int[] {0, 249, 250, 499, 500, 749, 750, 999}) {
        String row = numbered(i);
        c.report.equal("put batch get " + row, c.model.get(row),
            ClientApiModel.cells(t.get(new Get(b(row)))));
      }
    });
  }

  /** A row with 3 versions of a:q1, 2 of a:q2 and one b:q1, for one Delete kind each. */
  private static void deleteRow(ClientApiCheck c, Table t, String row) throws Exception {
    Put p = new Put(b(row));
    for (int v = 1; v <= 3; v++) {
      add(c, p, A, "q1", c.t0 + v, "v" + v);
    }
    add(c, p, A, "q2", c.t0 + 1, "w1");
    add(c, p, A, "q2", c.t0 + 2, "w2");
    add(c, p, B, "q1", c.t0 + 2, "x2");
    t.put(p);
  }

  private static void deletes(ClientApiCheck c, Table t) {
    c.report.run("deletes", () -> {
      for (int i = 1; i <= 6; i++) {
        deleteRow(c, t, "d-" + i);
      }
      compareRow(c, t, "delete setup", "d-1");

      t.delete(new Delete(b("d-1")));
      c.model.deleteRow("d-1");
      compareRow(c, t, "delete row", "d-1");
      c.report.equal("delete row exists", false, t.exists(new Get(b("d-1"))));

      t.delete(new Delete(b("d-2")).addFamily(b(A)));
      c.model.deleteFamily("d-2", A);
      compareRow(c, t, "delete family", "d-2");

      t.delete(new Delete(b("d-3")).addFamilyVersion(b(A), c.t0 + 2));
      c.model.deleteFamilyVersion("d-3", A, c.t0 + 2);
      compareRow(c, t, "delete family version", "d-3");

      t.delete(new Delete(b("d-4")).addColumns(b(A), b("q1")));
      c.model.deleteColumns("d-4", A, "q1");
      compareRow(c, t, "delete columns (all versions)", "d-4");

      t.delete(new Delete(b("d-5")).addColumn(b(A), b("q1")));
      c.model.deleteLatest("d-5", A, "q1");
      compareRow(c, t, "delete column (latest version)", "d-5");

      t.delete(new Delete(b("d-6")).addColumn(b(A), b("q1"), c.t0 + 2));
      c.model.deleteVersion("d-6", A, "q1", c.t0 + 2);
      compareRow(c, t, "delete column at timestamp", "d-6");

      // Several Delete kinds in one batch, each on its own row.
      deleteRow(c, t, "d-7");
      deleteRow(c, t, "d-8");
      t.delete(new ArrayList<>(List.of(new Delete(b("d-7")).addColumns(b(A), b("q2")),
          new Delete(b("d-8")).addFamily(b(B)))));
      c.model.deleteColumns("d-7", A, "q2");
      c.model.deleteFamily("d-8", B);
      compareRow(c, t, "delete batch d-7", "d-7");
      compareRow(c, t, "delete batch d-8", "d-8");
    });
  }

  /** The 8-byte counters of a Result, by {@code family:qualifier}. */
  private static Map<String, Long> counters(Result r) {
    Map<String, Long> out = new TreeMap<>();
    for (ClientApiModel.KV kv : ClientApiModel.cells(r)) {
      byte[] v = b(kv.value());
      out.put(kv.family() + ":" + kv.qualifier(), v.length == 8 ? Bytes.toLong(v) : null);
    }
    return out;
  }

  private static void increments(ClientApiCheck c, Table t) {
    c.report.run("increment", () -> {
      byte[] row = b("i-1");
      Map<String, Long> want = new TreeMap<>();
      want.put("a:c1", 5L);
      c.report.equal("increment new counter", want,
          counters(t.increment(new Increment(row).addColumn(b(A), b("c1"), 5))));
      want.put("a:c1", 5L + 3);
      c.report.equal("increment existing counter", want,
          counters(t.increment(new Increment(row).addColumn(b(A), b("c1"), 3))));
      want.put("a:c1", 5L + 3 + 1);
      want.put("a:c2", 10L);
      want.put("b:c3", -2L);
      c.report.equal("increment several columns", want, counters(t.increment(
          new Increment(row).addColumn(b(A), b("c1"), 1).addColumn(b(A), b("c2"), 10)
              .addColumn(b(B), b("c3"), -2))));
      c.report.equal("increment then get", want, counters(t.get(new Get(row))));
      c.report.equal("incrementColumnValue", 5L + 3 + 1 + 100,
          t.incrementColumnValue(row, b(A), b("c1"), 100));
    });
  }

  private static void appends(ClientApiCheck c, Table t) {
    c.report.run("append", () -> {
      byte[] row = b("p-1");
      Result r1 = t.append(new Append(row).addColumn(b(A), b("s"), b("ab")));
      c.report.equal("append new", "ab", s(r1.getValue(b(A), b("s"))));
      Result r2 = t.append(new Append(row).addColumn(b(A), b("s"), b("cd"))
          .addColumn(b(B), b("t"), b("x")));
      c.report.equal("append existing", "abcd|x",
          s(r2.getValue(b(A), b("s"))) + "|" + s(r2.getValue(b(B), b("t"))));
      Result got = t.get(new Get(row));
      c.report.equal("append then get", "abcd|x",
          s(got.getValue(b(A), b("s"))) + "|" + s(got.getValue(b(B), b("t"))));
    });
  }

  /**
   * Whether HBase's check passes: its comparator holds the value the client sent and is
   * compared against the stored one, so GREATER means "sent value > stored value".
   */
  static boolean passes(CompareOperator op, String sent, String stored) {
    if (stored == null) {
      return false;
    }
    int cmp = Bytes.compareTo(b(sent), b(stored));
    switch (op) {
      case LESS:
        return cmp < 0;
      case LESS_OR_EQUAL:
        return cmp <= 0;
      case EQUAL:
        return cmp == 0;
      case NOT_EQUAL:
        return cmp != 0;
      case GREATER_OR_EQUAL:
        return cmp >= 0;
      case GREATER:
        return cmp > 0;
      default:
        throw new IllegalArgumentException(op.toString());
    }
  }

  private static void checkAndMutate(ClientApiCheck c, Table t) {
    c.report.run("checkAndMutate", () -> {
      String row = "c-1";
      byte[] r = b(row);
      long ts = c.t0 + 1;
      Put setup = new Put(r);
      add(c, setup, A, "x", ts, "c");
      t.put(setup);

      // ifEquals with a Put: applies, then does not.
      for (String sent : new String[] {"c", "zz"}) {
        boolean want = sent.equals(c.model.latest(row, A, "x"));
        Put p = new Put(r).addColumn(b(A), b("y"), ++ts, b("y-" + sent));
        CheckAndMutateResult res = t.checkAndMutate(
            CheckAndMutate.newBuilder(r).ifEquals(b(A), b("x"), b(sent)).build(p));
        if (want) {
          c.model.put(row, A, "y", ts, "y-" + sent);
        }
        c.report.equal("checkAndMutate ifEquals put " + sent, want, res.isSuccess());
        compareRow(c, t, "checkAndMutate ifEquals put " + sent + " data", row);
      }
      // ifNotExists with a Put: the first creates the column, the second finds it.
      for (String value : new String[] {"new", "again"}) {
        boolean want = c.model.latest(row, A, "z") == null;
        Put p = new Put(r).addColumn(b(A), b("z"), ++ts, b(value));
        CheckAndMutateResult res = t.checkAndMutate(
            CheckAndMutate.newBuilder(r).ifNotExists(b(A), b("z")).build(p));
        if (want) {
          c.model.put(row, A, "z", ts, value);
        }
        c.report.equal("checkAndMutate ifNotExists put " + value, want, res.isSuccess());
        compareRow(c, t, "checkAndMutate ifNotExists put " + value + " data", row);
      }
      // ifMatches with comparison operators; a:x holds "c".
      Object[][] cases = {
          {CompareOperator.GREATER, "m"}, {CompareOperator.GREATER, "a"},
          {CompareOperator.LESS, "a"}, {CompareOperator.LESS_OR_EQUAL, "c"},
          {CompareOperator.NOT_EQUAL, "c"}, {CompareOperator.GREATER_OR_EQUAL, "b"}};
      for (Object[] k : cases) {
        CompareOperator op = (CompareOperator) k[0];
        String sent = (String) k[1];
        String name = "checkAndMutate ifMatches " + op + " " + sent;
        boolean want = passes(op, sent, c.model.latest(row, A, "x"));
        Put p = new Put(r).addColumn(b(A), b("g"), ++ts, b(op + sent));
        CheckAndMutateResult res = t.checkAndMutate(
            CheckAndMutate.newBuilder(r).ifMatches(b(A), b("x"), op, b(sent)).build(p));
        if (want) {
          c.model.put(row, A, "g", ts, op + sent);
        }
        c.report.equal(name, want, res.isSuccess());
        compareRow(c, t, name + " data", row);
      }
      // A Delete, applying and not.
      for (String sent : new String[] {"nope", "c"}) {
        boolean want = sent.equals(c.model.latest(row, A, "x"));
        CheckAndMutateResult res = t.checkAndMutate(CheckAndMutate.newBuilder(r)
            .ifEquals(b(A), b("x"), b(sent)).build(new Delete(r).addColumns(b(A), b("g"))));
        if (want) {
          c.model.deleteColumns(row, A, "g");
        }
        c.report.equal("checkAndMutate delete " + sent, want, res.isSuccess());
        compareRow(c, t, "checkAndMutate delete " + sent + " data", row);
      }
      // RowMutations (a Put and a Delete together), applying and not.
      for (String sent : new String[] {"nope", "c"}) {
        boolean want = sent.equals(c.model.latest(row, A, "x"));
        long rts = ++ts;
        RowMutations rm = RowMutations.of(List.of(
            new Put(r).addColumn(b(A), b("rm"), rts, b("rm-" + sent)),
            new Delete(r).addColumns(b(A), b("z"))));
        CheckAndMutateResult res = t.checkAndMutate(
            CheckAndMutate.newBuilder(r).ifEquals(b(A), b("x"), b(sent)).build(rm));
        if (want) {
          c.model.put(row, A, "rm", rts, "rm-" + sent);
          c.model.deleteColumns(row, A, "z");
        }
        c.report.equal("checkAndMutate rowMutations " + sent, want, res.isSuccess());
        compareRow(c, t, "checkAndMutate rowMutations " + sent + " data", row);
      }
      // ifNotExists on a present column guarding a whole-row Delete: nothing happens.
      CheckAndMutateResult res = t.checkAndMutate(
          CheckAndMutate.newBuilder(r).ifNotExists(b(A), b("x")).build(new Delete(r)));
      c.report.equal("checkAndMutate ifNotExists delete", false, res.isSuccess());
      compareRow(c, t, "checkAndMutate ifNotExists delete data", row);
    });
  }

  private static void mutateRow(ClientApiCheck c, Table t) {
    c.report.run("mutateRow", () -> {
      String row = "m-1";
      byte[] r = b(row);
      Put setup = new Put(r);
      add(c, setup, A, "p0", c.t0 + 1, "old");
      add(c, setup, B, "k", c.t0 + 1, "kept");
      t.put(setup);
      Put p = new Put(r);
      add(c, p, A, "p1", c.t0 + 2, "new");
      c.model.deleteColumns(row, A, "p0");
      t.mutateRow(RowMutations.of(List.of(p, new Delete(r).addColumns(b(A), b("p0")))));
      compareRow(c, t, "mutateRow put+delete", row);
    });
  }

  private static void bufferedMutator(ClientApiCheck c) {
    c.report.run("bufferedMutator", () -> {
      ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
      BufferedMutatorParams params = new BufferedMutatorParams(c.bulk).listener((e, m) -> {
        for (int i = 0; i < e.getNumExceptions(); i++) {
          errors.add(s(e.getRow(i).getRow()) + ": " + e.getCause(i));
        }
      });
      try (BufferedMutator m = c.conn.getBufferedMutator(params)) {
        for (int i = 0; i < BULK; i++) {
          m.mutate(new Put(b(bulkRow(i))).addColumn(b(A), b("q"), b(bulkValue(i))));
        }
        m.flush();
      }
      c.report.equal("bufferedMutator errors", List.of(), new ArrayList<>(errors));
      int n = 0;
      int wrong = 0;
      String firstWrong = "";
      try (Table t = c.conn.getTable(c.bulk);
          ResultScanner sc = t.getScanner(new Scan().setCaching(1000))) {
        for (Result res : sc) {
          String want = bulkRow(n) + "=" + bulkValue(n);
          String got = s(res.getRow()) + "=" + s(res.getValue(b(A), b("q")));
          if (!want.equals(got) && wrong++ == 0) {
            firstWrong = "row " + n + ": " + want + " vs " + got;
          }
          n++;
        }
      }
      c.report.equal("bufferedMutator count by scan", BULK, n);
      c.report.check("bufferedMutator rows and values", wrong == 0, "every row in order",
          wrong + " wrong, first " + firstWrong);
    });
  }
}
