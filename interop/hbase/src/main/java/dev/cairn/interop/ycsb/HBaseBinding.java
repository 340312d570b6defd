package dev.cairn.interop.ycsb;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.BufferedMutatorParams;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.filter.PageFilter;
import org.apache.hadoop.hbase.util.Bytes;

import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB 0.17.0 binding on HBase 2.6.1's own Java client, behaving like YCSB's hbase10/hbase20
 * binding (which is not on Maven Central), so YCSB numbers against cairn and against HBase are
 * measured through the same client code.
 *
 * <p>Properties: {@code columnfamily} (required), {@code table} (default {@code usertable}),
 * {@code clientbuffering} (default false: writes go through a BufferedMutator when true),
 * {@code writebuffersize} (bytes, default 12 MiB), {@code durability} (a {@link Durability} name),
 * {@code hbase.usepagefilter} (default true), {@code debug}.
 *
 * <p>All threads share one Connection made from {@code HBaseConfiguration.create()}, so the
 * hbase-site.xml on the classpath decides how the client finds the cluster (RPC bootstrap
 * registry or ZooKeeper). YCSB does not create the table: it must exist with the family.
 */
public class HBaseBinding extends DB {
  /** YCSB's default write buffer: 12 MiB. */
  private static final long DEFAULT_WRITE_BUFFER = 12L * 1024 * 1024;

  /** Guards the shared connection and the count of threads using it. */
  private static final Object LOCK = new Object();
  private static Connection connection;
  private static int users;
  /** Whether some thread has already checked that the table exists. */
  private static boolean tableChecked;

  private boolean debug;
  private boolean clientBuffering;
  private long writeBufferSize = DEFAULT_WRITE_BUFFER;
  private Durability durability = Durability.USE_DEFAULT;
  private boolean usePageFilter = true;
  private byte[] family;
  /** The table this thread's Table and mutator are open on (YCSB passes the name per call). */
  private String tableName;
  private Table table;
  private BufferedMutator mutator;

  @Override
  public void init() throws DBException {
    Properties p = getProperties();
    debug = Boolean.parseBoolean(p.getProperty("debug", "false"));
    clientBuffering = Boolean.parseBoolean(p.getProperty("clientbuffering", "false"));
    String size = p.getProperty("writebuffersize");
    if (size != null) {
      try {
        writeBufferSize = Long.parseLong(size.trim());
      } catch (NumberFormatException e) {
        throw new DBException("writebuffersize is not a number of bytes: " + size);
      }
    }
    String d = p.getProperty("durability");
    if (d != null) {
      try {
        durability = Durability.valueOf(d.trim());
      } catch (IllegalArgumentException e) {
        throw new DBException("durability " + d + " is not one of SKIP_WAL, ASYNC_WAL, "
            + "SYNC_WAL, FSYNC_WAL, USE_DEFAULT");
      }
    }
    usePageFilter = Boolean.parseBoolean(p.getProperty("hbase.usepagefilter", "true"));
    String cf = p.getProperty("columnfamily");
    if (cf == null || cf.isEmpty()) {
      throw new DBException("No columnfamily specified (set -p columnfamily=...)");
    }
    family = Bytes.toBytes(cf);
    String name = p.getProperty("table", "usertable");

    synchronized (LOCK) {
      try {
        if (connection == null) {
          Configuration conf = HBaseConfiguration.create();
          connection = ConnectionFactory.createConnection(conf);
        }
        users++;
        if (!tableChecked) {
          try (Admin admin = connection.getAdmin()) {
            if (!admin.tableExists(TableName.valueOf(name))) {
              throw new DBException("Table " + name + " does not exist; create it with family "
                  + cf + " before running YCSB");
            }
          }
          tableChecked = true;
        }
      } catch (IOException e) {
        throw new DBException("connecting to HBase: " + e, e);
      }
    }
    if (debug) {
      System.err.println("HBaseBinding: table " + name + ", family " + cf + ", clientbuffering "
          + clientBuffering + ", durability " + durability);
    }
  }

  /** Opens this thread's Table (and mutator) on {@code name}, reusing them when unchanged. */
  private void open(String name) throws IOException {
    if (name.equals(tableName)) {
      return;
    }
    closeTable();
    TableName t = TableName.valueOf(name);
    table = connection.getTable(t);
    if (clientBuffering) {
      mutator = connection.getBufferedMutator(
          new BufferedMutatorParams(t).writeBufferSize(writeBufferSize));
    }
    tableName = name;
  }

