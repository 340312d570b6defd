package dev.cairn.interop;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * What Hadoop's own Configuration makes of XML configuration files: {@code ConfDump FILE...
 * -- NAME...} adds the files in order (as HBase adds core-site.xml, then hbase-site.xml),
 * then prints, for each name, {@code NAME=VALUE} (get(), expanded), {@code NAME!ERROR} when
 * get() throws, or {@code NAME?} when the property is not set. With {@code -D NAME=VALUE}
 * before the files, the value is set() after them, as a command line's -D is.
 */
public final class ConfDump {
  private ConfDump() {}

  public static void main(String[] args) {
    Configuration conf = new Configuration(false);
    java.util.List<String[]> sets = new java.util.ArrayList<>();
    int i = 0;
    for (; i < args.length && !args[i].equals("--"); i++) {
      if (args[i].equals("-D")) {
        String[] kv = args[++i].split("=", 2);
        sets.add(kv);
      } else {
        conf.addResource(new Path(args[i]));
      }
    }
    for (String[] kv : sets) {
      conf.set(kv[0], kv[1]);
    }
    StringBuilder out = new StringBuilder();
    for (i++; i < args.length; i++) {
      String name = args[i];
      try {
        String v = conf.get(name);
        out.append(v == null ? name + "?" : name + "=" + v.replace("\n", "\\n")).append('\n');
      } catch (RuntimeException e) {
        out.append(name).append("!ERROR\n");
      }
    }
    System.out.print(out);
  }
}
