package dev.cairn.interop;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeSet;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellComparatorImpl;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.fs.HFileSystem;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.io.encoding.DataBlockEncoding;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.io.hfile.HFile;
import org.apache.hadoop.hbase.io.hfile.HFileContext;
import org.apache.hadoop.hbase.io.hfile.HFileContextBuilder;
import org.apache.hadoop.hbase.io.hfile.HFileScanner;
import org.apache.hadoop.hbase.regionserver.BloomType;
import org.apache.hadoop.hbase.regionserver.HRegion;
import org.apache.hadoop.hbase.regionserver.CairnOfflineStore;
import org.apache.hadoop.hbase.regionserver.HRegionFileSystem;
import org.apache.hadoop.hbase.regionserver.HStore;
import org.apache.hadoop.hbase.regionserver.HStoreFile;
import org.apache.hadoop.hbase.regionserver.Store;
import org.apache.hadoop.hbase.regionserver.StoreFileWriter;
import org.apache.hadoop.hbase.regionserver.compactions.CompactionContext;
import org.apache.hadoop.hbase.regionserver.compactions.CompactionLifeCycleTracker;
import org.apache.hadoop.hbase.regionserver.throttle.NoLimitThroughputController;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.ChecksumType;
import org.apache.hadoop.hbase.util.FSTableDescriptors;

/**
 * HBase 2.6's store code on HBase's directory layout, driven by cairn's compaction tests and
 * benchmark.
 *
 * <pre>
 * write-store FAMILY_DIR FILES ROWS_PER_FILE VALUE_BYTES SEED [FIRST_FILE_SCALE [DELETE_PERCENT
 *     [DATA_BLOCK_ENCODING]]]
 *     writes FILES store files as successive memstore flushes would (StoreFileWriter, CRC32C per
 *     16 KiB, 64 KiB blocks, MVCC and tags, ROW Bloom, flush metadata): rows overlap between
 *     files, columns have several versions, timestamps collide across files, and a share of the
 *     cells are Delete / DeleteColumn / DeleteFamily / DeleteFamilyVersion markers. File i holds
 *     sequence ids (i * 10^9, (i + 1) * 10^9]. The first file has FIRST_FILE_SCALE times the rows.
 * dump PATH...
 *     every cell of each file (a directory: its store files) through HBase's reader with inline
 *     checksum verification on, after opening it as a store file (HStoreFile.initReader):
 *     "file NAME entries=N maxSeqId=S major=B timeRange=LO..HI mvcc=B bytes=N bloomKeys=N
 *     encoding=E info:KEY=VALUE_LENGTH..." then one line per cell,
 *     "row family qualifier timestamp type value seqid", byte fields in hex ("-" when empty).
 * compact [-major] [-once] [-D KEY=VALUE]... FAMILY_DIR
 *     HBase's CompactionTool on one family directory (same steps: triggerMajorCompaction,
 *     requestCompaction at user priority, compact, until needsCompaction is false or -once),
 *     with the region's read point at the store's max sequence id as an opened region has it
 *     (-Dcairn.compactiontool.readpoint.zero=true keeps CompactionTool's read point of 0).
 *     Prints "cpu thread_user_s= thread_sys_s= user_s= sys_s= wall_s= bytes_in=" for the
 *     compaction steps alone: the compacting thread's CPU time and the whole process's.
 * </pre>
 */
