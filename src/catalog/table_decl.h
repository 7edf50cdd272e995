// A catalog table declared once: each column's name, DuckDB type, and how it is written from
// and read into the record the table stores. The table's DDL, its INSERT and UPDATE statements,
// its SELECT list and its row reader are all derived from that one declaration, so a column
// added, moved or retyped changes them all together (catalog_tables.h declares the tables).
// Internal to the catalog module.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog_sql.h"
#include "engine/database.h"
#include "engine/internal_schema.h"
#include "engine/query_result.h"

namespace millrace::catalog {

// One value of a result row.
struct Cell {
  const DataChunk& chunk;
  size_t col;
  size_t row;
  std::string Text() const { return catalog::Text(chunk, col, row); }
  int64_t Int() const { return catalog::Int(chunk, col, row); }
  bool Bool() const { return !chunk.IsNull(col, row) && chunk.GetBool(col, row); }
};

template <typename Record>
struct Column {
  std::string name;
  std::string type;  // DuckDB type and constraints, as the DDL writes them
  // Null when the record does not hold the column (a key the statement binds itself, a value
  // another module writes).
  std::function<void(const Record&, Values&)> write;
  std::function<Status(const Cell&, Record&)> read;
};

template <typename Record>
Column<Record> IntColumn(std::string name, int64_t Record::*member, std::string type = "BIGINT") {
  return {std::move(name), std::move(type),
          [member](const Record& r, Values& out) { out.Int(r.*member); },
          [member](const Cell& c, Record& r) {
            r.*member = c.Int();
            return Status::Ok();
          }};
}

template <typename Record>
Column<Record> TextColumn(std::string name, std::string Record::*member,
                          std::string type = "VARCHAR") {
  return {std::move(name), std::move(type),
          [member](const Record& r, Values& out) { out.Str(r.*member); },
          [member](const Cell& c, Record& r) {
            r.*member = c.Text();
            return Status::Ok();
          }};
}

template <typename Record>
Column<Record> BoolColumn(std::string name, bool Record::*member, std::string type = "BOOLEAN") {
  return {std::move(name), std::move(type),
          [member](const Record& r, Values& out) { out.Bool(r.*member); },
          [member](const Cell& c, Record& r) {
            r.*member = c.Bool();
            return Status::Ok();
          }};
}

// A column the record does not hold.
template <typename Record>
Column<Record> OtherColumn(std::string name, std::string type) {
  return {std::move(name), std::move(type), nullptr, nullptr};
}

template <typename Record>
class Table {
 public:
  using ColumnFilter = std::function<bool(const Column<Record>&)>;

  Table(std::string name, std::vector<Column<Record>> columns)
      : qualified_(std::string(engine::kInternalSchema) + "." + name),
        columns_(std::move(columns)) {}

  // "__millrace.<name>"
  const std::string& qualified() const { return qualified_; }

  // CREATE TABLE with every column, in declaration order.
  std::string Create() const {
    std::string sql;
    for (const auto& c : columns_)
      sql += (sql.empty() ? "" : ", ") + c.name + " " + c.type;
    return "CREATE TABLE " + qualified_ + " (" + sql + ")";
  }

  // The columns `keep` accepts (all by default), comma-separated, in declaration order.
  std::string Names(const ColumnFilter& keep = nullptr) const {
    std::string names;
    for (const auto& c : columns_)
      if (!keep || keep(c)) names += (names.empty() ? "" : ", ") + c.name;
    return names;
  }

  // "SELECT <every column> FROM __millrace.<name>": the rows Read reads.
  std::string Select() const { return "SELECT " + Names() + " FROM " + qualified_; }

  // INSERT of the columns the record writes; Write binds them in the same order.
  std::string Insert() const {
    return "INSERT INTO " + qualified_ + " (" + Names(Writable()) + ") VALUES (" + Marks() + ")";
  }
  // "?, ?, ..." for the columns the record writes.
  std::string Marks() const {
    std::string marks;
    for (const auto& c : columns_)
      if (c.write) marks += marks.empty() ? "?" : ", ?";
    return marks;
  }
  static ColumnFilter Writable() {
    return [](const Column<Record>& c) { return static_cast<bool>(c.write); };
  }

  // "UPDATE __millrace.<name> SET a = ?, b = ?" for the writable columns `keep` accepts;
  // WriteSome(keep) binds them; the caller appends and binds its WHERE.
  std::string Update(const ColumnFilter& keep) const {
    std::string sets;
    for (const auto& c : columns_)
      if (c.write && keep(c)) sets += (sets.empty() ? "" : ", ") + c.name + " = ?";
    return "UPDATE " + qualified_ + " SET " + sets;
  }

  void Write(const Record& r, Values& out) const { WriteSome(r, out, nullptr); }
  // Inserts `r` (Insert(), Write), in the connection's transaction.
  Status InsertRow(Connection& conn, const Record& r) const {
    MR_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(conn, Insert()));
    Write(r, stmt);
    return stmt.Run().status();
  }
  void WriteSome(const Record& r, Values& out, const ColumnFilter& keep) const {
    for (const auto& c : columns_)
      if (c.write && (!keep || keep(c))) c.write(r, out);
  }

  // Row `row` of a result of Select() (every column, in declaration order).
  Result<Record> Read(const DataChunk& chunk, size_t row) const {
    Record r;
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (columns_[i].read) MR_RETURN_IF_ERROR(columns_[i].read(Cell{chunk, i, row}, r));
    }
    return r;
  }
  // Every row of a result of Select().
  Result<std::vector<Record>> ReadAll(engine::QueryResult& result) const {
    std::vector<Record> rows;
    MR_RETURN_IF_ERROR(ForEachRow(result, [&](const DataChunk& chunk, size_t row) -> Status {
      MR_ASSIGN_OR_RETURN(Record r, Read(chunk, row));
      rows.push_back(std::move(r));
      return Status::Ok();
    }));
    return rows;
  }

 private:
  std::string qualified_;
  std::vector<Column<Record>> columns_;
};

}  // namespace millrace::catalog