  private void closeTable() throws IOException {
    try {
      if (mutator != null) {
        mutator.close();
      }
      if (table != null) {
        table.close();
      }
    } finally {
      mutator = null;
      table = null;
      tableName = null;
    }
  }

  @Override
  public void cleanup() throws DBException {
    try {
      closeTable();
    } catch (IOException e) {
      throw new DBException("closing table: " + e, e);
    } finally {
      synchronized (LOCK) {
        users--;
        if (users <= 0 && connection != null) {
          try {
            connection.close();
          } catch (IOException e) {
            throw new DBException("closing connection: " + e, e);
          } finally {
            connection = null;
            tableChecked = false;
          }
        }
      }
    }
  }

  /** Adds the whole family, or the named fields of it, to a Get or Scan's column set. */
  private interface Columns {
    void family(byte[] f);

    void column(byte[] f, byte[] q);
  }

  private void select(Set<String> fields, Columns c) {
    if (fields == null) {
      c.family(family);
    } else {
      for (String f : fields) {
        c.column(family, Bytes.toBytes(f));
      }
    }
  }

  private static void copy(Result r, Map<String, ByteIterator> into) {
    for (Cell cell : r.rawCells()) {
      into.put(Bytes.toString(CellUtil.cloneQualifier(cell)),
          new ByteArrayByteIterator(CellUtil.cloneValue(cell)));
    }
  }

  @Override
  public Status read(String tbl, String key, Set<String> fields,
      Map<String, ByteIterator> result) {
    try {
      open(tbl);
      Get get = new Get(Bytes.toBytes(key));
      select(fields, new Columns() {
        public void family(byte[] f) {
          get.addFamily(f);
        }

        public void column(byte[] f, byte[] q) {
          get.addColumn(f, q);
        }
      });
      Result r = table.get(get);
      if (r.isEmpty()) {
        return Status.NOT_FOUND;
      }
      copy(r, result);
      return Status.OK;
    } catch (IOException e) {
      report("read", key, e);
      return Status.ERROR;
    }
  }

  @Override
  public Status scan(String tbl, String startkey, int recordcount, Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    try {
      open(tbl);
      Scan scan = new Scan().withStartRow(Bytes.toBytes(startkey));
      scan.setCaching(recordcount);
      if (usePageFilter) {
        scan.setFilter(new PageFilter(recordcount));
      }
      select(fields, new Columns() {
        public void family(byte[] f) {
          scan.addFamily(f);
        }

        public void column(byte[] f, byte[] q) {
          scan.addColumn(f, q);
        }
      });
      try (ResultScanner rs = table.getScanner(scan)) {
        int n = 0;
        for (Result r : rs) {
          HashMap<String, ByteIterator> row = new HashMap<>();
          copy(r, row);
          result.add(row);
          // PageFilter limits rows per region, not per scan: stop here.
          if (++n >= recordcount) {
            break;
          }
        }
      }
      return Status.OK;
    } catch (IOException e) {
      report("scan", startkey, e);
      return Status.ERROR;
    }
  }

  @Override
  public Status update(String tbl, String key, Map<String, ByteIterator> values) {
    try {
      open(tbl);
      Put put = new Put(Bytes.toBytes(key));
      put.setDurability(durability);
      for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
        put.addColumn(family, Bytes.toBytes(e.getKey()), e.getValue().toArray());
      }
      if (mutator != null) {
        mutator.mutate(put);
      } else {
        table.put(put);
      }
      return Status.OK;
    } catch (IOException e) {
      report("update", key, e);
      return Status.ERROR;
    }
  }

  @Override
  public Status insert(String tbl, String key, Map<String, ByteIterator> values) {
    return update(tbl, key, values);
  }

  @Override
  public Status delete(String tbl, String key) {
    try {
      open(tbl);
      Delete del = new Delete(Bytes.toBytes(key));
      del.setDurability(durability);
      if (mutator != null) {
        mutator.mutate(del);
      } else {
        table.delete(del);
      }
      return Status.OK;
    } catch (IOException e) {
      report("delete", key, e);
      return Status.ERROR;
    }
  }

  private void report(String op, String key, IOException e) {
    System.err.println("HBaseBinding: " + op + " " + key + " failed: " + e);
    if (debug) {
      e.printStackTrace();
    }
  }
}
