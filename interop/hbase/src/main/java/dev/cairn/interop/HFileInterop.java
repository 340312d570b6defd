package dev.cairn.interop;

import java.io.BufferedReader;
import java.io.DataInput;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellComparatorImpl;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.PrivateCellUtil;
import org.apache.hadoop.hbase.fs.HFileSystem;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.io.encoding.DataBlockEncoding;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.io.hfile.HFile;
import org.apache.hadoop.hbase.io.hfile.HFileContext;
import org.apache.hadoop.hbase.io.hfile.HFileContextBuilder;
import org.apache.hadoop.hbase.io.hfile.HFileInfo;
import org.apache.hadoop.hbase.io.hfile.HFileScanner;
import org.apache.hadoop.hbase.regionserver.BloomType;
import org.apache.hadoop.hbase.regionserver.StoreFileWriter;
import org.apache.hadoop.hbase.util.BloomFilter;
import org.apache.hadoop.hbase.util.BloomFilterFactory;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.ChecksumType;

/**
 * HBase 2.6's own HFile code, driven by cairn's test suite.
 *
 * <pre>
 * read MANIFEST   each line: FILE CELLS BLOOM   -- open FILE with HBase's reader (inline checksum
 *                 verification on), compare every cell with CELLS, and query the Bloom filter
 *                 with every present key (must hit) and absent keys (false positives counted)
 * write MANIFEST  each line: FILE CELLS CHECKSUM BYTES_PER_CHECKSUM COMPRESSION BLOOM TAGS
 *                 BLOCKSIZE [ENCODING [COMPRESS_TAGS]] -- write FILE with HBase's StoreFileWriter
 *                 from CELLS (data block encoding NONE unless given)
 * </pre>
 *
 * CELLS: one cell per line, "row family qualifier timestamp typecode value tags seqid" with the
 * byte fields in hex ("-" when empty). Prints one line per file, OK or FAIL; exits 1 on any
 * FAIL.
 */
public class HFileInterop {

  static Configuration conf() {
    Configuration conf = HBaseConfiguration.create();
    conf.setBoolean("hbase.regionserver.checksum.verify", true);
    // ZSTD through zstd-jni: Hadoop's native ZStandardCodec needs libhadoop.
    conf.set("hbase.io.compress.zstd.codec", "org.apache.hadoop.hbase.io.compress.zstd.ZstdCodec");
    return conf;
  }

  static byte[] unhex(String s) {
    return s.equals("-") ? new byte[0] : Bytes.fromHex(s);
  }

  static String hex(byte[] b) {
    return b.length == 0 ? "-" : Bytes.toHex(b);
  }

  static List<KeyValue> readCells(String file) throws IOException {
    List<KeyValue> out = new ArrayList<>();
    try (BufferedReader r = Files.newBufferedReader(Paths.get(file), StandardCharsets.UTF_8)) {
      String line;
      while ((line = r.readLine()) != null) {
        if (line.isEmpty()) continue;
        String[] f = line.split(" ");
        KeyValue kv = new KeyValue(unhex(f[0]), unhex(f[1]), unhex(f[2]), Long.parseLong(f[3]),
          KeyValue.Type.codeToType((byte) Integer.parseInt(f[4])), unhex(f[5]), unhex(f[6]));
        kv.setSequenceId(Long.parseLong(f[7]));
        out.add(kv);
      }
    }
    return out;
  }

