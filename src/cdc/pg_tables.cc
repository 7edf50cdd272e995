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

// Fills `type` from columns [first, first + 5) of `row`: the (base) type's OID, its modifier,
// typtype, typcategory, typelem; and format_type at first + 5.
void ReadType(const pg::Row& row, size_t first, pg::PgType* type) {
  type->oid = static_cast<uint32_t>(ToInt(row[first]));
  type->modifier = static_cast<int32_t>(ToInt(row[first + 1]));
  type->typtype = row[first + 2] && !row[first + 2]->empty() ? (*row[first + 2])[0] : 'b';
  type->category = row[first + 3] && !row[first + 3]->empty() ? (*row[first + 3])[0] : 'U';
  type->element = static_cast<uint32_t>(ToInt(row[first + 4]));
  type->element_modifier = type->modifier;
  type->name = row[first + 5].value_or("");
}

// The column's type from ReadType's columns of `row`, mapped.
void SetType(const pg::Row& row, size_t first, SourceColumn* column) {
  pg::PgType type;
  ReadType(row, first, &type);
  column->type_name = type.name;
  column->type_id = type.oid;
  column->mapping = pg::MapType(type);
}

// The base type of a domain, else the type itself, joined as t (the declared type is dt).
constexpr char kBaseTypeJoin[] =
    "JOIN pg_type t ON t.oid = CASE WHEN dt.typtype = 'd' THEN dt.typbasetype ELSE dt.oid END ";

}  // namespace

std::string QuotedName(const pg::PgConnection& conn, const SourceTable& table) {
  return conn.Identifier(table.schema) + "." + conn.Identifier(table.name);
}

Result<SourceTable> DescribeTable(pg::PgConnection& conn, const std::string& schema,
                                  const std::string& table, KeyRule key_rule) {
  // A domain is described by its base type.
  const std::string sql =
      "SELECT c.oid, a.attname, t.oid, CASE WHEN dt.typtype = 'd' THEN dt.typtypmod ELSE "
      "a.atttypmod END, t.typtype, t.typcategory, t.typelem, format_type(a.atttypid, "
      "a.atttypmod), a.attnotnull, (SELECT array_position(i.indkey::int2[], a.attnum) FROM "
      "pg_index i WHERE i.indrelid = c.oid AND i.indisprimary) "
      "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
      "JOIN pg_attribute a ON a.attrelid = c.oid "
      "JOIN pg_type dt ON dt.oid = a.atttypid " +
      std::string(kBaseTypeJoin) + "WHERE n.nspname = " + conn.Literal(schema) +
      " AND c.relname = " + conn.Literal(table) +
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
    SetType(row, 2, &column);
    column.not_null = row[8].value_or("f") == "t";
    if (row[9]) key.emplace_back(ToInt(row[9]), out.columns.size());
    out.columns.push_back(std::move(column));
  }
  if (key.empty() && key_rule == KeyRule::kOptional) return out;
  MR_RETURN_IF_ERROR(out.SetPrimaryKey(std::move(key), "PostgreSQL"));
  return out;
}

Result<SourceTable> DescribeRelation(pg::PgConnection& conn, const SourceTable& known,
                                     const pg::RelationMessage& relation) {
  SourceTable out;
  out.oid = relation.oid;
  out.schema = relation.schema;
  out.name = relation.name;
  if (relation.columns.empty()) {
    return Status::FailedPrecondition("the change stream describes " + known.Display() +
                                      " without columns");
  }
  std::string values;
  for (size_t i = 0; i < relation.columns.size(); ++i) {
    const pg::RelationColumn& c = relation.columns[i];
    values += (i ? ", (" : "(") + std::to_string(i) + ", " + std::to_string(c.type_oid) +
              "::oid, " + std::to_string(c.type_modifier) + ")";
  }
  MR_ASSIGN_OR_RETURN(
      pg::Rows types,
      conn.Query("SELECT v.i, t.oid, CASE WHEN dt.typtype = 'd' THEN dt.typtypmod ELSE v.m END, "
                 "t.typtype, t.typcategory, t.typelem, format_type(v.o, v.m) FROM (VALUES " +
                 values + ") v(i, o, m) JOIN pg_type dt ON dt.oid = v.o " + kBaseTypeJoin +
                 "ORDER BY v.i"));
  if (types.rows.size() != relation.columns.size()) {
    return Status::FailedPrecondition("a type of " + known.Display() +
                                      " in the change stream is no longer in the catalog");
  }
  MR_ASSIGN_OR_RETURN(
      pg::Rows missing,
      conn.Query("SELECT attname, (attmissingval::text::text[])[1] FROM pg_attribute WHERE "
                 "attrelid = " +
                 std::to_string(relation.oid) + " AND atthasmissing AND NOT attisdropped"));
  for (size_t i = 0; i < relation.columns.size(); ++i) {
    SourceColumn column;
    column.name = relation.columns[i].name;
    SetType(types.rows[i], 1, &column);
    if (int k = known.Find(column.name); k >= 0) column.not_null = known.columns[k].not_null;
    for (const pg::Row& row : missing.rows) {
      if (row[0].value_or("") == column.name) column.missing_value = row[1];
    }
    out.columns.push_back(std::move(column));
  }
  for (size_t k : known.key) {
    const int index = out.Find(known.columns[k].name);
    if (index < 0) {
      return Status::FailedPrecondition("the change stream of " + known.Display() +
                                        " lacks key column " + known.columns[k].name);
    }
    out.key.push_back(static_cast<size_t>(index));
  }
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
