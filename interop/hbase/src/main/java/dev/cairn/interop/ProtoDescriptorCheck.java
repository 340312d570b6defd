package dev.cairn.interop;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.hbase.util.VersionInfo;
import org.apache.hbase.thirdparty.com.google.protobuf.DescriptorProtos.DescriptorProto;
import org.apache.hbase.thirdparty.com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import org.apache.hbase.thirdparty.com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import org.apache.hbase.thirdparty.com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import org.apache.hbase.thirdparty.com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import org.apache.hbase.thirdparty.com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import org.apache.hbase.thirdparty.com.google.protobuf.Descriptors.Descriptor;
import org.apache.hbase.thirdparty.com.google.protobuf.Descriptors.EnumDescriptor;
import org.apache.hbase.thirdparty.com.google.protobuf.Descriptors.EnumValueDescriptor;
import org.apache.hbase.thirdparty.com.google.protobuf.Descriptors.FieldDescriptor;
import org.apache.hbase.thirdparty.com.google.protobuf.Descriptors.FileDescriptor;

/**
 * Compares cairn's protobuf definitions (a FileDescriptorSet, crates/cairn-rpc/proto/cairn.desc)
 * with the descriptors compiled into HBase's own hbase-protocol-shaded jar.
 *
 * <p>cairn keeps trimmed copies of HBase's .proto files; a wrong field number or type there would
 * silently corrupt every call that uses it, so each message and enum cairn defines is looked up
 * by full name among HBase's, and every field must agree in number, name, type, label, referenced
 * type, default and packing. Since cairn keeps each message whole, an HBase field that cairn
 * lacks is an error too (a client's value for it would be dropped).
 *
 * <p>Usage: {@code ProtoDescriptorCheck <cairn.desc>}. Prints one {@code MISMATCH} line per
 * difference and exits 1, or prints {@code OK ...} with counts and exits 0.
 */
public final class ProtoDescriptorCheck {
  /** The outer classes HBase generates for the .proto files cairn copies from. */
  private static final String[] HBASE_OUTER_CLASSES = {
    "RPCProtos", "TracingProtos", "HBaseProtos", "CellProtos", "ComparatorProtos",
    "FilterProtos", "ClientProtos", "MapReduceProtos", "MasterProtos", "AdminProtos",
    "RegistryProtos", "ClusterStatusProtos", "ClusterIdProtos", "FSProtos", "ErrorHandlingProtos",
    "ProcedureProtos", "ZooKeeperProtos", "RegionServerStatusProtos", "MasterProcedureProtos",
  };
  private static final String HBASE_PACKAGE = "org.apache.hadoop.hbase.shaded.protobuf.generated.";

