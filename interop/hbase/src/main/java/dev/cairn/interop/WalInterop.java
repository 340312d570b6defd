package dev.cairn.interop;

import java.io.File;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.ArrayBackedTag;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.PrivateCellUtil;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.Tag;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionInfoBuilder;
import org.apache.hadoop.hbase.regionserver.MultiVersionConcurrencyControl;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.wal.WAL;
import org.apache.hadoop.hbase.wal.WALEdit;
import org.apache.hadoop.hbase.wal.WALFactory;
import org.apache.hadoop.hbase.wal.WALKeyImpl;
import org.apache.hadoop.hbase.wal.WALPrettyPrinter;
import org.apache.hadoop.hbase.wal.WALSplitter;
import org.apache.hadoop.hbase.wal.WALStreamReader;

/**
 * HBase 2.6's own WAL code against cairn's WAL files, and the other way round.
 *
 * <ul>
 *   <li>{@code read [--raw] <file>...}: reads each file with {@code WALFactory}'s stream reader
 *       (what {@code WALPrettyPrinter}, {@code WALPlayer} and {@code WALSplitter} use), through
 *       Hadoop's checksummed local filesystem, or {@code RawLocalFileSystem} with {@code --raw}.
 *       Prints every entry ({@code entry region=<hex> table=<name> seq=<n> time=<n>
 *       nonceGroup=<n> nonce=<n> orig=<n> clusters=<msb:lsb,...> cells=<n>}, then {@code cell
 *       <row> <family> <qualifier> <ts> <type> <value> <tags>} in hex, {@code -} for empty),
 *       and how the file ended: {@code end <file> clean entries=<n>} when the reader returned
 *       null, {@code end <file> <exception class>: <message> entries=<n>} when it threw.
 *   <li>{@code write <root> <server name> <regions> <edits> <roll every> [meta] [crash]}: writes
 *       WAL files with HBase's own writer ({@code WALFactory} with the {@code filesystem}
 *       provider: {@code FSHLog} and {@code ProtobufLogWriter}) under {@code
 *       <root>/WALs/<server name>/}: {@code edits} edits spread over {@code regions} regions of
 *       two tables, rolled every {@code roll every} edits (0: never), with nonces, tags, deletes
 *       and an empty value among them; {@code meta} adds edits of {@code hbase:meta} to the
 *       meta WAL. Prints each edit as {@code entry}/{@code cell} lines as {@code read} does,
 *       with the sequence id HBase gave it, once synced. Then the JVM halts, as a killed server
 *       would: with {@code crash} the last file of each WAL is left open (no trailer);
 *       otherwise each WAL is rolled first, so that every file is closed and none archived.
 *   <li>{@code split <root> <wal dir>}: HBase's {@code WALSplitter.split} over {@code <wal dir>}
 *       (a server's directory under {@code <root>/WALs}), writing {@code recovered.edits} into
 *       the region directories under {@code <root>/data} and archiving the WALs to {@code
 *       <root>/oldWALs}, as a region server does for the master's {@code
 *       ServerCrashProcedure}. Prints {@code split <path>} per file written.
 *   <li>{@code print <args>...}: {@code WALPrettyPrinter.run(args)}: {@code hbase wal}.
 * </ul>
 */
public class WalInterop {
  public static void main(String[] args) {
    int code = 0;
    try {
      switch (args[0]) {
        case "read":
          read(args);
          break;
        case "write":
          write(args);
          break;
        case "split":
          split(args);
          break;
        case "print":
          String[] rest = new String[args.length - 1];
          System.arraycopy(args, 1, rest, 0, rest.length);
          WALPrettyPrinter.run(rest);
          break;
        default:
          throw new IllegalArgumentException("unknown command " + args[0]);
      }
    } catch (Throwable t) {
      System.out.flush();
      t.printStackTrace();
      code = 1;
    }
    System.out.flush();
    // HBase leaves non-daemon threads behind; without exit the JVM would hang.
    System.exit(code);
  }

