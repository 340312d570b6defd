package dev.cairn.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.apache.hadoop.hbase.client.RetriesExhaustedWithDetailsException;

/**
 * The outcome of {@link ClientApiCheck}'s checks: one {@code ok NAME} or
 * {@code FAIL NAME: EXPECTED vs ACTUAL} line per check as it runs, a summary at the end.
 *
 * <p>A check whose body throws is a failure of that check only, so one broken server feature
 * shows as one FAIL line instead of hiding every check after it.
 */
final class ClientApiReport {
  /** A check body: HBase client calls throw checked exceptions. */
  interface Body {
    void run() throws Exception;
  }

  /** Longest expected/actual text printed; whole result sets would drown the line. */
  private static final int SHOWN = 400;

  private int passed;
  private final List<String> failed = new ArrayList<>();

  /** {@code expected.equals(actual)}. */
  void equal(String name, Object expected, Object actual) {
    if (Objects.equals(expected, actual)) {
      ok(name);
    } else {
      fail(name, String.valueOf(expected), String.valueOf(actual));
    }
  }

  /** {@code cond}, described by what was expected and what was seen. */
  void check(String name, boolean cond, String expected, String actual) {
    if (cond) {
      ok(name);
    } else {
      fail(name, expected, actual);
    }
  }

  /**
   * Runs {@code body}, which makes its own checks; an exception it throws fails {@code name}.
   */
  void run(String name, Body body) {
    try {
      body.run();
    } catch (Throwable t) {
      fail(name, "no exception", describe(t));
    }
  }

  /**
   * {@code body} must throw, with an exception of class {@code simpleName} somewhere in its
   * cause chain (or among a batch exception's per-action causes). What was thrown is printed
   * as a note: the exact classes are the contract a server must meet.
   */
  void throwsClass(String name, String simpleName, Body body) {
    try {
      body.run();
    } catch (Throwable t) {
      note(name + " threw " + clip(describe(t)));
      if (chainHas(t, simpleName)) {
        ok(name);
      } else {
        fail(name, simpleName, describe(t));
      }
      return;
    }
    fail(name, simpleName, "no exception");
  }

  /** Whether {@code t}, its causes or a batch exception's per-action causes name the class. */
  static boolean chainHas(Throwable t, String simpleName) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c.getClass().getSimpleName().equals(simpleName)) {
        return true;
      }
      if (c instanceof RetriesExhaustedWithDetailsException) {
        RetriesExhaustedWithDetailsException r = (RetriesExhaustedWithDetailsException) c;
        for (int i = 0; i < r.getNumExceptions(); i++) {
          if (chainHas(r.getCause(i), simpleName)) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /** The exception's class chain and first message, e.g. {@code A(B(C)): message}. */
  static String describe(Throwable t) {
    StringBuilder sb = new StringBuilder();
    int depth = 0;
    for (Throwable c = t; c != null && depth < 6; c = c.getCause() == c ? null : c.getCause()) {
      sb.append(depth == 0 ? "" : " <- ").append(c.getClass().getName());
      depth++;
    }
    String msg = String.valueOf(t.getMessage());
    int nl = msg.indexOf('\n');
    sb.append(": ").append(nl >= 0 ? msg.substring(0, nl) : msg);
    return sb.toString();
  }

  void ok(String name) {
    passed++;
    System.out.println("ok " + name);
    System.out.flush();
  }

  void fail(String name, String expected, String actual) {
    failed.add(name);
    System.out.println("FAIL " + name + ": " + clip(expected) + " vs " + clip(actual));
    System.out.flush();
  }

  /** A line that is not a check: what the program saw, for the reader. */
  void note(String text) {
    System.out.println("# " + text);
    System.out.flush();
  }

  private static String clip(String s) {
    return s.length() <= SHOWN ? s : s.substring(0, SHOWN) + "...(" + s.length() + " chars)";
  }

  boolean allPassed() {
    return failed.isEmpty();
  }

  /** The final summary line(s). */
  void summary(long millis) {
    System.out.println("summary: " + passed + " ok, " + failed.size() + " failed, "
        + (millis / 100) / 10.0 + " s" + (failed.isEmpty() ? "" : "; failed: " + failed));
    System.out.flush();
  }
}
