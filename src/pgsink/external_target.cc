#include "pgsink/external_target.h"

#include "cdc/pg_tables.h"
#include "engine/query_result.h"

namespace millrace::pgsink {
namespace {

// A COPY's buffer is sent once it holds about this much.
constexpr size_t kCopyChunkBytes = size_t{1} << 20;

// The staged column `name` as the text PostgreSQL reads back as its value.
std::string CopyText(const cdc::SourceColumn& column) {
  const std::string name = engine::QuoteIdentifier(column.name);
  if (column.mapping.form == change::ValueForm::kBytea) return "'\\x' || hex(" + name + ")";
  return "CAST(" + name + " AS VARCHAR)";
}

}  // namespace

Result<ExternalTarget> DescribeTarget(pg::PgConnection& conn, const std::string& catalog,
                                      const std::string& schema, const std::string& table,
                                      const std::string& staging_name) {
  ExternalTarget target;
  target.catalog = catalog;
  auto described = cdc::DescribeTable(conn, schema, table, cdc::KeyRule::kOptional);
  if (!described.ok()) {
    return described.status().WithContext("the target " + catalog + "." + schema + "." + table);
  }
  target.table = std::move(described).value();
  for (const cdc::SourceColumn& column : target.table.columns) {
    if (column.mapping.form == change::ValueForm::kArray) {
      return Status::InvalidArgument("column " + column.name + " of " + target.Display() +
                                     " is of type " + column.type_name +
                                     ": arrays cannot be written into PostgreSQL yet");
    }
  }
  target.staging = StagingTable(staging_name);
  return target;
}

std::string StagingTable(const std::string& staging_name) {
  return "temp.main." + engine::QuoteIdentifier(staging_name);
}

std::string StagingDdl(const ExternalTarget& target) {
  std::string columns;
  for (const cdc::SourceColumn& column : target.table.columns) {
    columns += (columns.empty() ? "" : ", ") + engine::QuoteIdentifier(column.name) + " " +
               column.mapping.duckdb_type;
  }
  return "CREATE OR REPLACE TEMP TABLE " + target.staging.substr(std::string("temp.main.").size()) +
         " (" + columns + ")";
}

Result<int64_t> CopyStaged(engine::Connection& duck, pg::PgConnection& pg,
                           const ExternalTarget& target) {
  std::string select;
  std::string names;
  for (const cdc::SourceColumn& column : target.table.columns) {
    select += (select.empty() ? "" : ", ") + CopyText(column);
    names += (names.empty() ? "" : ", ") + pg.Identifier(column.name);
  }
  MR_ASSIGN_OR_RETURN(auto rows, duck.Query("SELECT " + select + " FROM " + target.staging));
  int64_t copied = 0;
  std::unique_ptr<engine::DataChunk> chunk;
  size_t row = 0;
  const std::string copy = "COPY " + pg.Identifier(target.table.schema) + "." +
                           pg.Identifier(target.table.name) + " (" + names + ") FROM STDIN";
  MR_RETURN_IF_ERROR(pg.CopyIn(copy, [&](std::string* buffer) -> Result<bool> {
    while (buffer->size() < kCopyChunkBytes) {
      if (chunk == nullptr || row == chunk->size()) {
        MR_ASSIGN_OR_RETURN(chunk, rows->Next());
        row = 0;
        if (chunk == nullptr) return false;
        continue;
      }
      for (size_t c = 0; c < chunk->column_count(); ++c) {
        if (c > 0) *buffer += '\t';
        pg::Field value;
        if (!chunk->IsNull(c, row)) value = std::string(chunk->GetString(c, row));
        pg::EncodeCopyField(value, buffer);
      }
      *buffer += '\n';
      ++row;
      ++copied;
    }
    return true;
  }));
  return copied;
}

}  // namespace millrace::pgsink
