#include "server/column_types.h"

#include "server/protocol.h"

namespace millrace::server {
using engine::TypeId;

MySqlColumn MySqlColumnFor(const engine::ColumnType& type) {
  return sql::MysqlTypeOf(type).wire;
}

std::string BuildColumnDefinition(std::string_view schema, std::string_view name,
                                  const MySqlColumn& column, std::string_view table) {
  WireWriter w;
  w.LenEncString("def").LenEncString(schema).LenEncString(table).LenEncString(table);
  w.LenEncString(name).LenEncString(name);
  w.LenEncInt(0x0c).Int2(column.charset).Int4(column.length).Int1(column.type);
  w.Int2(column.flags).Int1(column.decimals).Int2(0);
  return w.Take();
}

std::string TemporalText(const engine::DataChunk& chunk, size_t col, size_t row) {
  std::string text = chunk.GetText(col, row);
  if (text.ends_with("+00")) text.resize(text.size() - 3);
  return text;
}

void AppendTextCell(const engine::DataChunk& chunk, size_t col, size_t row, TypeId type,
                    WireWriter* out) {
  if (chunk.IsNull(col, row)) {
    out->Null();
    return;
  }
  switch (type) {
    case TypeId::kBoolean:
      out->LenEncString(chunk.GetBool(col, row) ? "1" : "0");
      return;
    case TypeId::kBlob:
      out->LenEncString(chunk.GetString(col, row));
      return;
    case TypeId::kTimestampTz:
      out->LenEncString(TemporalText(chunk, col, row));
      return;
    default:
      out->LenEncString(chunk.GetText(col, row));
      return;
  }
}

}  // namespace millrace::server
