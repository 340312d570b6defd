package dev.cairn.interop;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellComparatorImpl;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.fs.HFileSystem;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.io.hfile.BlockCache;
import org.apache.hadoop.hbase.io.hfile.BlockCacheFactory;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.io.hfile.HFile;
import org.apache.hadoop.hbase.io.hfile.HFileContext;
import org.apache.hadoop.hbase.io.hfile.HFileContextBuilder;
import org.apache.hadoop.hbase.io.hfile.HFileScanner;
import org.apache.hadoop.hbase.regionserver.BloomType;
import org.apache.hadoop.hbase.regionserver.StoreFileWriter;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.ChecksumType;

/**
 * HBase 2.6.1 as a peer in cairn's benchmark report (bench/report.sh), through its HFile layer
 * (not a region server: no RPC, no StoreScanner, no MVCC read point, no Bloom check).
 *
 * <pre>
 * pe DIR ROWS VALUE_SIZE GETS SCANS BATCH RANGE WORKLOADS
 *     The read workloads of bench/rocksdb-peer and bench/pebble-peer with the same keys and
 *     values (HBase PE's: the row number zero-padded to 26 digits, family info0, qualifier 0,
 *     VALUE_SIZE bytes of runs of 8 equal random capitals): HBase's StoreFileWriter writes one
 *     store file as PE's table has them (CRC32C per 16 KiB, 64 KiB blocks, no compression, ROW
 *     Bloom); the reader is opened with inline checksum verification (HFileSystem) and an
 *     on-heap LruBlockCache (hfile.block.cache.size of the heap, set by the caller's -Xmx);
 *     every row is read once so the cache holds every block; then each workload of WORKLOADS
 *     (get:T, multiget:T, scan:T; T threads, each with its own scanner on the shared reader):
 *     GETS exact-key seeks; GETS / BATCH batches of BATCH random rows, sorted and walked with
 *     reseekTo; SCANS scans of RANGE rows from a random row, touching every value and returning
 *     nothing. Each workload first runs a tenth of its operations untimed on one thread (JIT
 *     warm-up, as a long-running region server has had). Prints one "bench-result key=value ..."
 *     line per workload; CPU is the whole process's (GC and JIT included) from /proc/self/stat.
 * compact [-D KEY=VALUE]... TABLE_DIR
 *     StoreInterop's major compaction (CompactionTool's steps) of every family directory of
 *     every region of the table, in one JVM; one "cpu ..." line per family.
 * </pre>
 */
public class PeerBench {
  static final byte[] FAMILY = Bytes.toBytes("info0");
  static final byte[] QUALIFIER = Bytes.toBytes("0");

  public static void main(String[] args) throws Exception {
    try {
      if (args.length > 0 && args[0].equals("pe")) {
        pe(Arrays.copyOfRange(args, 1, args.length));
      } else if (args.length > 0 && args[0].equals("compact")) {
        compact(Arrays.copyOfRange(args, 1, args.length));
      } else {
        System.err.println("usage: PeerBench pe|compact ...");
        System.exit(2);
      }
    } catch (Throwable t) {
      System.out.flush();
      t.printStackTrace();
      System.exit(1);
    }
    System.out.flush();
    System.exit(0);
  }

  static void compact(String[] a) throws Exception {
    List<String> opts = new ArrayList<>(Arrays.asList(a).subList(0, a.length - 1));
    File table = new File(a[a.length - 1]);
    File[] regions = table.listFiles();
    Arrays.sort(regions);
    for (File region : regions) {
      if (!new File(region, ".regioninfo").exists()) continue;
      File[] families = region.listFiles();
      Arrays.sort(families);
      for (File family : families) {
        if (!family.isDirectory() || family.getName().startsWith(".")) continue;
        List<String> args = new ArrayList<>(opts);
        args.add("-major");
        args.add(family.getPath());
        StoreInterop.compact(args.toArray(new String[0]));
      }
    }
  }

  static byte[] row(long i) {
    byte[] r = new byte[26];
    for (int j = 25; j >= 0; j--) {
      r[j] = (byte) ('0' + i % 10);
      i /= 10;
    }
    return r;
  }

