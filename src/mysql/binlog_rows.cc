#include "mysql/binlog_rows.h"

#include <optional>

#include "mysql/binlog_values.h"
#include "mysql/byte_reader.h"
#include "mysql/mysql_charsets.h"

namespace millrace::mysql {

using change::TypeMapping;
using change::ValueForm;

namespace {

// Optional metadata fields of a TABLE_MAP event (Table_map_event::Optional_metadata_field_type).
enum : uint8_t {
  kSignedness = 1,
  kDefaultCharset = 2,
  kColumnCharset = 3,
  kColumnName = 4,
  kSetStrValue = 5,
  kEnumStrValue = 6,
  kGeometryType = 7,
  kSimplePrimaryKey = 8,
  kPrimaryKeyWithPrefix = 9,
  kEnumAndSetDefaultCharset = 10,
  kEnumAndSetColumnCharset = 11,
};

// Rows event types (Log_event_type).
enum : uint8_t {
  kWriteRowsV1 = 23,
  kUpdateRowsV1 = 24,
  kDeleteRowsV1 = 25,
  kWriteRowsV2 = 30,
  kUpdateRowsV2 = 31,
  kDeleteRowsV2 = 32,
  kWriteRowsCompressedV1 = 166,
  kDeleteRowsCompressed = 171,
};

// ---- TABLE_MAP ----

bool IsNumeric(uint8_t type, bool mariadb) {
  switch (type) {
    case kTypeTiny:
    case kTypeShort:
    case kTypeInt24:
    case kTypeLong:
    case kTypeLongLong:
    case kTypeNewDecimal:
    case kTypeFloat:
    case kTypeDouble:
      return true;
    case kTypeYear:  // MariaDB's YEAR is an unsigned TINYINT underneath
      return mariadb;
    default:
      return false;
  }
}

// The columns the DEFAULT_CHARSET / COLUMN_CHARSET fields count: strings, not ENUM and SET.
bool IsCharacter(uint8_t type) {
  switch (type) {
    case kTypeString:
    case kTypeVarString:
    case kTypeVarchar:
    case kTypeBlob:
    case kTypeGeometry:
      return true;
    default:
      return false;
  }
}

bool IsEnumOrSet(uint8_t type) {
  return type == kTypeEnum || type == kTypeSet;
}

// Reads column `index`'s metadata into its type and metadata.
Status ReadColumnMetadata(Reader& meta, size_t index, BinlogColumn& column) {
  auto cut = [&] {
    return Status::DataLoss("TABLE_MAP: the metadata of " + ColumnLabel(column, index) +
                            " is cut short");
  };
  switch (column.type) {
    case kTypeFloat:
    case kTypeDouble:
    case kTypeBlob:
    case kTypeGeometry:
    case kTypeJson:
    case kTypeTimestamp2:
    case kTypeDateTime2:
    case kTypeTime2: {
      auto m = meta.Little(1);
      if (!m) return cut();
      column.metadata = static_cast<uint16_t>(*m);
      return Status::Ok();
    }
    case kTypeVarchar:
    case kTypeVarString: {
      auto m = meta.Little(2);
      if (!m) return cut();
      column.metadata = static_cast<uint16_t>(*m);
      return Status::Ok();
    }
    case kTypeNewDecimal: {
      auto m = meta.Big(2);  // precision, then scale
      if (!m) return cut();
      column.metadata = static_cast<uint16_t>(*m);
      const int precision = column.metadata >> 8, scale = column.metadata & 0xFF;
      if (precision < 1 || precision > 65 || scale > 30 || scale > precision)
        return Status::DataLoss("TABLE_MAP: " + ColumnLabel(column, index) + " has precision " +
                                std::to_string(precision) + " and scale " + std::to_string(scale));
      return Status::Ok();
    }
    case kTypeBit: {
      auto bits = meta.Little(1);
      auto bytes = meta.Little(1);
      if (!bits || !bytes) return cut();
      if (*bits > 7 || *bytes > 8 || *bytes * 8 + *bits > 64 || *bytes * 8 + *bits == 0)
        return Status::DataLoss("TABLE_MAP: " + ColumnLabel(column, index) + " has " +
                                std::to_string(*bytes * 8 + *bits) + " bits");
      column.metadata = static_cast<uint16_t>(*bytes << 8 | *bits);
      return Status::Ok();
    }
    case kTypeString: {
      auto byte0 = meta.Little(1);
      auto byte1 = meta.Little(1);
      if (!byte0 || !byte1) return cut();
      // A CHAR longer than 255 bytes keeps the two high bits of its length in the real type's
      // byte, inverted (MySQL bug #37426); ENUM and SET keep the type whole.
      uint32_t real = static_cast<uint32_t>(*byte0), length = static_cast<uint32_t>(*byte1);
      if ((real & 0x30) != 0x30) {
        length |= ((real & 0x30) ^ 0x30) << 4;
        real |= 0x30;
      }
      if (real != kTypeString && real != kTypeEnum && real != kTypeSet)
        return Status::DataLoss("TABLE_MAP: " + ColumnLabel(column, index) + " has the real type " +
                                std::to_string(real));
      column.type = static_cast<uint8_t>(real);
      column.metadata = static_cast<uint16_t>(length);
      if (column.type == kTypeEnum && length != 1 && length != 2)
        return Status::DataLoss("TABLE_MAP: " + ColumnLabel(column, index) + " is stored in " +
                                std::to_string(length) + " bytes");
      if (column.type == kTypeSet && (length < 1 || (length > 4 && length != 8)))
        return Status::DataLoss("TABLE_MAP: " + ColumnLabel(column, index) + " is stored in " +
                                std::to_string(length) + " bytes");
      return Status::Ok();
    }
    case kTypeTiny:
    case kTypeShort:
    case kTypeInt24:
    case kTypeLong:
    case kTypeLongLong:
    case kTypeNull:
    case kTypeDate:
    case kTypeYear:
    case kTypeTimestamp:
    case kTypeDateTime:
    case kTypeTime:
      return Status::Ok();
    default:
      return Status::NotSupported("TABLE_MAP: " + ColumnLabel(column, index) +
                                  " is a column type Millrace does not decode");
  }
}

// The optional metadata fields, as read; each vector is empty when its field was not sent.
struct OptionalMetadata {
  std::string_view signedness;
  bool has_charsets = false;
  std::vector<uint32_t> charsets;  // one per character column
  bool has_enum_set_charsets = false;
  std::vector<uint32_t> enum_set_charsets;  // one per ENUM or SET column
  bool has_names = false;
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> set_values;
  std::vector<std::vector<std::string>> enum_values;
  std::vector<size_t> key;
};

// A DEFAULT_CHARSET-style field (the default collation, then pairs of a column's number among
// the counted columns and its collation) or a COLUMN_CHARSET-style one (a collation for each
// counted column), spread over `count` columns.
Result<std::vector<uint32_t>> ReadCharsets(std::string_view payload, bool with_default,
                                           size_t count) {
  auto bad = [] { return Status::DataLoss("TABLE_MAP: a character set field is malformed"); };
  Reader r(payload);
  std::vector<uint32_t> out;
  if (with_default) {
    auto fallback = r.Packed();
    if (!fallback) return bad();
    out.assign(count, static_cast<uint32_t>(*fallback));
    while (!r.done()) {
      auto index = r.Packed();
      auto collation = r.Packed();
      if (!index || !collation || *index >= count) return bad();
      out[*index] = static_cast<uint32_t>(*collation);
    }
  } else {
    while (!r.done()) {
      auto collation = r.Packed();
      if (!collation) return bad();
      out.push_back(static_cast<uint32_t>(*collation));
    }
  }
  if (out.size() != count) return bad();
  return out;
}

Result<std::vector<std::vector<std::string>>> ReadStringLists(std::string_view payload) {
  Reader r(payload);
  std::vector<std::vector<std::string>> out;
  while (!r.done()) {
    auto count = r.Packed();
    if (!count || *count > payload.size()) return Status::DataLoss("TABLE_MAP: bad ENUM/SET list");
    std::vector<std::string>& values = out.emplace_back();
    for (uint64_t i = 0; i < *count; ++i) {
      auto value = r.PackedBytes();
      if (!value) return Status::DataLoss("TABLE_MAP: an ENUM/SET list is cut short");
      values.emplace_back(*value);
    }
  }
  return out;
}

Result<OptionalMetadata> ReadOptionalMetadata(std::string_view block, size_t character_columns,
                                              size_t enum_set_columns) {
  OptionalMetadata out;
  Reader r(block);
  while (!r.done()) {
    auto field = r.Little(1);
    auto payload = r.PackedBytes();
    if (!field || !payload)
      return Status::DataLoss("TABLE_MAP: the optional metadata is cut short");
    switch (*field) {
      case kSignedness:
        out.signedness = *payload;
        break;
      case kDefaultCharset:
      case kColumnCharset: {
        auto charsets = ReadCharsets(*payload, *field == kDefaultCharset, character_columns);
        if (!charsets.ok()) return charsets.status();
        out.charsets = std::move(*charsets);
        out.has_charsets = true;
        break;
      }
      case kEnumAndSetDefaultCharset:
      case kEnumAndSetColumnCharset: {
        auto charsets =
            ReadCharsets(*payload, *field == kEnumAndSetDefaultCharset, enum_set_columns);
        if (!charsets.ok()) return charsets.status();
        out.enum_set_charsets = std::move(*charsets);
        out.has_enum_set_charsets = true;
        break;
      }
      case kColumnName: {
        Reader names(*payload);
        while (!names.done()) {
          auto name = names.PackedBytes();
          if (!name) return Status::DataLoss("TABLE_MAP: the column names are cut short");
          out.names.emplace_back(*name);
        }
        out.has_names = true;
        break;
      }
      case kSetStrValue:
      case kEnumStrValue: {
        auto lists = ReadStringLists(*payload);
        if (!lists.ok()) return lists.status();
        (*field == kSetStrValue ? out.set_values : out.enum_values) = std::move(*lists);
        break;
      }
      case kSimplePrimaryKey:
      case kPrimaryKeyWithPrefix: {
        Reader keys(*payload);
        while (!keys.done()) {
          auto index = keys.Packed();
          // The prefix length of a key part over a column prefix: the whole column is kept.
          if (index && *field == kPrimaryKeyWithPrefix && !keys.Packed()) index.reset();
          if (!index) return Status::DataLoss("TABLE_MAP: the primary key field is cut short");
          out.key.push_back(static_cast<size_t>(*index));
        }
        break;
      }
      default:  // GEOMETRY_TYPE, MySQL's COLUMN_VISIBILITY and later fields: not needed
        break;
    }
  }
  return out;
}
}  // namespace

Result<TableMapBytes> SplitTableMapEvent(std::string_view body, bool mariadb) {
  auto cut = [] { return Status::DataLoss("TABLE_MAP event is cut short"); };
  Reader r(body);
  TableMapBytes out;
  out.mariadb = mariadb;
  auto table_id = r.Little(6);
  if (!table_id || !r.Bytes(2)) return cut();  // the flags: reserved
  out.table_id = *table_id;
  for (std::string* name : {&out.schema, &out.name}) {
    auto length = r.Little(1);
    if (!length) return cut();
    auto text = r.Bytes(*length);
    if (!text || !r.Bytes(1)) return cut();  // the name, then its terminating zero
    *name = std::string(*text);
  }
  auto count = r.Packed();
  if (!count) return cut();
  auto types = r.Bytes(*count);
  auto metadata = types ? r.PackedBytes() : std::nullopt;
  auto nulls = metadata ? r.Bytes((*count + 7) / 8) : std::nullopt;
  if (!nulls) return cut();
  out.column_types = *types;
  out.metadata = *metadata;
  out.null_bitmap = *nulls;
  out.optional_metadata = body.substr(body.size() - r.left());
  return out;
}

Result<RowsBytes> SplitRowsEvent(uint8_t event_type, std::string_view body) {
  RowsBytes out;
  switch (event_type) {
    case kWriteRowsV1:
    case kWriteRowsV2:
      out.kind = RowsKind::kWrite;
      break;
    case kUpdateRowsV1:
    case kUpdateRowsV2:
      out.kind = RowsKind::kUpdate;
      break;
    case kDeleteRowsV1:
    case kDeleteRowsV2:
      out.kind = RowsKind::kDelete;
      break;
    default:
      if (event_type >= kWriteRowsCompressedV1 && event_type <= kDeleteRowsCompressed)
        return Status::NotSupported(
            "compressed rows events are not supported: set log_bin_compress = OFF");
      return Status::InvalidArgument("event type " + std::to_string(event_type) +
                                     " is not a rows event");
  }
  auto cut = [] { return Status::DataLoss("rows event is cut short"); };
  Reader r(body);
  auto table_id = r.Little(6);
  auto flags = table_id ? r.Little(2) : std::nullopt;
  if (!flags) return cut();
  out.table_id = *table_id;
  out.flags = static_cast<uint16_t>(*flags);
  if (event_type >= kWriteRowsV2) {
    // Version 2 carries extra data, its length counting the length's own two bytes.
    auto extra = r.Little(2);
    if (!extra || *extra < 2 || !r.Bytes(*extra - 2)) return cut();
  }
  auto count = r.Packed();
  if (!count) return cut();
  out.column_count = *count;
  auto columns = r.Bytes((*count + 7) / 8);
  if (!columns) return cut();
  out.columns = *columns;
  if (out.kind == RowsKind::kUpdate) {
    auto after = r.Bytes((*count + 7) / 8);
    if (!after) return cut();
    out.after_columns = *after;
  }
  out.rows = body.substr(body.size() - r.left());
  return out;
}

Result<BinlogTable> DecodeTableMap(const TableMapBytes& bytes) {
  BinlogTable table;
  table.table_id = bytes.table_id;
  table.schema = bytes.schema;
  table.name = bytes.name;
  const std::string label = "TABLE_MAP of " + bytes.schema + "." + bytes.name;
  const size_t n = bytes.column_types.size();
  if (bytes.null_bitmap.size() != (n + 7) / 8)
    return Status::DataLoss(label + ": the NULL bitmap has " +
                            std::to_string(bytes.null_bitmap.size()) + " bytes for " +
                            std::to_string(n) + " columns");
  Reader meta(bytes.metadata);
  size_t numeric = 0, character = 0, enum_set = 0;
  for (size_t i = 0; i < n; ++i) {
    BinlogColumn& column = table.columns.emplace_back();
    column.type = static_cast<uint8_t>(bytes.column_types[i]);
    column.nullable = BitSet(bytes.null_bitmap, i);
    MR_RETURN_IF_ERROR(ReadColumnMetadata(meta, i, column).WithContext(label));
    numeric += IsNumeric(column.type, bytes.mariadb);
    character += IsCharacter(column.type);
    enum_set += IsEnumOrSet(column.type);
  }
  if (!meta.done())
    return Status::DataLoss(label + ": " + std::to_string(meta.left()) +
                            " bytes of column metadata are left over");

  auto optional = ReadOptionalMetadata(bytes.optional_metadata, character, enum_set);
  if (!optional.ok()) return optional.status().WithContext(label);
  const std::string setting = "set binlog_row_metadata = FULL on the source server";
  if (!optional->has_names)
    return Status::FailedPrecondition(label + ": the event has no column names: " + setting);
  if (optional->names.size() != n ||
      (numeric > 0 && optional->signedness.size() < (numeric + 7) / 8) ||
      (character > 0 && !optional->has_charsets) ||
      (enum_set > 0 && !optional->has_enum_set_charsets))
    return Status::DataLoss(label + ": the optional metadata does not cover the " +
                            std::to_string(n) + " columns");

  size_t numeric_i = 0, character_i = 0, enum_i = 0;
  for (size_t i = 0; i < n; ++i) {
    BinlogColumn& column = table.columns[i];
    column.name = optional->names[i];
    if (IsNumeric(column.type, bytes.mariadb)) {
      // Most significant bit first; a set bit is UNSIGNED.
      const uint8_t byte = static_cast<uint8_t>(optional->signedness[numeric_i / 8]);
      column.is_unsigned = (byte >> (7 - numeric_i % 8)) & 1;
      ++numeric_i;
    }
    if (IsCharacter(column.type)) column.charset = optional->charsets[character_i++];
    if (IsEnumOrSet(column.type)) column.charset = optional->enum_set_charsets[enum_i++];
  }
  // The ENUM and SET member lists, in the order of their own kind of column.
  size_t enum_list = 0, set_list = 0;
  for (size_t i = 0; i < n; ++i) {
    BinlogColumn& column = table.columns[i];
    if (!IsEnumOrSet(column.type)) continue;
    const bool is_enum = column.type == kTypeEnum;
    const auto& lists = is_enum ? optional->enum_values : optional->set_values;
    size_t& next = is_enum ? enum_list : set_list;
    if (next >= lists.size())
      return Status::FailedPrecondition(label + ": the event has no members for " +
                                        ColumnLabel(column, i) + ": " + setting);
    column.enum_values = lists[next++];
    // The members are in the column's character set; values are UTF-8.
    if (CharsetOf(column.charset) == Charset::kLatin1)
      for (std::string& member : column.enum_values)
        member = Latin1ToUtf8(member);
  }
  for (size_t i = 0; i < n; ++i) {
    const BinlogColumn& column = table.columns[i];
    if (!IsCharacter(column.type) && !IsEnumOrSet(column.type)) continue;
    if (CharsetOf(column.charset) == Charset::kOther)
      return Status::NotSupported(label + ": " + ColumnLabel(column, i) + " has collation " +
                                  std::to_string(column.charset) +
                                  ", a character set other than binary, latin1, ascii, "
                                  "utf8mb3 and utf8mb4");
  }
  for (size_t k : optional->key) {
    if (k >= n)
      return Status::DataLoss(label + ": the primary key names column " + std::to_string(k + 1) +
                              " of " + std::to_string(n));
    table.key.push_back(k);
  }
  return table;
}

Result<std::vector<RowChange>> DecodeRows(const BinlogTable& table, const RowsBytes& rows) {
  const size_t n = table.columns.size();
  const std::string label = "rows event for " + table.schema + "." + table.name;
  if (rows.column_count != n)
    return Status::DataLoss(label + ": " + std::to_string(rows.column_count) +
                            " columns, the table map has " + std::to_string(n));
  const size_t bitmap = (n + 7) / 8;
  if (rows.columns.size() != bitmap ||
      (rows.kind == RowsKind::kUpdate && rows.after_columns.size() != bitmap))
    return Status::DataLoss(label + ": a present-columns bitmap is not " + std::to_string(bitmap) +
                            " bytes");
  std::vector<RowChange> out;
  Reader r(rows.rows);
  while (!r.done()) {
    RowChange& change = out.emplace_back();
    if (rows.kind != RowsKind::kWrite) {
      auto before = DecodeImage(table, rows.columns, r);
      if (!before.ok()) return before.status();
      change.before = std::move(*before);
    }
    if (rows.kind != RowsKind::kDelete) {
      auto after =
          DecodeImage(table, rows.kind == RowsKind::kUpdate ? rows.after_columns : rows.columns, r);
      if (!after.ok()) return after.status();
      change.after = std::move(*after);
    }
  }
  return out;
}

TypeMapping MapColumn(const BinlogColumn& column) {
  const bool u = column.is_unsigned;
  const Charset charset = CharsetOf(column.charset);
  switch (column.type) {
    case kTypeTiny:
      return u ? TypeMapping{"UTINYINT", "smallint"} : TypeMapping{"TINYINT", "tinyint"};
    case kTypeShort:
      return u ? TypeMapping{"USMALLINT", "int"} : TypeMapping{"SMALLINT", "smallint"};
    case kTypeInt24:
      return u ? TypeMapping{"UINTEGER", "int"} : TypeMapping{"INTEGER", "int"};
    case kTypeLong:
      return u ? TypeMapping{"UINTEGER", "bigint"} : TypeMapping{"INTEGER", "int"};
    case kTypeLongLong:
      return u ? TypeMapping{"UBIGINT", "largeint"} : TypeMapping{"BIGINT", "bigint"};
    case kTypeFloat:
      return {"FLOAT", "float"};
    case kTypeDouble:
      return {"DOUBLE", "double"};
    case kTypeNewDecimal: {
      const int precision = column.metadata >> 8, scale = column.metadata & 0xFF;
      if (precision > 38) return {"VARCHAR", "string"};  // wider than DuckDB's DECIMAL
      const std::string ps = std::to_string(precision) + "," + std::to_string(scale);
      return {"DECIMAL(" + ps + ")", "decimal(" + ps + ")"};
    }
    case kTypeBit:
      return {"UBIGINT", "largeint"};
    case kTypeYear:
      return {"SMALLINT", "smallint"};
    case kTypeDate:
      return {"DATE", "date"};
    case kTypeDateTime:
    case kTypeDateTime2:
      return {"TIMESTAMP", "datetime(6)"};
    case kTypeTimestamp:
    case kTypeTimestamp2:
      return {"TIMESTAMPTZ", "datetime(6)"};
    case kTypeTime:
    case kTypeTime2:
      return {"VARCHAR", "string"};  // beyond 24 hours and negative: no DuckDB TIME holds it
    case kTypeString:
    case kTypeVarchar:
    case kTypeVarString: {
      if (charset == Charset::kBinary) return {"BLOB", "string", ValueForm::kBytea};
      // Doris counts bytes; latin1's bytes grow to up to three in UTF-8 (the euro sign).
      const uint32_t bytes = column.metadata * (charset == Charset::kLatin1 ? 3u : 1u);
      const bool fixed = column.type == kTypeString && bytes <= 255;
      if (bytes > 65533) return {"VARCHAR", "string"};
      return {"VARCHAR", (fixed ? "char(" : "varchar(") + std::to_string(bytes) + ")"};
    }
    case kTypeBlob:
      if (charset == Charset::kBinary) return {"BLOB", "string", ValueForm::kBytea};
      return {"VARCHAR", "string"};
    case kTypeGeometry:
      return {"BLOB", "string", ValueForm::kBytea};
    case kTypeJson:
      return {"JSON", "json"};
    case kTypeEnum:
    case kTypeSet:
    default:
      return {"VARCHAR", "string"};
  }
}

}  // namespace millrace::mysql