  static String show(Cell c, boolean withSeqId) {
    return hex(CellUtil.cloneRow(c)) + " " + hex(CellUtil.cloneFamily(c)) + " "
      + hex(CellUtil.cloneQualifier(c)) + " " + c.getTimestamp() + " " + (c.getTypeByte() & 0xff)
      + " " + hex(CellUtil.cloneValue(c)) + " " + hex(PrivateCellUtil.cloneTags(c)) + " "
      + (withSeqId ? c.getSequenceId() : 0);
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: HFileInterop read|write MANIFEST");
      System.exit(2);
    }
    Configuration conf = conf();
    boolean ok = true;
    for (String line : Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8)) {
      if (line.isEmpty()) continue;
      String[] f = line.split(" ");
      try {
        String result = args[0].equals("read") ? read(conf, f) : write(conf, f);
        System.out.println("OK " + f[0] + " " + result);
      } catch (Throwable t) {
        ok = false;
        System.out.println("FAIL " + f[0] + " " + t.toString().replace('\n', ' '));
      }
    }
    System.out.flush();
    System.exit(ok ? 0 : 1);
  }

  static String read(Configuration conf, String[] f) throws Exception {
    Path path = new Path(Paths.get(f[0]).toAbsolutePath().toString());
    List<KeyValue> expected = readCells(f[1]);
    BloomType bloomType = BloomType.valueOf(f[2]);
    // HFileSystem(conf, true) is what makes HBase verify its inline block checksums.
    FileSystem fs = new HFileSystem(conf, true);
    HFile.Reader reader = HFile.createReader(fs, path, CacheConfig.DISABLED, true, conf);
    try {
      HFileInfo info = reader.getHFileInfo();
      boolean mvcc = reader.getFileContext().isIncludesMvcc();
      HFileScanner scanner = reader.getScanner(conf, false, true);
      int n = 0;
      if (scanner.seekTo()) {
        do {
          Cell c = scanner.getCell();
          if (n >= expected.size()) throw new AssertionError("more cells than written: " + show(c, mvcc));
          String got = show(c, mvcc);
          String want = show(expected.get(n), mvcc);
          if (!got.equals(want)) throw new AssertionError("cell " + n + ": got " + got + " want " + want);
          n++;
        } while (scanner.next());
      }
      if (n != expected.size()) throw new AssertionError("read " + n + " cells, wrote " + expected.size());
      if (reader.getEntries() != n) throw new AssertionError("trailer entry count " + reader.getEntries());
      if (n > 0) {
        Optional<Cell> first = reader.getFirstKey();
        Optional<Cell> last = reader.getLastKey();
        if (CellComparatorImpl.COMPARATOR.compare(first.get(), expected.get(0), true) != 0)
          throw new AssertionError("first key " + first.get());
        if (CellComparatorImpl.COMPARATOR.compare(last.get(), expected.get(n - 1), true) != 0)
          throw new AssertionError("last key " + last.get());
        reader.midKey();
        // Seek to every 50th cell through the block index.
        for (int i = 0; i < n; i += 50) {
          HFileScanner s = reader.getScanner(conf, false, true);
          // A key-only copy: HBase's root index search compares sequence ids too.
          byte[] key = expected.get(i).getKey();
          int r = s.seekTo(new KeyValue.KeyOnlyKeyValue(key, 0, key.length));
          if (r != 0) throw new AssertionError("seekTo cell " + i + " returned " + r + " at " + (s.isSeeked() ? show(s.getCell(), mvcc) : "nothing") + " for " + show(expected.get(i), mvcc));
        }
      }
      String bloom = bloom(reader, bloomType, expected);
      return "cells=" + n + " mvcc=" + mvcc + " tags=" + reader.getFileContext().isIncludesTags()
        + " compression=" + reader.getFileContext().getCompression()
        + " encoding=" + reader.getDataBlockEncoding() + " " + bloom
        + " fileinfo=" + info.size();
    } finally {
      reader.close();
    }
  }

  static String bloom(HFile.Reader reader, BloomType type, List<KeyValue> cells) throws IOException {
    DataInput meta = reader.getGeneralBloomFilterMetadata();
    if (type == BloomType.NONE) {
      if (meta != null) throw new AssertionError("bloom NONE but the file has a bloom");
      return "bloom=NONE";
    }
    if (meta == null) throw new AssertionError("no general bloom meta block");
    BloomFilter bf = BloomFilterFactory.createFromMeta(meta, reader);
    Set<String> present = new HashSet<>();
    int checked = 0;
    for (KeyValue c : cells) {
      byte[] row = CellUtil.cloneRow(c);
      boolean hit;
      if (type == BloomType.ROW) {
        hit = bf.contains(row, 0, row.length, null);
        present.add(Bytes.toHex(row));
      } else {
        Cell key = PrivateCellUtil.createFirstOnRowCol(c);
        hit = bf.contains(key, null, BloomType.ROWCOL);
        present.add(Bytes.toHex(row) + "/" + Bytes.toHex(CellUtil.cloneQualifier(c)));
      }
      if (!hit) throw new AssertionError("bloom misses present key " + show(c, false));
      checked++;
    }
    int fp = 0;
    int probes = 2000;
    for (int i = 0; i < probes; i++) {
      byte[] row = Bytes.toBytes("absent-row-" + i);
      boolean hit;
      if (type == BloomType.ROW) {
        hit = bf.contains(row, 0, row.length, null);
      } else {
        Cell key = PrivateCellUtil.createFirstOnRowCol(new KeyValue(row, Bytes.toBytes("f"), Bytes.toBytes("q"), 1L, KeyValue.Type.Put));
        hit = bf.contains(key, null, BloomType.ROWCOL);
      }
      if (hit) fp++;
    }
    if (fp > probes / 20) throw new AssertionError("bloom false positives " + fp + "/" + probes);
    return "bloom=" + type + " hits=" + checked + "/" + checked + " fp=" + fp + "/" + probes;
  }

  static String write(Configuration conf, String[] f) throws Exception {
    Path path = new Path(Paths.get(f[0]).toAbsolutePath().toString());
    List<KeyValue> cells = readCells(f[1]);
    HFileContext ctx = new HFileContextBuilder()
      .withChecksumType(ChecksumType.nameToType(f[2]))
      .withBytesPerCheckSum(Integer.parseInt(f[3]))
      .withCompression(Compression.getCompressionAlgorithmByName(f[4].toLowerCase()))
      .withIncludesMvcc(true)
      .withIncludesTags(Boolean.parseBoolean(f[6]))
      .withBlockSize(Integer.parseInt(f[7]))
      .withCellComparator(CellComparatorImpl.COMPARATOR)
      // Optional: a data block encoding (FAST_DIFF, ...) and whether tags are compressed.
      .withDataBlockEncoding(f.length > 8 ? DataBlockEncoding.valueOf(f[8]) : DataBlockEncoding.NONE)
      .withCompressTags(f.length > 9 && Boolean.parseBoolean(f[9]))
      .build();
    FileSystem fs = FileSystem.getLocal(conf).getRawFileSystem();
    StoreFileWriter w = new StoreFileWriter.Builder(conf, CacheConfig.DISABLED, fs)
      .withFilePath(path).withBloomType(BloomType.valueOf(f[5])).withMaxKeyCount(cells.size())
      .withFileContext(ctx).build();
    long maxSeq = 0;
    for (KeyValue kv : cells) {
      w.append(kv);
      maxSeq = Math.max(maxSeq, kv.getSequenceId());
    }
    w.appendMetadata(maxSeq, false);
    w.close();
    return "cells=" + cells.size();
  }
}