public class StoreInterop {
  static final long SEQ_STRIDE = 1_000_000_000L;
  static final long TS_BASE = 1_700_000_000_000L;
  static final byte[] FAMILY = Bytes.toBytes("f");

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: StoreInterop write-store|dump|compact ...");
      System.exit(2);
    }
    try {
      switch (args[0]) {
        case "write-store":
          writeStore(args);
          break;
        case "dump":
          dump(Arrays.copyOfRange(args, 1, args.length));
          break;
        case "compact":
          compact(Arrays.copyOfRange(args, 1, args.length));
          break;
        default:
          System.err.println("unknown mode " + args[0]);
          System.exit(2);
      }
    } catch (Throwable t) {
      System.out.flush();
      t.printStackTrace();
      // HBase leaves non-daemon threads behind; without exit the JVM would hang.
      System.exit(1);
    }
    System.out.flush();
    System.exit(0);
  }

  static Configuration conf() {
    Configuration conf = HFileInterop.conf();
    return conf;
  }

  static void writeStore(String[] a) throws Exception {
    Path dir = new Path(new java.io.File(a[1]).getAbsolutePath());
    int files = Integer.parseInt(a[2]);
    int rowsPerFile = Integer.parseInt(a[3]);
    int valueBytes = Integer.parseInt(a[4]);
    long seed = Long.parseLong(a[5]);
    int firstScale = a.length > 6 ? Integer.parseInt(a[6]) : 1;
    int deletePercent = a.length > 7 ? Integer.parseInt(a[7]) : 10;
    DataBlockEncoding encoding = a.length > 8 ? DataBlockEncoding.valueOf(a[8]) : DataBlockEncoding.NONE;
    Configuration conf = conf();
    // The raw local filesystem, as HFileInterop: the checksummed one would add .crc side files.
    FileSystem fs = FileSystem.getLocal(conf).getRawFileSystem();
    fs.mkdirs(dir);
    Random rnd = new Random(seed);
    // Twice as many rows as a file holds: files overlap on about half their rows.
    int keyspace = Math.max(1, rowsPerFile * 2);
    for (int i = 0; i < files; i++) {
      int rows = rowsPerFile * (i == 0 ? firstScale : 1);
      TreeSet<KeyValue> cells = new TreeSet<>((x, y) -> CellComparatorImpl.COMPARATOR.compare(x, y, true));
      long seqLo = i * SEQ_STRIDE;
      for (int r = 0; r < rows; r++) {
        byte[] row = Bytes.toBytes(String.format("row%08d", rnd.nextInt(Math.max(keyspace, rows))));
        // Timestamps come from a narrow window so versions collide across files: the same
        // key in two files, and markers that hit puts written before and after them.
        if (rnd.nextInt(100) < deletePercent / 3) {
          KeyValue.Type t = rnd.nextBoolean() ? KeyValue.Type.DeleteFamily
            : KeyValue.Type.DeleteFamilyVersion;
          cells.add(new KeyValue(row, FAMILY, new byte[0], TS_BASE + rnd.nextInt(12), t));
        }
        int cols = 1 + rnd.nextInt(3);
        for (int q = 0; q < cols; q++) {
          byte[] qual = Bytes.toBytes("q" + rnd.nextInt(4));
          int versions = 1 + rnd.nextInt(4);
          for (int v = 0; v < versions; v++) {
            long ts = TS_BASE + rnd.nextInt(12);
            KeyValue kv;
            if (rnd.nextInt(100) < deletePercent) {
              KeyValue.Type t = rnd.nextBoolean() ? KeyValue.Type.Delete : KeyValue.Type.DeleteColumn;
              kv = new KeyValue(row, FAMILY, qual, ts, t);
            } else {
              byte[] value = new byte[valueBytes];
              rnd.nextBytes(value);
              kv = new KeyValue(row, FAMILY, qual, ts, KeyValue.Type.Put, value);
            }
            cells.add(kv);
          }
        }
      }
      // A flush's sequence ids follow write order, not key order.
      long maxSeq = seqLo;
      for (KeyValue kv : cells) {
        long s = seqLo + 1 + rnd.nextInt((int) Math.min(Integer.MAX_VALUE, SEQ_STRIDE - 1));
        kv.setSequenceId(s);
        maxSeq = Math.max(maxSeq, s);
      }
      HFileContext ctx = new HFileContextBuilder().withChecksumType(ChecksumType.CRC32C)
        .withBytesPerCheckSum(16384).withCompression(Compression.Algorithm.NONE)
        .withIncludesMvcc(true).withIncludesTags(true).withBlockSize(65536)
        .withColumnFamily(FAMILY).withTableName(Bytes.toBytes("t"))
        .withCellComparator(CellComparatorImpl.COMPARATOR).withDataBlockEncoding(encoding).build();
      StoreFileWriter w = new StoreFileWriter.Builder(conf, CacheConfig.DISABLED, fs)
        .withOutputDir(dir).withBloomType(BloomType.ROW).withMaxKeyCount(cells.size())
        .withFileContext(ctx).build();
      for (KeyValue kv : cells) w.append(kv);
      // What DefaultStoreFlusher's finalizeWriter records: max seq id, not a major result,
      // plus the time range and earliest put the writer tracked.
      w.appendMetadata(maxSeq, false);
      w.close();
      System.out.println("wrote " + w.getPath().getName() + " cells=" + cells.size()
        + " maxSeqId=" + maxSeq);
    }
  }

  static String hex(byte[] b) {
    return b.length == 0 ? "-" : Bytes.toHex(b);
  }

  static List<Path> storeFiles(FileSystem fs, Path p) throws Exception {
    List<Path> out = new ArrayList<>();
    if (fs.getFileStatus(p).isDirectory()) {
      for (FileStatus s : fs.listStatus(p)) {
        if (s.isFile() && !s.getPath().getName().startsWith(".")) out.add(s.getPath());
      }
      out.sort(null);
    } else {
      out.add(p);
    }
    return out;
  }

  static void dump(String[] paths) throws Exception {
    Configuration conf = conf();
    // HFileSystem(conf, true) is what makes HBase verify its inline block checksums.
    FileSystem fs = new HFileSystem(conf, true);
    StringBuilder sb = new StringBuilder();
    for (String p : paths) {
      for (Path path : storeFiles(fs, new Path(new java.io.File(p).getAbsolutePath()))) {
        // As a store opens it: parses MAX_SEQ_ID, MAJOR_COMPACTION, TIMERANGE, the Bloom meta.
        HStoreFile sf = new HStoreFile(fs, path, conf, CacheConfig.DISABLED, BloomType.ROW, true);
        sf.initReader();
        String tr = sf.getMinimumTimestamp().isPresent()
          ? sf.getMinimumTimestamp().getAsLong() + ".." + sf.getMaximumTimestamp().getAsLong()
          : "none";
        long bloomKeys = sf.getReader().getFilterEntries();
        sf.closeStoreFile(true);
        HFile.Reader reader = HFile.createReader(fs, path, CacheConfig.DISABLED, true, conf);
        try {
          sb.setLength(0);
          sb.append("file ").append(path.getName()).append(" entries=").append(reader.getEntries())
            .append(" maxSeqId=").append(sf.getMaxSequenceId()).append(" major=")
            .append(sf.isMajorCompactionResult()).append(" timeRange=").append(tr)
            .append(" mvcc=").append(reader.getFileContext().isIncludesMvcc())
            .append(" bytes=").append(fs.getFileStatus(path).getLen())
            .append(" bloomKeys=").append(bloomKeys)
            .append(" encoding=").append(reader.getDataBlockEncoding());
          for (Map.Entry<byte[], byte[]> e : reader.getHFileInfo().entrySet()) {
            sb.append(" info:").append(Bytes.toString(e.getKey())).append('=')
              .append(e.getValue().length);
          }
          System.out.println(sb);
          HFileScanner scanner = reader.getScanner(conf, false, true);
          if (scanner.seekTo()) {
            do {
              Cell c = scanner.getCell();
              sb.setLength(0);
              sb.append(hex(CellUtil.cloneRow(c))).append(' ').append(hex(CellUtil.cloneFamily(c)))
                .append(' ').append(hex(CellUtil.cloneQualifier(c))).append(' ')
                .append(c.getTimestamp()).append(' ').append(c.getTypeByte() & 0xff).append(' ')
                .append(hex(CellUtil.cloneValue(c))).append(' ').append(c.getSequenceId());
              System.out.println(sb);
            } while (scanner.next());
          }
        } finally {
          reader.close();
        }
      }
    }
  }

  static void compact(String[] a) throws Exception {
    boolean major = false;
    boolean once = false;
    Configuration conf = conf();
    // Outside a region server there is no ChunkCreator: closing an MSLAB memstore would NPE.
    conf.setBoolean("hbase.hregion.memstore.mslab.enabled", false);
    String dirArg = null;
    for (int i = 0; i < a.length; i++) {
      if (a[i].equals("-major")) major = true;
      else if (a[i].equals("-once")) once = true;
      else if (a[i].equals("-D")) {
        String[] kv = a[++i].split("=", 2);
        conf.set(kv[0], kv[1]);
      } else dirArg = a[i];
    }
    Path familyDir = new Path(new java.io.File(dirArg).getAbsolutePath());
    Path regionDir = familyDir.getParent();
    Path tableDir = regionDir.getParent();
    // Compacted files are archived under hbase.rootdir: keep them inside the test's tree.
    Path root = tableDir.getParent().getParent().getParent();
    conf.set("hbase.rootdir", root.toUri().toString());
    FileSystem fs = FileSystem.getLocal(conf).getRawFileSystem();
    TableDescriptor htd = FSTableDescriptors.getTableDescriptorFromFs(fs, tableDir);
    RegionInfo hri = HRegionFileSystem.loadRegionInfoFileContent(fs, regionDir);
    HStore store = CairnOfflineStore.open(conf, fs, tableDir, htd, hri, familyDir.getName());
    HRegion region = store.getHRegion();
    // CompactionTool's region is never opened, so its read point stays 0 and every cell looks
    // newer than any reader: nothing would be dropped. An opened region's read point is its
    // max sequence id (HRegion.initializeRegionInternals), which is what cairn assumes.
    if (!Boolean.getBoolean("cairn.compactiontool.readpoint.zero")) {
      region.getMVCC().advanceTo(store.getMaxSequenceId().orElse(0));
    }
    long bytesIn = 0;
    java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long[] proc0 = procTimes();
    long user0 = threads.getCurrentThreadUserTime();
    long thread0 = threads.getCurrentThreadCpuTime();
    long t0 = System.nanoTime();
    if (major) store.triggerMajorCompaction();
    do {
      Optional<CompactionContext> c =
        store.requestCompaction(Store.PRIORITY_USER, CompactionLifeCycleTracker.DUMMY, null);
      if (!c.isPresent()) break;
      bytesIn += c.get().getRequest().getSize();
      store.compact(c.get(), NoLimitThroughputController.INSTANCE, null);
    } while (store.needsCompaction() && !once);
    long wall = System.nanoTime() - t0;
    long user = threads.getCurrentThreadUserTime() - user0;
    long threadCpu = threads.getCurrentThreadCpuTime() - thread0;
    long[] proc1 = procTimes();
    store.close();
    // The compaction runs on this thread; the process figures add GC, JIT and HBase's
    // background threads, which a region server pays for too.
    System.out.printf(
      "cpu thread_user_s=%.6f thread_sys_s=%.6f user_s=%.6f sys_s=%.6f wall_s=%.6f bytes_in=%d%n",
      user / 1e9, (threadCpu - user) / 1e9, (proc1[0] - proc0[0]) / 100.0,
      (proc1[1] - proc0[1]) / 100.0, wall / 1e9, bytesIn);
  }

  /** This process's user and system time in clock ticks (USER_HZ, 100 on Linux). */
  static long[] procTimes() throws java.io.IOException {
    String stat = new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("/proc/self/stat")),
      java.nio.charset.StandardCharsets.US_ASCII);
    // Fields after the parenthesised command name start at field 3 (state); utime is 14.
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return new long[] { Long.parseLong(f[11]), Long.parseLong(f[12]) };
  }
}
