package org.apache.hadoop.hbase.regionserver;

import java.io.IOException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * A store opened outside a region server, as CompactionTool (hbase-mapreduce) opens one. It has
 * to live in HBase's package: the constructors it needs are package-private or protected, and
 * depending on hbase-mapreduce for one class would pull in MapReduce's jars.
 */
public final class CairnOfflineStore {
  private CairnOfflineStore() {
  }

  public static HStore open(Configuration conf, FileSystem fs, Path tableDir, TableDescriptor htd,
    RegionInfo hri, String family) throws IOException {
    HRegionFileSystem regionFs = new HRegionFileSystem(conf, fs, tableDir, hri);
    HRegion region = new HRegion(regionFs, null, conf, htd, null);
    return new HStore(region, htd.getColumnFamily(Bytes.toBytes(family)), conf, false);
  }
}
