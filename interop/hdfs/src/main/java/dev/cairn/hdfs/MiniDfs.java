package dev.cairn.hdfs;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DFSTestUtil;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.server.datanode.FsDatasetTestUtils.MaterializedReplica;

/**
 * A MiniDFSCluster for cairn's tests, driven over stdin/stdout so a Rust test can start it, use
 * it through hdfs-native, and damage replicas on a DataNode's disk.
 *
 * <pre>
 * usage: MiniDfs BASE_DIR DATANODES
 * prints: READY hdfs://127.0.0.1:PORT
 * commands (one per line on stdin; each answers one line starting with OK or ERR):
 *   corrupt PATH        damage the first block of PATH on one DataNode holding it
 *   corrupt-all PATH    damage the first block of PATH on every DataNode holding it
 *   replicas PATH       how many DataNodes hold the first block of PATH
 *   corrupt-replica-blocks  how many blocks the NameNode knows to have a corrupt replica
 *   checksum MODE PATH  HDFS's file checksum of PATH (MODE: MD5MD5CRC or COMPOSITE_CRC)
 *   quit                shut down (so does end of input)
 * </pre>
 */
public final class MiniDfs {
  public static void main(String[] args) {
    // The protocol owns stdout; Hadoop's console logging goes to stderr (set before any Hadoop
    // class configures its logger).
    final java.io.PrintStream out = System.out;
    System.setOut(System.err);
    int code = 0;
    MiniDFSCluster cluster = null;
    try {
      if (args.length != 2) {
        throw new IllegalArgumentException("usage: MiniDfs BASE_DIR DATANODES");
      }
      int datanodes = Integer.parseInt(args[1]);
      Configuration conf = new Configuration();
      conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(args[0]).getAbsolutePath());
      conf.setInt("dfs.replication", Math.min(3, datanodes));
      // Small blocks (HDFS's minimum): files of a few MiB span several blocks, so block
      // boundaries are exercised by every test.
      conf.setLong("dfs.blocksize", 1 << 20);
      // With fewer DataNodes than a pipeline wants, appends and hsyncs must not fail over to
      // DataNodes that do not exist (seen flaking with three).
      conf.setBoolean("dfs.client.block.write.replace-datanode-on-failure.best-effort", true);
      conf.set("dfs.client.block.write.replace-datanode-on-failure.policy", "NEVER");
      // Lease recovery in tests should take seconds, not the production minutes.
      conf.setLong("dfs.heartbeat.interval", 1);
      conf.setInt("dfs.namenode.heartbeat.recheck-interval", 2000);
      cluster = new MiniDFSCluster.Builder(conf).numDataNodes(datanodes).build();
      cluster.waitActive();
      DistributedFileSystem fs = cluster.getFileSystem();
      out.println("READY hdfs://127.0.0.1:" + cluster.getNameNodePort());
      out.flush();

      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String line;
      while ((line = in.readLine()) != null) {
        line = line.trim();
        if (line.isEmpty()) {
          continue;
        }
        if (line.equals("quit")) {
          break;
        }
        String[] parts = line.split(" ", 2);
        try {
          switch (parts[0]) {
            case "corrupt":
            case "corrupt-all": {
              ExtendedBlock block = DFSTestUtil.getFirstBlock(fs, new Path(parts[1]));
              StringBuilder damaged = new StringBuilder();
              int n = 0;
              for (int i = 0; i < cluster.getDataNodes().size(); i++) {
                MaterializedReplica replica;
                try {
                  replica = cluster.getMaterializedReplica(i, block);
                } catch (Exception notHere) {
                  continue;
                }
                replica.corruptData();
                damaged.append(' ').append(cluster.getDataNodes().get(i).getXferAddress());
                n++;
                if (parts[0].equals("corrupt")) {
                  break;
                }
              }
              if (n == 0) {
                throw new IllegalStateException("no DataNode holds " + block);
              }
              out.println("OK " + n + damaged);
              break;
            }
            case "replicas": {
              ExtendedBlock block = DFSTestUtil.getFirstBlock(fs, new Path(parts[1]));
              int n = 0;
              for (int i = 0; i < cluster.getDataNodes().size(); i++) {
                try {
                  cluster.getMaterializedReplica(i, block);
                  n++;
                } catch (Exception notHere) {
                  // not on this DataNode
                }
              }
              out.println("OK " + n);
              break;
            }
            case "corrupt-replica-blocks": {
              // Counts replicas reported bad by clients (reportBadBlocks) or DataNodes.
              out.println("OK " + cluster.getNamesystem().getCorruptReplicaBlocks());
              break;
            }
            case "checksum": {
              // checksum MODE PATH: HDFS's own file checksum (MD5MD5CRC or COMPOSITE_CRC), as
              // `hdfs dfs -checksum` gets it: algorithm name, then the bytes in hex.
              String[] args2 = parts[1].split(" ", 2);
              Configuration c = new Configuration(fs.getConf());
              c.set("dfs.checksum.combine.mode", args2[0]);
              try (org.apache.hadoop.fs.FileSystem f =
                  org.apache.hadoop.fs.FileSystem.newInstance(fs.getUri(), c)) {
                org.apache.hadoop.fs.FileChecksum sum = f.getFileChecksum(new Path(args2[1]));
                StringBuilder hex = new StringBuilder();
                byte[] b = sum.getBytes();
                for (int i = 0; i < sum.getLength(); i++) {
                  hex.append(String.format("%02x", b[i] & 0xff));
                }
                out.println("OK " + sum.getAlgorithmName() + " " + hex);
              }
              break;
            }
            default:
              out.println("ERR unknown command: " + parts[0]);
          }
        } catch (Exception e) {
          out.println("ERR " + e.toString().replace('\n', ' '));
        }
        out.flush();
      }
    } catch (Throwable t) {
      t.printStackTrace();
      code = 1;
    } finally {
      if (cluster != null) {
        try {
          cluster.shutdown();
        } catch (Throwable t) {
          t.printStackTrace();
        }
      }
    }
    // MiniDFSCluster leaves non-daemon threads behind: without an explicit exit the JVM hangs.
    System.exit(code);
  }
}
