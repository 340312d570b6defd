package dev.cairn.interop;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.fs.HFileSystem;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.regionserver.BloomType;
import org.apache.hadoop.hbase.regionserver.HStoreFile;
import org.apache.hadoop.hbase.regionserver.StoreFileInfo;
import org.apache.hadoop.hbase.regionserver.StoreFileScanner;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Reads a store (family) directory the way an HBase region server opening the region does:
 * each file through {@link StoreFileInfo}, which recognises reference files by their name
 * ({@code <hfile>.<parent encoded name>}) and opens them as the half of the parent's file they
 * name ({@code HalfStoreFileReader}), with HBase's inline checksum verification on.
 *
 * <p>Usage: {@code RegionDirInterop <familyDir>...}. Prints, per file, a line {@code file <name>
 * reference=<bool> maxSeqId=<n>} and then the cells the store would read from it, one per line:
 * {@code rowhex familyhex qualifierhex timestamp type valuehex}.
 */
public class RegionDirInterop {
  public static void main(String[] args) {
    try {
      Configuration conf = HFileInterop.conf();
      FileSystem fs = new HFileSystem(conf, true);
      for (String dir : args) {
        dump(conf, fs, new Path(new java.io.File(dir).getAbsolutePath()));
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

  static String hex(byte[] b) {
    return b.length == 0 ? "-" : Bytes.toHex(b);
  }

  static void dump(Configuration conf, FileSystem fs, Path dir) throws Exception {
    List<Path> files = new ArrayList<>();
    for (FileStatus s : fs.listStatus(dir)) {
      if (s.isFile() && !s.getPath().getName().startsWith(".")) files.add(s.getPath());
    }
    files.sort(null);
    StringBuilder sb = new StringBuilder();
    for (Path p : files) {
      if (!StoreFileInfo.isValid(fs.getFileStatus(p))) {
        throw new IllegalStateException("HBase does not take " + p + " as a store file");
      }
      StoreFileInfo info = new StoreFileInfo(conf, fs, fs.getFileStatus(p));
      HStoreFile sf = new HStoreFile(info, BloomType.ROW, CacheConfig.DISABLED);
      sf.initReader();
      try {
        System.out.println("file " + p.getName() + " reference=" + info.isReference()
          + " maxSeqId=" + sf.getMaxSequenceId());
        StoreFileScanner scanner =
          sf.getReader().getStoreFileScanner(false, false, false, Long.MAX_VALUE, 0, false);
        try {
          scanner.seek(KeyValue.LOWESTKEY);
          for (Cell c = scanner.next(); c != null; c = scanner.next()) {
            sb.setLength(0);
            sb.append(hex(CellUtil.cloneRow(c))).append(' ').append(hex(CellUtil.cloneFamily(c)))
              .append(' ').append(hex(CellUtil.cloneQualifier(c))).append(' ')
              .append(c.getTimestamp()).append(' ').append(c.getTypeByte() & 0xff).append(' ')
              .append(hex(CellUtil.cloneValue(c)));
            System.out.println(sb);
          }
        } finally {
          scanner.close();
        }
      } finally {
        sf.closeStoreFile(true);
      }
    }
  }
}
