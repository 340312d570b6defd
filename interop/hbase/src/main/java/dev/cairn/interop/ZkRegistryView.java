package dev.cairn.interop;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Abortable;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.master.RegionState;
import org.apache.hadoop.hbase.shaded.protobuf.generated.HBaseProtos;
import org.apache.hadoop.hbase.shaded.protobuf.generated.ZooKeeperProtos;
import org.apache.hadoop.hbase.zookeeper.MasterAddressTracker;
import org.apache.hadoop.hbase.zookeeper.MetaTableLocator;
import org.apache.hadoop.hbase.zookeeper.ZKClusterId;
import org.apache.hadoop.hbase.zookeeper.ZKMetadata;
import org.apache.hadoop.hbase.zookeeper.ZKUtil;
import org.apache.hadoop.hbase.zookeeper.ZKWatcher;
import org.apache.hadoop.hbase.zookeeper.ZNodePaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * What HBase 2.6.1's own ZooKeeper code reads from a cluster's znodes: the cluster id, the
 * active master and its info port, the meta location and state, the live region servers and
 * the running flag, each through the HBase class that reads it in a real cluster
 * ({@code ZKClusterId}, {@code MasterAddressTracker}, {@code MetaTableLocator}, {@code ZKUtil}),
 * plus every znode's raw bytes and whether it is ephemeral.
 *
 * <pre>
 *   ZkRegistryView HOST:PORT [PARENT]
 * </pre>
 *
 * <p>Prints one line per fact, {@code key value…}; a missing znode prints {@code key -}. Exits
 * 1 when HBase's code throws on what it reads (the exception is printed).
 */
public final class ZkRegistryView {
  private ZkRegistryView() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: ZkRegistryView HOST:PORT [PARENT]");
      System.exit(2);
    }
    Configuration conf = HBaseConfiguration.create();
    int colon = args[0].lastIndexOf(':');
    conf.set("hbase.zookeeper.quorum", args[0].substring(0, colon));
    conf.set("hbase.zookeeper.property.clientPort", args[0].substring(colon + 1));
    conf.setInt("zookeeper.recovery.retry", 1);
    if (args.length > 1) {
      conf.set("zookeeper.znode.parent", args[1]);
    }
    Abortable abort = new Abortable() {
      @Override
      public void abort(String why, Throwable e) {
        System.out.println("abort " + why);
      }

      @Override
      public boolean isAborted() {
        return false;
      }
    };
    int code = 0;
    try (ZKWatcher zkw = new ZKWatcher(conf, "cairn-zk-view", abort)) {
      ZNodePaths paths = zkw.getZNodePaths();
      List<String> children = ZKUtil.listChildrenNoWatch(zkw, paths.baseZNode);
      System.out.println("children " + (children == null ? "-" : sorted(children)));
      List<String> rs = ZKUtil.listChildrenNoWatch(zkw, paths.rsZNode);
      System.out.println("rs " + (rs == null ? "-" : sorted(rs)));
      // The session behind HBase's wrapper, for the bytes as stored; it exists once the
      // wrapper has made a call.
      ZooKeeper raw = zkw.getRecoverableZooKeeper().getZooKeeper();
      for (String p : new String[] {paths.clusterIdZNode, paths.masterAddressZNode,
          paths.getZNodeForReplica(0), paths.clusterStateZNode}) {
        rawLine(raw, p);
      }
      if (rs != null) {
        for (String r : rs) {
          String p = ZNodePaths.joinZNode(paths.rsZNode, r);
          rawLine(raw, p);
          byte[] stored = ZKUtil.getDataNoWatch(zkw, p, null);
          if (stored == null) {
            // Listed, then gone: an ephemeral node whose session expired in between.
            continue;
          }
          byte[] d = ZKMetadata.removeMetaData(stored);
          HBaseProtos.RegionServerInfo info = HBaseProtos.RegionServerInfo.parser()
              .parseFrom(d, 4, d.length - 4);
          System.out.println("rs_info " + r + " info_port=" + info.getInfoPort() + " version="
              + info.getVersionInfo().getVersion());
        }
      }
      try {
        System.out.println("cluster_id " + orDash(ZKClusterId.readClusterIdZNode(zkw)));
        ServerName master = masterOrNull(zkw, paths);
        System.out.println("master " + orDash(master));
        if (master != null) {
          System.out.println("master_info_port " + MasterAddressTracker.getMasterInfoPort(zkw));
        }
        RegionState meta = MetaTableLocator.getMetaRegionState(zkw);
        System.out.println("meta " + (meta == null || meta.getServerName() == null ? "-"
            : meta.getServerName() + " " + meta.getState()));
        byte[] up = ZKUtil.getDataNoWatch(zkw, paths.clusterStateZNode, null);
        if (up == null) {
          System.out.println("running -");
        } else {
          byte[] d = ZKMetadata.removeMetaData(up);
          System.out.println("running " + ZooKeeperProtos.ClusterUp.parser()
              .parseFrom(d, 4, d.length - 4).getStartDate());
        }
      } catch (Exception e) {
        System.out.println("error " + e);
        e.printStackTrace();
        code = 1;
      }
    }
    System.exit(code);
  }

  /** The master's address, or null when its ephemeral znode is missing or vanishes mid-read. */
  private static ServerName masterOrNull(ZKWatcher zkw, ZNodePaths paths) throws Exception {
    try {
      return MasterAddressTracker.getMasterAddress(zkw);
    } catch (IOException e) {
      // HBase's tracker answers a missing znode with "znode data == null", not null.
      if (ZKUtil.checkExists(zkw, paths.masterAddressZNode) < 0) {
        return null;
      }
      throw e;
    }
  }

  private static List<String> sorted(List<String> l) {
    String[] a = l.toArray(new String[0]);
    Arrays.sort(a);
    return Arrays.asList(a);
  }

  private static String orDash(Object o) {
    return o == null ? "-" : o.toString();
  }

  /** {@code znode PATH ephemeral=BOOL hex=…}, or {@code znode PATH -} when missing. */
  private static void rawLine(ZooKeeper zk, String path) throws Exception {
    // One read, no exists() first: an ephemeral node may expire between two calls.
    Stat stat = new Stat();
    byte[] data;
    try {
      data = zk.getData(path, false, stat);
    } catch (KeeperException.NoNodeException e) {
      System.out.println("znode " + path + " -");
      return;
    }
    StringBuilder hex = new StringBuilder();
    for (byte b : data) {
      hex.append(String.format("%02x", b & 0xff));
    }
    System.out.println("znode " + path + " ephemeral=" + (stat.getEphemeralOwner() != 0)
        + " hex=" + hex);
  }
}
