#include "pgsink/external_target.h"

#include <algorithm>

#include "cdc/pg_tables.h"
#include "engine/query_result.h"
#include "table/model_write.h"

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
                                      const std::string& staging_name, bool delete_sign) {
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
  if (delete_sign && target.table.key.empty()) {
    return Status::InvalidArgument(std::string(table::kDeleteSign) + " deletes rows by key: " +
                                   target.Display() + " has no primary key");
  }
  target.delete_sign = delete_sign;
  target.staging_name = staging_name;
  target.staging = StagingTable(staging_name);
  return target;
}

std::string StagingTable(const std::string& staging_name) {
  return "temp.main." + engine::QuoteIdentifier(staging_name);
}

table::TableDef TargetModel(const ExternalTarget& target) {
  table::TableDef def;
  def.database = target.table.schema;
  def.name = target.table.name;
  def.model = target.table.key.empty() ? table::TableModel::kDuplicate : table::TableModel::kUnique;
  for (size_t i = 0; i < target.table.columns.size(); ++i) {
    const cdc::SourceColumn& c = target.table.columns[i];
    def.columns.push_back({.name = c.name,
                           .doris_type = c.mapping.doris_type,
                           .duckdb_type = c.mapping.duckdb_type,
                           .nullable = !c.not_null});
    if (std::find(target.table.key.begin(), target.table.key.end(), i) != target.table.key.end()) {
      def.keys.push_back(c.name);
    }
  }
  if (target.delete_sign) {
    def.columns.push_back({.name = std::string(table::kDeleteSign), .duckdb_type = "INTEGER"});
    def.delete_sign_kept = true;
  }
  return def;
}

std::string StagingDdl(const ExternalTarget& target) {
  std::string columns;
  for (const cdc::SourceColumn& column : target.table.columns) {
    columns += (columns.empty() ? "" : ", ") + engine::QuoteIdentifier(column.name) + " " +
               column.mapping.duckdb_type;
    // The loader filters a NULL there as a bad row, as into a DuckDB table. With the delete
    // sign a deleted key's row carries no values: PostgreSQL checks the rows it keeps.
    if (column.not_null && !target.delete_sign) columns += " NOT NULL";
  }
  std::string key;
  for (size_t k : target.table.key)
    key += (key.empty() ? "" : ", ") + engine::QuoteIdentifier(target.table.columns[k].name);
  if (target.delete_sign) {
    columns += ", " + engine::QuoteIdentifier(std::string(table::kDeleteSign)) + " INTEGER";
  }
  if (!key.empty()) columns += ", PRIMARY KEY (" + key + ")";
  return "CREATE OR REPLACE TEMP TABLE " + engine::QuoteIdentifier(target.staging_name) + " (" +
         columns + ")";
}

Result<int64_t> WriteStaged(engine::Connection& duck, pg::PgConnection& pg,
                            const ExternalTarget& target, bool empty_first) {
  std::string select;
  std::string names;
  std::string key;
  std::string updates;
  for (size_t i = 0; i < target.table.columns.size(); ++i) {
    const cdc::SourceColumn& column = target.table.columns[i];
    const std::string name = pg.Identifier(column.name);
    select += (select.empty() ? "" : ", ") + CopyText(column);
    names += (names.empty() ? "" : ", ") + name;
    if (std::find(target.table.key.begin(), target.table.key.end(), i) != target.table.key.end()) {
      key += (key.empty() ? "" : ", ") + name;
    } else {
      updates += (updates.empty() ? "" : ", ") + name + " = EXCLUDED." + name;
    }
  }
  const std::string table =
      pg.Identifier(target.table.schema) + "." + pg.Identifier(target.table.name);
  // DELETE rather than TRUNCATE: readers of the table are not blocked until the commit.
  if (empty_first) MR_RETURN_IF_ERROR(pg.Execute("DELETE FROM " + table));
  // A UNIQUE table's rows go through a temporary table, then upsert by key; with the delete
  // sign, its value goes along as the last column.
  std::string copy_into = table;
  std::string copied_names = names;
  const std::string sign = pg.Identifier(std::string(table::kDeleteSign));
  if (target.delete_sign) {
    select += ", " + engine::QuoteIdentifier(std::string(table::kDeleteSign)) + "::VARCHAR";
    copied_names += ", " + sign;
  }
  if (!key.empty()) {
    copy_into = pg.Identifier(kStagingName);
    MR_RETURN_IF_ERROR(pg.Execute("CREATE TEMP TABLE " + copy_into + " ON COMMIT DROP AS SELECT " +
                                  names + (target.delete_sign ? ", 0 AS " + sign : "") + " FROM " +
                                  table + " WITH NO DATA"));
  }
  MR_ASSIGN_OR_RETURN(auto rows, duck.Query("SELECT " + select + " FROM " + target.staging));
  int64_t copied = 0;
  std::unique_ptr<engine::DataChunk> chunk;
  size_t row = 0;
  const std::string copy = "COPY " + copy_into + " (" + copied_names + ") FROM STDIN";
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
  if (!key.empty()) {
    std::string kept;
    if (target.delete_sign) {
      std::string match;
      for (size_t k : target.table.key) {
        const std::string name = pg.Identifier(target.table.columns[k].name);
        match += " AND t." + name + " = s." + name;
      }
      MR_RETURN_IF_ERROR(pg.Execute("DELETE FROM " + table + " t USING " + copy_into +
                                    " s WHERE s." + sign + " = 1" + match));
      kept = " WHERE " + sign + " IS DISTINCT FROM 1";
    }
    MR_RETURN_IF_ERROR(pg.Execute("INSERT INTO " + table + " (" + names + ") SELECT " + names +
                                  " FROM " + copy_into + kept + " ON CONFLICT (" + key + ") DO " +
                                  (updates.empty() ? "NOTHING" : "UPDATE SET " + updates)));
    // Gone now rather than at the commit: the transaction may copy again (PgSink's Flush).
    MR_RETURN_IF_ERROR(pg.Execute("DROP TABLE " + copy_into));
  }
  return copied;
}

}  // namespace millrace::pgsink
