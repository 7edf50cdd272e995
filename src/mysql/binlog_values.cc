#include "mysql/binlog_values.h"

#include <cstdint>
#include <cstring>
#include <optional>

#include "common/strings.h"
#include "mysql/mysql_charsets.h"
#include "mysql/mysql_formats.h"
#include "mysql/mysql_json.h"

namespace millrace::mysql {

using change::TupleValue;

namespace {

std::string TypeName(uint8_t type) {
  switch (type) {
    case kTypeTiny:
      return "TINYINT";
    case kTypeShort:
      return "SMALLINT";
    case kTypeInt24:
      return "MEDIUMINT";
    case kTypeLong:
      return "INT";
    case kTypeLongLong:
      return "BIGINT";
    case kTypeFloat:
      return "FLOAT";
    case kTypeDouble:
      return "DOUBLE";
    case kTypeNewDecimal:
      return "DECIMAL";
    case kTypeBit:
      return "BIT";
    case kTypeDate:
      return "DATE";
    case kTypeDateTime:
    case kTypeDateTime2:
      return "DATETIME";
    case kTypeTimestamp:
    case kTypeTimestamp2:
      return "TIMESTAMP";
    case kTypeTime:
    case kTypeTime2:
      return "TIME";
    case kTypeYear:
      return "YEAR";
    case kTypeString:
      return "CHAR";
    case kTypeVarchar:
    case kTypeVarString:
      return "VARCHAR";
    case kTypeBlob:
      return "BLOB";
    case kTypeEnum:
      return "ENUM";
    case kTypeSet:
      return "SET";
    case kTypeJson:
      return "JSON";
    case kTypeGeometry:
      return "GEOMETRY";
    default:
      return "type " + std::to_string(type);
  }
}

std::string Bytea(std::string_view bytes) {
  return "\\x" + HexEncode(bytes);
}

TupleValue Text(std::string text) {
  return {TupleValue::Kind::kText, std::move(text)};
}
TupleValue Null() {
  return {TupleValue::Kind::kNull, {}};
}

// A string column's bytes as the value's text, by its character set.
TupleValue StringValue(const BinlogColumn& column, std::string_view bytes) {
  switch (CharsetOf(column.charset)) {
    case Charset::kBinary:
      return Text(Bytea(bytes));
    case Charset::kLatin1:
      return Text(Latin1ToUtf8(bytes));
    default:
      return Text(std::string(bytes));
  }
}

// Decodes one non-NULL value of `column` at the reader.
Result<TupleValue> DecodeValue(const BinlogColumn& column, size_t index, Reader& r) {
  auto cut = [&] {
    return Status::DataLoss("rows event: the value of " + ColumnLabel(column, index) +
                            " is cut short");
  };
  auto integer = [&](size_t bytes) -> Result<TupleValue> {
    auto v = r.Little(bytes);
    if (!v) return cut();
    if (column.is_unsigned) return Text(std::to_string(*v));
    return Text(std::to_string(SignExtend(*v, static_cast<int>(bytes * 8))));
  };
  const int fsp = column.metadata;
  switch (column.type) {
    case kTypeTiny:
      return integer(1);
    case kTypeShort:
      return integer(2);
    case kTypeInt24:
      return integer(3);
    case kTypeLong:
      return integer(4);
    case kTypeLongLong:
      return integer(8);
    case kTypeFloat:
    case kTypeDouble: {
      if (column.metadata != (column.type == kTypeFloat ? 4 : 8))
        return Status::DataLoss("rows event: " + ColumnLabel(column, index) + " is " +
                                std::to_string(column.metadata) + " bytes long");
      auto v = r.Little(column.metadata);
      if (!v) return cut();
      if (column.type == kTypeFloat) {
        float f;
        const uint32_t bits = static_cast<uint32_t>(*v);
        std::memcpy(&f, &bits, sizeof(f));
        return Text(ShortestFloat(f));
      }
      double d;
      std::memcpy(&d, &*v, sizeof(d));
      return Text(ShortestFloat(d));
    }
    case kTypeNewDecimal: {
      const int precision = column.metadata >> 8, scale = column.metadata & 0xFF;
      auto raw = r.Bytes(DecimalSize(precision, scale));
      if (!raw) return cut();
      auto text = DecodeDecimal(*raw, precision, scale);
      if (!text)
        return Status::DataLoss("rows event: " + ColumnLabel(column, index) +
                                " holds digits out of range");
      return Text(std::move(*text));
    }
    case kTypeBit: {
      const int bits = (column.metadata >> 8) * 8 + (column.metadata & 0xFF);
      auto v = r.Big(static_cast<size_t>((bits + 7) / 8));
      if (!v) return cut();
      return Text(std::to_string(*v));
    }
    case kTypeYear: {
      auto v = r.Little(1);
      if (!v) return cut();
      return Text(*v == 0 ? "0000" : std::to_string(1900 + *v));
    }
    case kTypeDate: {
      auto v = r.Little(3);
      if (!v) return cut();
      const int64_t day = *v & 31, month = *v >> 5 & 15, year = static_cast<int64_t>(*v >> 9);
      if (month == 0 || day == 0) return Null();
      return Text(DateText(year, month, day));
    }
    case kTypeDateTime2: {
      auto v = r.Big(5);
      if (!v) return cut();
      auto micros = ReadFraction(r, fsp);
      if (!micros) return cut();
      // 1 sign bit, 17 bits year * 13 + month, 5 day, 5 hour, 6 minute, 6 second.
      const int64_t packed = static_cast<int64_t>(*v) - 0x8000000000LL;
      const int64_t ymd = packed >> 17, hms = packed & 0x1FFFF;
      const int64_t day = ymd & 31, month = (ymd >> 5) % 13, year = (ymd >> 5) / 13;
      if (month == 0 || day == 0) return Null();
      return Text(DateTimeText({.year = year,
                                .month = month,
                                .day = day,
                                .hour = hms >> 12,
                                .minute = hms >> 6 & 63,
                                .second = hms & 63,
                                .micros = *micros},
                               fsp));
    }
    case kTypeTimestamp2: {
      auto seconds = r.Big(4);
      if (!seconds) return cut();
      auto micros = ReadFraction(r, fsp);
      if (!micros) return cut();
      if (*seconds == 0 && *micros == 0) return Null();  // the zero TIMESTAMP
      return Text(EpochText(*seconds, *micros, fsp));
    }
    case kTypeTime2: {
      auto micros = ReadTime2(r, fsp);
      if (!micros) return cut();
      return Text(DurationText(*micros, fsp));
    }
    case kTypeTimestamp: {
      auto seconds = r.Little(4);
      if (!seconds) return cut();
      if (*seconds == 0) return Null();
      return Text(EpochText(*seconds, 0, 0));
    }
    case kTypeDateTime: {
      auto v = r.Little(8);
      if (!v) return cut();
      const uint64_t date = *v / 1000000, time = *v % 1000000;
      const int64_t year = date / 10000, month = date / 100 % 100, day = date % 100;
      if (month == 0 || day == 0) return Null();
      return Text(DateTimeText({.year = year,
                                .month = month,
                                .day = day,
                                .hour = static_cast<int64_t>(time / 10000),
                                .minute = static_cast<int64_t>(time / 100 % 100),
                                .second = static_cast<int64_t>(time % 100)},
                               0));
    }
    case kTypeTime: {
      auto v = r.Little(3);
      if (!v) return cut();
      const int64_t hhmmss = SignExtend(*v, 24);
      const int64_t magnitude = hhmmss < 0 ? -hhmmss : hhmmss;
      const int64_t seconds =
          magnitude / 10000 * 3600 + magnitude / 100 % 100 * 60 + magnitude % 100;
      return Text(DurationText(hhmmss < 0 ? -seconds * 1000000 : seconds * 1000000, 0));
    }
    case kTypeString: {
      auto length = r.Little(column.metadata > 255 ? 2 : 1);
      if (!length) return cut();
      auto bytes = r.Bytes(*length);
      if (!bytes) return cut();
      if (CharsetOf(column.charset) == Charset::kBinary && *length < column.metadata) {
        // The binlog drops BINARY's trailing zero bytes; the column holds them.
        std::string padded(*bytes);
        padded.resize(column.metadata, '\0');
        return Text(Bytea(padded));
      }
      return StringValue(column, *bytes);
    }
    case kTypeVarchar:
    case kTypeVarString: {
      auto length = r.Little(column.metadata > 255 ? 2 : 1);
      if (!length) return cut();
      auto bytes = r.Bytes(*length);
      if (!bytes) return cut();
      return StringValue(column, *bytes);
    }
    case kTypeBlob:
    case kTypeGeometry:
    case kTypeJson: {
      if (column.metadata < 1 || column.metadata > 4)
        return Status::DataLoss("rows event: " + ColumnLabel(column, index) + " has a " +
                                std::to_string(column.metadata) + "-byte length");
      auto length = r.Little(column.metadata);
      if (!length) return cut();
      auto bytes = r.Bytes(*length);
      if (!bytes) return cut();
      if (column.type == kTypeGeometry) return Text(Bytea(*bytes));
      if (column.type == kTypeJson) {
        auto text = MySqlJsonText(*bytes);
        if (!text)
          return Status::DataLoss("rows event: " + ColumnLabel(column, index) +
                                  " holds a binary JSON document Millrace cannot read");
        return Text(std::move(*text));
      }
      return StringValue(column, *bytes);
    }
    case kTypeEnum: {
      auto v = r.Little(column.metadata);
      if (!v) return cut();
      if (*v == 0) return Text("");
      if (*v > column.enum_values.size())
        return Status::DataLoss("rows event: " + ColumnLabel(column, index) + " holds member " +
                                std::to_string(*v) + " of " +
                                std::to_string(column.enum_values.size()));
      return Text(column.enum_values[*v - 1]);
    }
    case kTypeSet: {
      auto v = r.Little(column.metadata);
      if (!v) return cut();
      std::string text;
      for (size_t bit = 0; bit < 64; ++bit) {
        if (!(*v >> bit & 1)) continue;
        if (bit >= column.enum_values.size())
          return Status::DataLoss("rows event: " + ColumnLabel(column, index) + " holds member " +
                                  std::to_string(bit + 1) + " of " +
                                  std::to_string(column.enum_values.size()));
        if (!text.empty()) text += ',';
        text += column.enum_values[bit];
      }
      return Text(std::move(text));
    }
    case kTypeNull:
      return Null();
    default:
      return Status::NotSupported("rows event: " + ColumnLabel(column, index) +
                                  " is a column type Millrace does not decode");
  }
}

}  // namespace

std::string ColumnLabel(const BinlogColumn& column, size_t index) {
  const std::string name = column.name.empty() ? "#" + std::to_string(index + 1) : column.name;
  return "column " + name + " (" + TypeName(column.type) + ")";
}

Result<change::Tuple> DecodeImage(const BinlogTable& table, std::string_view present, Reader& r) {
  const size_t n = table.columns.size();
  size_t count = 0;
  for (size_t i = 0; i < n; ++i)
    count += BitSet(present, i);
  auto nulls = r.Bytes((count + 7) / 8);
  if (!nulls)
    return Status::DataLoss("rows event for " + table.schema + "." + table.name +
                            ": a row's NULL bitmap is cut short");
  change::Tuple tuple(n, TupleValue{TupleValue::Kind::kUnchanged, {}});
  size_t j = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!BitSet(present, i)) continue;
    if (BitSet(*nulls, j++)) {
      tuple[i] = Null();
      continue;
    }
    auto value = DecodeValue(table.columns[i], i, r);
    if (!value.ok()) return value.status().WithContext("table " + table.schema + "." + table.name);
    tuple[i] = std::move(*value);
  }
  return tuple;
}

}  // namespace millrace::mysql