  private final Map<String, Descriptor> hbaseMessages = new HashMap<>();
  private final Map<String, EnumDescriptor> hbaseEnums = new HashMap<>();
  private final List<String> mismatches = new ArrayList<>();
  private int messages;
  private int fields;
  private int enums;

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: ProtoDescriptorCheck <cairn.desc>");
      System.exit(2);
    }
    FileDescriptorSet ours = FileDescriptorSet.parseFrom(Files.readAllBytes(Path.of(args[0])));
    ProtoDescriptorCheck check = new ProtoDescriptorCheck();
    check.indexHBase();
    for (FileDescriptorProto file : ours.getFileList()) {
      check.checkFile(file);
    }
    for (String m : check.mismatches) {
      System.out.println("MISMATCH " + m);
    }
    if (!check.mismatches.isEmpty()) {
      System.out.println("FAILED: " + check.mismatches.size() + " mismatches against HBase "
          + VersionInfo.getVersion());
      System.exit(1);
    }
    System.out.println("OK " + ours.getFileCount() + " files, " + check.messages + " messages, "
        + check.fields + " fields, " + check.enums + " enums match HBase " + VersionInfo.getVersion());
  }

  /** Every message and enum of HBase's generated files and of the files they import. */
  private void indexHBase() throws Exception {
    Set<String> seen = new HashSet<>();
    List<FileDescriptor> todo = new ArrayList<>();
    for (String outer : HBASE_OUTER_CLASSES) {
      Class<?> c = Class.forName(HBASE_PACKAGE + outer);
      todo.add((FileDescriptor) c.getMethod("getDescriptor").invoke(null));
    }
    while (!todo.isEmpty()) {
      FileDescriptor f = todo.remove(todo.size() - 1);
      if (!seen.add(f.getName())) {
        continue;
      }
      todo.addAll(f.getDependencies());
      for (Descriptor d : f.getMessageTypes()) {
        indexMessage(d);
      }
      for (EnumDescriptor e : f.getEnumTypes()) {
        hbaseEnums.put(e.getFullName(), e);
      }
    }
  }

  private void indexMessage(Descriptor d) {
    hbaseMessages.put(d.getFullName(), d);
    for (Descriptor n : d.getNestedTypes()) {
      indexMessage(n);
    }
    for (EnumDescriptor e : d.getEnumTypes()) {
      hbaseEnums.put(e.getFullName(), e);
    }
  }

  private void checkFile(FileDescriptorProto file) {
    String prefix = file.getPackage().isEmpty() ? "" : file.getPackage() + ".";
    for (DescriptorProto m : file.getMessageTypeList()) {
      checkMessage(file.getName(), prefix + m.getName(), m);
    }
    for (EnumDescriptorProto e : file.getEnumTypeList()) {
      checkEnum(file.getName(), prefix + e.getName(), e);
    }
  }

  private void checkMessage(String fileName, String fullName, DescriptorProto ours) {
    messages++;
    Descriptor theirs = hbaseMessages.get(fullName);
    if (theirs == null) {
      mismatches.add(fullName + ": no such message in HBase");
      return;
    }
    if (!theirs.getFile().getName().equals(fileName)) {
      mismatches.add(fullName + ": defined in " + fileName + ", HBase defines it in "
          + theirs.getFile().getName());
    }
    Set<Integer> ourNumbers = new HashSet<>();
    for (FieldDescriptorProto f : ours.getFieldList()) {
      fields++;
      ourNumbers.add(f.getNumber());
      String where = fullName + "." + f.getName() + " (#" + f.getNumber() + ")";
      FieldDescriptor hf = theirs.findFieldByNumber(f.getNumber());
      if (hf == null) {
        mismatches.add(where + ": HBase has no field with this number");
        continue;
      }
      FieldDescriptorProto h = hf.toProto();
      compare(where, "name", f.getName(), h.getName());
      compare(where, "type", f.getType(), h.getType());
      compare(where, "label", f.getLabel(), h.getLabel());
      compare(where, "type name", f.getTypeName(), h.getTypeName());
      compare(where, "default", f.getDefaultValue(), h.getDefaultValue());
      compare(where, "packed", f.getOptions().getPacked(), h.getOptions().getPacked());
    }
    for (FieldDescriptor hf : theirs.getFields()) {
      if (!ourNumbers.contains(hf.getNumber())) {
        mismatches.add(fullName + ": lacks HBase's field " + hf.getName() + " (#"
            + hf.getNumber() + ")");
      }
    }
    for (DescriptorProto n : ours.getNestedTypeList()) {
      checkMessage(fileName, fullName + "." + n.getName(), n);
    }
    for (EnumDescriptorProto e : ours.getEnumTypeList()) {
      checkEnum(fileName, fullName + "." + e.getName(), e);
    }
  }

  private void checkEnum(String fileName, String fullName, EnumDescriptorProto ours) {
    enums++;
    EnumDescriptor theirs = hbaseEnums.get(fullName);
    if (theirs == null) {
      mismatches.add(fullName + ": no such enum in HBase");
      return;
    }
    if (!theirs.getFile().getName().equals(fileName)) {
      mismatches.add(fullName + ": defined in " + fileName + ", HBase defines it in "
          + theirs.getFile().getName());
    }
    Set<String> ourNames = new HashSet<>();
    for (EnumValueDescriptorProto v : ours.getValueList()) {
      ourNames.add(v.getName());
      EnumValueDescriptor hv = theirs.findValueByName(v.getName());
      if (hv == null) {
        mismatches.add(fullName + "." + v.getName() + ": HBase has no such enum value");
      } else if (hv.getNumber() != v.getNumber()) {
        mismatches.add(fullName + "." + v.getName() + ": number " + v.getNumber()
            + ", HBase's is " + hv.getNumber());
      }
    }
    for (EnumValueDescriptor hv : theirs.getValues()) {
      if (!ourNames.contains(hv.getName())) {
        mismatches.add(fullName + ": lacks HBase's value " + hv.getName() + " = "
            + hv.getNumber());
      }
    }
  }

  private void compare(String where, String what, Object ours, Object theirs) {
    if (!ours.equals(theirs)) {
      mismatches.add(where + ": " + what + " is " + describe(ours) + ", HBase's is "
          + describe(theirs));
    }
  }

  private static String describe(Object o) {
    String s = String.valueOf(o);
    return s.isEmpty() ? "(none)" : s;
  }
}