  static Configuration conf(String root, boolean raw) {
    Configuration conf = HFileInterop.conf();
    if (raw) {
      conf.set("fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem");
      conf.setBoolean("fs.file.impl.disable.cache", true);
    }
    if (root != null) {
      conf.set("hbase.rootdir", "file://" + new File(root).getAbsolutePath());
    }
    conf.set("hbase.wal.provider", "filesystem");
    conf.set("hbase.wal.meta_provider", "filesystem");
    conf.setBoolean("hbase.unsafe.stream.capability.enforce", false);
    return conf;
  }

  static String hex(byte[] b) {
    return b.length == 0 ? "-" : Bytes.toHex(b);
  }

  static void print(PrintStream out, WAL.Entry e) {
    WALKeyImpl k = e.getKey();
    StringBuilder sb = new StringBuilder("entry region=");
    sb.append(hex(k.getEncodedRegionName())).append(" table=").append(k.getTableName())
      .append(" seq=").append(k.getSequenceId()).append(" time=").append(k.getWriteTime())
      .append(" nonceGroup=").append(k.getNonceGroup()).append(" nonce=").append(k.getNonce())
      .append(" orig=").append(k.getOrigLogSeqNum()).append(" clusters=");
    List<UUID> ids = k.getClusterIds();
    if (ids.isEmpty()) sb.append('-');
    for (int i = 0; i < ids.size(); i++) {
      if (i > 0) sb.append(',');
      sb.append(Long.toUnsignedString(ids.get(i).getMostSignificantBits())).append(':')
        .append(Long.toUnsignedString(ids.get(i).getLeastSignificantBits()));
    }
    sb.append(" cells=").append(e.getEdit().size());
    out.println(sb);
    for (Cell c : e.getEdit().getCells()) {
      out.println("cell " + hex(CellUtil.cloneRow(c)) + " " + hex(CellUtil.cloneFamily(c)) + " "
        + hex(CellUtil.cloneQualifier(c)) + " " + c.getTimestamp() + " " + (c.getTypeByte() & 0xff)
        + " " + hex(CellUtil.cloneValue(c)) + " " + hex(PrivateCellUtil.cloneTags(c)));
    }
  }

  static void read(String[] args) throws Exception {
    boolean raw = false;
    int i = 1;
    if (args.length > 1 && args[1].equals("--raw")) {
      raw = true;
      i = 2;
    }
    Configuration conf = conf(null, raw);
    for (; i < args.length; i++) {
      Path p = new Path("file://" + new File(args[i]).getAbsolutePath());
      FileSystem fs = p.getFileSystem(conf);
      int n = 0;
      String end;
      try (WALStreamReader r = WALFactory.createStreamReader(fs, p, conf)) {
        for (WAL.Entry e = r.next(); e != null; e = r.next()) {
          print(System.out, e);
          n++;
        }
        end = "clean";
      } catch (Exception ex) {
        end = ex.getClass().getName() + ": " + String.valueOf(ex.getMessage()).replace('\n', ' ');
      }
      System.out.println("end " + args[i] + " " + end + " entries=" + n);
    }
  }

