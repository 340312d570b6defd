package dev.cairn.interop;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellComparatorImpl;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.fs.HFileSystem;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.io.hfile.HFile;
import org.apache.hadoop.hbase.io.hfile.HFileContext;
import org.apache.hadoop.hbase.io.hfile.HFileContextBuilder;
import org.apache.hadoop.hbase.io.hfile.HFileScanner;
import org.apache.hadoop.hbase.regionserver.BloomType;
import org.apache.hadoop.hbase.regionserver.StoreFileWriter;
import org.apache.hadoop.hbase.util.ChecksumType;

/**
 * HBase's HFile writer and scanner on the same workload as cairn's benchmark
 * (crates/cairn-hfile/benches/hfile_vs_hbase.rs): CELLS cells of VALUE_SIZE random bytes,
 * rows "row-%010d", family "f", qualifier "q"; CRC32C per 16 KiB, 64 KiB blocks, no
 * compression, ROW Bloom filter; the scan verifies inline checksums (HFileSystem) and touches
 * every value. Prints "write SECONDS" and "scan SECONDS" per round after a warm-up round.
 *
 * usage: HFileBench DIR CELLS VALUE_SIZE ROUNDS
 */
public class HFileBench {
  public static void main(String[] a) throws Exception {
    String dir = a[0];
    int cells = Integer.parseInt(a[1]);
    int valueSize = Integer.parseInt(a[2]);
    int rounds = Integer.parseInt(a[3]);
    Configuration conf = HFileInterop.conf();
    Path path = new Path(dir, "hbase-bench.hfile");
    for (int round = 0; round <= rounds; round++) {
      long t0 = System.nanoTime();
      write(conf, path, cells, valueSize);
      long t1 = System.nanoTime();
      long sum = scan(conf, path);
      long t2 = System.nanoTime();
      if (round > 0) {
        System.out.println("write " + (t1 - t0) / 1e9);
        System.out.println("scan " + (t2 - t1) / 1e9);
      }
      if (sum == 42) System.out.println("");
    }
    System.out.flush();
    System.exit(0);
  }

  static void write(Configuration conf, Path path, int cells, int valueSize) throws Exception {
    HFileContext ctx = new HFileContextBuilder().withChecksumType(ChecksumType.CRC32C)
      .withBytesPerCheckSum(16384).withCompression(Compression.Algorithm.NONE)
      .withIncludesMvcc(true).withBlockSize(65536)
      .withCellComparator(CellComparatorImpl.COMPARATOR).build();
    FileSystem fs = FileSystem.getLocal(conf).getRawFileSystem();
    StoreFileWriter w = new StoreFileWriter.Builder(conf, CacheConfig.DISABLED, fs)
      .withFilePath(path).withBloomType(BloomType.ROW).withMaxKeyCount(cells).withFileContext(ctx)
      .build();
    byte[] f = "f".getBytes();
    byte[] q = "q".getBytes();
    long x = 0x9E3779B97F4A7C15L;
    byte[] value = new byte[valueSize];
    for (int i = 0; i < cells; i++) {
      for (int j = 0; j < valueSize; j += 8) {
        x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
        for (int k = 0; k < 8 && j + k < valueSize; k++) value[j + k] = (byte) (x >>> (8 * k));
      }
      KeyValue kv = new KeyValue(String.format("row-%010d", i).getBytes(), f, q, 1L, value);
      kv.setSequenceId(i);
      w.append(kv);
    }
    w.appendMetadata(cells, false);
    w.close();
  }

  static long scan(Configuration conf, Path path) throws Exception {
    FileSystem fs = new HFileSystem(conf, true);
    HFile.Reader r = HFile.createReader(fs, path, CacheConfig.DISABLED, true, conf);
    HFileScanner s = r.getScanner(conf, false, false);
    long sum = 0;
    if (s.seekTo()) {
      do {
        Cell c = s.getCell();
        sum += c.getValueArray()[c.getValueOffset()] + c.getValueLength();
      } while (s.next());
    }
    r.close();
    return sum;
  }
}