  static long xorshift(long x) {
    x ^= x << 13;
    x ^= x >>> 7;
    x ^= x << 17;
    return x;
  }

  static KeyValue key(long i) {
    return new KeyValue(row(i), FAMILY, QUALIFIER, 1L, KeyValue.Type.Put);
  }

  static void pe(String[] a) throws Exception {
    String dir = a[0];
    long rows = Long.parseLong(a[1]);
    int valueSize = Integer.parseInt(a[2]);
    long gets = Long.parseLong(a[3]);
    long scans = Long.parseLong(a[4]);
    int batch = Integer.parseInt(a[5]);
    long range = Long.parseLong(a[6]);
    Configuration conf = HFileInterop.conf();
    if (System.getProperty("hfile.block.cache.size") != null) {
      conf.set("hfile.block.cache.size", System.getProperty("hfile.block.cache.size"));
    }
    Path path = new Path(dir, "pe.hfile");
    HFileContext ctx = new HFileContextBuilder().withChecksumType(ChecksumType.CRC32C)
      .withBytesPerCheckSum(16384).withCompression(Compression.Algorithm.NONE)
      .withIncludesMvcc(true).withBlockSize(65536)
      .withCellComparator(CellComparatorImpl.COMPARATOR).build();
    FileSystem raw = FileSystem.getLocal(conf).getRawFileSystem();
    StoreFileWriter w = new StoreFileWriter.Builder(conf, CacheConfig.DISABLED, raw)
      .withFilePath(path).withBloomType(BloomType.ROW).withMaxKeyCount(rows).withFileContext(ctx)
      .build();
    long x = 0x9E3779B97F4A7C15L;
    byte[] value = new byte[valueSize];
    for (long i = 0; i < rows; i++) {
      for (int j = 0; j < valueSize; j += 8) {
        x = xorshift(x);
        byte c = (byte) ('A' + Long.remainderUnsigned(x, 26));
        for (int k = j; k < j + 8 && k < valueSize; k++) value[k] = c;
      }
      KeyValue kv = new KeyValue(row(i), FAMILY, QUALIFIER, 1L, value);
      kv.setSequenceId(i + 1);
      w.append(kv);
    }
    w.appendMetadata(rows, false);
    w.close();

    BlockCache cache = BlockCacheFactory.createBlockCache(conf);
    CacheConfig cacheConf = new CacheConfig(conf, cache);
    FileSystem fs = new HFileSystem(conf, true);
    HFile.Reader reader = HFile.createReader(fs, path, cacheConf, true, conf);
    {
      HFileScanner s = reader.getScanner(conf, true, true);
      for (long i = 0; i < rows; i++) {
        if (s.seekTo(key(i)) != 0) throw new IllegalStateException("row " + i + " missing");
      }
      s.close();
    }
    System.err.printf("block cache: %s, %d blocks, %d bytes%n", cache.getClass().getSimpleName(),
      cache.getBlockCount(), cache.getCurrentSize());

    for (String wl : a[7].split(",")) {
      String[] kt = wl.split(":");
      String kind = kt[0];
      int threads = Integer.parseInt(kt[1]);
      long ops = kind.equals("get") ? gets : kind.equals("multiget") ? gets / batch : scans;
      // A region server's JIT has long compiled this path: run a tenth of the workload first,
      // untimed, on this thread.
      client(reader, conf, kind, Math.max(1, ops / 10), 1000, rows, batch, range, new long[1]);
      long[][] lat = new long[threads][];
      long[] read = new long[threads];
      CyclicBarrier start = new CyclicBarrier(threads + 1);
      Thread[] ts = new Thread[threads];
      Throwable[] failed = new Throwable[1];
      for (int t = 0; t < threads; t++) {
        final int c = t;
        final long n = ops / threads + (t < ops % threads ? 1 : 0);
        ts[t] = new Thread(() -> {
          try {
            start.await();
            long[] r = new long[1];
            lat[c] = client(reader, conf, kind, n, c, rows, batch, range, r);
            read[c] = r[0];
          } catch (Throwable e) {
            failed[0] = e;
          }
        });
        ts[t].start();
      }
      start.await();
      long[] p0 = StoreInterop.procTimes();
      long t0 = System.nanoTime();
      for (Thread t : ts) t.join();
      double wall = (System.nanoTime() - t0) / 1e9;
      long[] p1 = StoreInterop.procTimes();
      if (failed[0] != null) throw new RuntimeException(failed[0]);
      int total = 0;
      long rowsRead = 0;
      for (int t = 0; t < threads; t++) {
        total += lat[t].length;
        rowsRead += read[t];
      }
      long[] all = new long[total];
      int at = 0;
      double mean = 0;
      for (long[] l : lat) {
        System.arraycopy(l, 0, all, at, l.length);
        at += l.length;
        for (long v : l) mean += v;
      }
      Arrays.sort(all);
      mean = total > 0 ? mean / total : 0;
      System.out.printf(
        "bench-result engine=hbase workload=%s threads=%d ops=%d rows=%d wall_s=%.4f user_s=%.4f sys_s=%.4f "
          + "mean_us=%.2f p50_us=%.2f p75_us=%.2f p95_us=%.2f p99_us=%.2f p999_us=%.2f max_us=%.2f%n",
        kind, threads, ops, rowsRead, wall, (p1[0] - p0[0]) / 100.0, (p1[1] - p0[1]) / 100.0,
        mean / 1000, q(all, 0.5), q(all, 0.75), q(all, 0.95), q(all, 0.99), q(all, 0.999), q(all, 1));
    }
    reader.close();
  }

