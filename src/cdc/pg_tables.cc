#include "cdc/pg_tables.h"

#include <algorithm>
#include <charconv>

namespace millrace::cdc {
namespace {

int64_t ToInt(const pg::Field& field) {
  int64_t v = 0;
  if (field) std::from_chars(field->data(), field->data() + field->size(), v);
  return v;
}

}  // namespace

std::string SourceTable::Quoted(const pg::PgConnection& conn) const {
  return conn.Identifier(schema) + "." + conn.Identifier(name);
}

int SourceTable::Find(const std::string& column) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == column) return static_cast<int>(i);
  }
  return -1;
}

Result<SourceTable> DescribeTable(pg::PgConnection& conn, const std::string& schema,
                                  const std::string& table) {
  // A domain is described by its base type.
  const std::string sql =
      "SELECT c.oid, a.attname, t.oid, CASE WHEN dt.typtype = 'd' THEN dt.typtypmod ELSE "
      "a.atttypmod END, t.typtype, t.typcategory, t.typelem, format_type(a.atttypid, "
      "a.atttypmod), a.attnotnull, (SELECT array_position(i.indkey::int2[], a.attnum) FROM "
      "pg_index i WHERE i.indrelid = c.oid AND i.indisprimary) "
      "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
      "JOIN pg_attribute a ON a.attrelid = c.oid "
      "JOIN pg_type dt ON dt.oid = a.atttypid "
      "JOIN pg_type t ON t.oid = CASE WHEN dt.typtype = 'd' THEN dt.typbasetype ELSE dt.oid END "
      "WHERE n.nspname = " +
      conn.Literal(schema) + " AND c.relname = " + conn.Literal(table) +
      " AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum";
  MR_ASSIGN_OR_RETURN(pg::Rows rows, conn.Query(sql));
  if (rows.rows.empty()) {
    return Status::NotFound("PostgreSQL table " + schema + "." + table + " does not exist in " +
                            pg::Describe(conn.params()));
  }
  SourceTable out;
  out.schema = schema;
  out.name = table;
  std::vector<std::pair<int64_t, size_t>> key;
  for (const pg::Row& row : rows.rows) {
    out.oid = static_cast<uint32_t>(ToInt(row[0]));
    SourceColumn column;
    column.name = row[1].value_or("");
    column.type.oid = static_cast<uint32_t>(ToInt(row[2]));
    column.type.modifier = static_cast<int32_t>(ToInt(row[3]));
    column.type.typtype = row[4] && !row[4]->empty() ? (*row[4])[0] : 'b';
    column.type.category = row[5] && !row[5]->empty() ? (*row[5])[0] : 'U';
    column.type.element = static_cast<uint32_t>(ToInt(row[6]));
    column.type.element_modifier = column.type.modifier;
    column.type.name = row[7].value_or("");
    column.not_null = row[8].value_or("f") == "t";
    column.mapping = pg::MapType(column.type);
    if (row[9]) key.emplace_back(ToInt(row[9]), out.columns.size());
    out.columns.push_back(std::move(column));
  }
  if (key.empty()) {
    return Status::InvalidArgument(
        "PostgreSQL table " + out.Display() +
        " has no primary key: change data capture applies updates and deletes by key "
        "(add a PRIMARY KEY)");
  }
  std::sort(key.begin(), key.end());
  for (const auto& [position, index] : key)
    out.key.push_back(index);
  return out;
}

Status CheckReplication(pg::PgConnection& conn) {
  MR_ASSIGN_OR_RETURN(
      pg::Rows rows,
      conn.Query("SELECT current_setting('wal_level'), r.rolreplication OR r.rolsuper FROM "
                 "pg_roles r WHERE r.rolname = current_user"));
  if (rows.rows.size() != 1) return Status::Internal("cannot read the role of the current user");
  const std::string wal_level = rows.rows[0][0].value_or("");
  if (wal_level != "logical") {
    return Status::FailedPrecondition(
        "PostgreSQL " + pg::Describe(conn.params()) + " has wal_level = " + wal_level +
        "; change data capture needs wal_level = logical (set it in postgresql.conf and "
        "restart the server)");
  }
  if (rows.rows[0][1].value_or("f") != "t") {
    return Status::PermissionDenied("PostgreSQL user " + conn.params().user +
                                    " may not stream changes: it needs the REPLICATION "
                                    "attribute (ALTER ROLE " +
                                    conn.params().user + " REPLICATION)");
  }
  return Status::Ok();
}

}  // namespace millrace::cdc