  static void write(String[] args) throws Exception {
    String root = args[1];
    ServerName server = ServerName.valueOf(args[2]);
    int regions = Integer.parseInt(args[3]);
    int edits = Integer.parseInt(args[4]);
    int rollEvery = Integer.parseInt(args[5]);
    boolean meta = false;
    boolean crash = false;
    for (int i = 6; i < args.length; i++) {
      if (args[i].equals("meta")) meta = true;
      if (args[i].equals("crash")) crash = true;
    }
    Configuration conf = conf(root, true);
    WALFactory factory = new WALFactory(conf, server.toString());
    TableName[] tables = { TableName.valueOf("interop", "t"), TableName.valueOf("t2") };
    List<RegionInfo> infos = new ArrayList<>();
    List<MultiVersionConcurrencyControl> mvccs = new ArrayList<>();
    for (int r = 0; r < regions; r++) {
      byte[] start = r == 0 ? new byte[0] : Bytes.toBytes(String.format("r%03d", r));
      byte[] end = r == regions - 1 ? new byte[0] : Bytes.toBytes(String.format("r%03d", r + 1));
      infos.add(RegionInfoBuilder.newBuilder(tables[r % 2]).setStartKey(start).setEndKey(end)
        .setRegionId(1700000000000L + r).build());
      mvccs.add(new MultiVersionConcurrencyControl());
    }
    NavigableMap<byte[], Integer> scopes = new TreeMap<>(Bytes.BYTES_COMPARATOR);
    WAL wal = factory.getWAL(infos.get(0));
    for (int n = 0; n < edits; n++) {
      int r = n % regions;
      RegionInfo ri = infos.get(r);
      WALEdit edit = new WALEdit();
      byte[] row = Bytes.toBytes(String.format("r%03d-row%06d", r, n));
      long ts = 1700000000000L + n;
      byte[] value = n % 7 == 3 ? new byte[0] : Bytes.toBytes("value-" + n);
      if (n % 5 == 4) {
        edit.add(new KeyValue(row, Bytes.toBytes("f"), Bytes.toBytes("q"), ts,
          KeyValue.Type.Delete));
      } else {
        List<Tag> tags = new ArrayList<>();
        if (n % 3 == 2) tags.add(new ArrayBackedTag((byte) 8, Bytes.toBytes(n)));
        edit.add(new KeyValue(row, Bytes.toBytes("f"), Bytes.toBytes("q"), ts, value, tags));
        edit.add(new KeyValue(row, Bytes.toBytes("g"), Bytes.toBytes("q" + n), ts, value));
      }
      // Nonces as a client's increment or append carries them; cluster ids as replication.
      long nonceGroup = n % 4 == 1 ? 0x1234_5678_9ABCL + n : 0;
      long nonce = n % 4 == 1 ? n * 31L + 1 : 0;
      List<UUID> clusters = new ArrayList<>();
      if (n % 6 == 5) clusters.add(new UUID(0x0123456789ABCDEFL + n, -1L - n));
      WALKeyImpl key = new WALKeyImpl(ri.getEncodedNameAsBytes(), ri.getTable(), ts, clusters,
        nonceGroup, nonce, mvccs.get(r), scopes);
      long txid = wal.appendData(ri, key, edit);
      wal.sync(txid);
      if (key.getWriteEntry() != null) mvccs.get(r).complete(key.getWriteEntry());
      print(System.out, new WAL.Entry(key, edit));
      if (rollEvery > 0 && (n + 1) % rollEvery == 0 && n + 1 < edits) {
        wal.rollWriter(true);
      }
    }
    if (meta) {
      RegionInfo mi = RegionInfoBuilder.FIRST_META_REGIONINFO;
      WAL metaWal = factory.getWAL(mi);
      MultiVersionConcurrencyControl mvcc = new MultiVersionConcurrencyControl();
      for (int n = 0; n < 3; n++) {
        WALEdit edit = new WALEdit();
        edit.add(new KeyValue(Bytes.toBytes("t2,,1"), Bytes.toBytes("info"),
          Bytes.toBytes("state"), 1700000000000L + n, Bytes.toBytes("OPEN")));
        WALKeyImpl key =
          new WALKeyImpl(mi.getEncodedNameAsBytes(), mi.getTable(), 1700000000000L + n, mvcc);
        long txid = metaWal.appendData(mi, key, edit);
        metaWal.sync(txid);
        if (key.getWriteEntry() != null) mvcc.complete(key.getWriteEntry());
        print(System.out, new WAL.Entry(key, edit));
      }
    }
    if (!crash) {
      // Every file closed (its trailer written), none archived: rolling closes the current
      // file, and nothing flushed lets HBase archive one. (A clean close of the factory would
      // move them all to oldWALs, as a region server's shutdown does.)
      List<WAL> wals = new ArrayList<>(factory.getWALs());
      if (meta) wals.addAll(factory.getMetaProvider().getWALs());
      for (WAL w : wals) {
        w.rollWriter(true);
      }
    }
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }

  static void split(String[] args) throws Exception {
    String root = args[1];
    Configuration conf = conf(root, true);
    Path rootDir = new Path("file://" + new File(root).getAbsolutePath());
    Path walDir = new Path("file://" + new File(args[2]).getAbsolutePath());
    FileSystem fs = rootDir.getFileSystem(conf);
    WALFactory factory = new WALFactory(conf, "cairn-wal-interop-splitter");
    List<Path> out =
      WALSplitter.split(rootDir, walDir, new Path(rootDir, "oldWALs"), fs, conf, factory);
    for (Path p : out) {
      System.out.println("split " + p.toUri().getPath());
    }
  }
}