  /** One client: n operations of kind; returns their latencies (ns), rows read in read[0]. */
  static long[] client(HFile.Reader reader, Configuration conf, String kind, long n, int c,
      long rows, int batch, long range, long[] read) throws Exception {
    long[] l = new long[(int) n];
    long r = 0, sum = 0;
    long y = 0x2545F4914F6CDD1DL ^ ((c + 1) * 0x9E3779B9L);
    HFileScanner s = reader.getScanner(conf, true, true);
    long[] batchRows = new long[batch];
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      if (kind.equals("get")) {
        y = xorshift(y);
        if (s.seekTo(key(Long.remainderUnsigned(y, rows))) != 0) throw new IllegalStateException("miss");
        Cell cell = s.getCell();
        sum += cell.getValueArray()[cell.getValueOffset()];
        r++;
      } else if (kind.equals("multiget")) {
        for (int j = 0; j < batch; j++) {
          y = xorshift(y);
          batchRows[j] = Long.remainderUnsigned(y, rows);
        }
        Arrays.sort(batchRows);
        for (int j = 0; j < batch; j++) {
          if (j == 0) {
            if (s.seekTo(key(batchRows[j])) != 0) throw new IllegalStateException("miss");
          } else if (batchRows[j] != batchRows[j - 1]) {
            if (s.reseekTo(key(batchRows[j])) != 0) throw new IllegalStateException("miss");
          }
          Cell cell = s.getCell();
          sum += cell.getValueArray()[cell.getValueOffset()];
          r++;
        }
      } else {
        y = xorshift(y);
        long first = Long.remainderUnsigned(y, rows);
        byte[] stop = row(first + range);
        if (s.seekTo(key(first)) != 0) throw new IllegalStateException("miss");
        do {
          Cell cell = s.getCell();
          if (Bytes.compareTo(cell.getRowArray(), cell.getRowOffset(), cell.getRowLength(),
              stop, 0, stop.length) >= 0) break;
          sum += cell.getValueArray()[cell.getValueOffset()];
          r++;
        } while (s.next());
      }
      l[i] = System.nanoTime() - t0;
    }
    if (sum == 42) System.err.println();
    s.close();
    read[0] = r;
    return l;
  }

  /** Quantile q of sorted nanosecond latencies, in microseconds. */
  static double q(long[] ns, double q) {
    if (ns.length == 0) return 0;
    int i = (int) (q * ns.length + 0.5) - 1;
    i = Math.max(0, Math.min(ns.length - 1, i));
    return ns[i] / 1000.0;
  }
}
