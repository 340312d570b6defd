package dev.cairn.interop;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;

/**
 * HBase 2.6.1's own verdict on names a client chooses, for cairn's differential test of its
 * name rules ({@code cairn_region::names}).
 *
 * <pre>
 *   NameRules chars   # the BMP code units TableName takes as letters or digits, as ranges
 *   NameRules check   # one verdict per stdin line
 * </pre>
 *
 * <p>{@code check} reads lines {@code KIND HEX [HEX]}: {@code table NS QUALIFIER} (the bytes of
 * a protobuf {@code TableName}: {@code TableName.valueOf(byte[], byte[])}), {@code full NAME}
 * ({@code TableName.valueOf(byte[])}, as the Thrift gateway parses a table name), {@code family
 * NAME} (a family in a table descriptor: {@code ColumnFamilyDescriptorBuilder.of} then {@code
 * TableDescriptorBuilder.build}), {@code namespace NAME} ({@code
 * TableName.isLegalNamespaceName}). An empty HEX is written {@code -}. Each answer is {@code OK}
 * or {@code BAD <hex of the exception message's UTF-8>}.
 */
public final class NameRules {
  private NameRules() {}

  private static byte[] hex(String s) {
    if (s.equals("-")) {
      return new byte[0];
    }
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    }
    return b;
  }

  private static void verdict(String[] f) {
    switch (f[0]) {
      case "table":
        TableName.valueOf(hex(f[1]), hex(f[2]));
        break;
      case "full":
        TableName.valueOf(hex(f[1]));
        break;
      case "family":
        TableDescriptorBuilder.newBuilder(TableName.valueOf("t"))
            .setColumnFamily(ColumnFamilyDescriptorBuilder.of(hex(f[1]))).build();
        break;
      case "namespace":
        TableName.isLegalNamespaceName(hex(f[1]));
        break;
      default:
        throw new IllegalStateException("unknown kind " + f[0]);
    }
  }

  private static java.util.Set<?> tableCache;

  public static void main(String[] args) throws Exception {
    java.lang.reflect.Field cache = TableName.class.getDeclaredField("tableCache");
    cache.setAccessible(true);
    tableCache = (java.util.Set<?>) cache.get(null);
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    if (args.length == 1 && args[0].equals("chars")) {
      int start = -1;
      for (int c = 0; c <= 0x10000; c++) {
        // What HBase 2.6's TableName accepts as a letter or digit of any language.
        boolean yes = c < 0x10000 && (Character.isAlphabetic(c) || Character.isDigit((char) c));
        if (yes && start < 0) {
          start = c;
        } else if (!yes && start >= 0) {
          out.printf("%04x %04x%n", start, c - 1);
          start = -1;
        }
      }
      out.flush();
      return;
    }
    if (args.length != 1 || !args[0].equals("check")) {
      System.err.println("usage: NameRules chars | check");
      System.exit(2);
    }
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] f = line.split(" ");
      try {
        verdict(f);
        out.println("OK");
      } catch (IllegalArgumentException e) {
        StringBuilder h = new StringBuilder("BAD ");
        for (byte b : String.valueOf(e.getMessage()).getBytes(StandardCharsets.UTF_8)) {
          h.append(String.format("%02x", b));
        }
        out.println(h);
      }
      // TableName.valueOf keeps every name it made in a copy-on-write set it scans on each
      // call: emptied, so a run of many names stays linear.
      tableCache.clear();
    }
    out.flush();
  }
}
