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
#include "engine/internal_schema.h"

namespace millrace::catalog {

// One value of a result row.
struct Cell {
  const SqlRow& row;
  size_t col;
  std::string Text() const { return row.Text(col); }
  int64_t Int() const { return row.Int(col); }
  bool Bool() const { return row.Bool(col); }
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

  // CREATE TABLE with every column, in declaration order. PostgreSQL compares text columns
  // bytewise (COLLATE "C"), as DuckDB does: keys are compared and paged in the same order by
  // both engines and by the job layer.
  std::string Create(SqlEngine engine = SqlEngine::kDuckDb) const {
    std::string sql;
    for (const auto& c : columns_) {
      std::string type = c.type;
      if (engine == SqlEngine::kPostgres && type.starts_with("VARCHAR")) {
        type.insert(std::string_view("VARCHAR").size(), " COLLATE \"C\"");
      }
      sql += (sql.empty() ? "" : ", ") + c.name + " " + type;
    }
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

  // Sets the writable columns `keep` accepts (all when null) to `r`'s in the rows `where` (its
  // SQL, appended to the UPDATE; its parameters bound by `bind(Statement&)`) selects, in the
  // connection's transaction; the rows changed.
  template <typename Bind>
  Result<int64_t> UpdateRows(Connection& conn, const Record& r, const ColumnFilter& keep,
                             const std::string& where, Bind bind) const {
    const ColumnFilter all = keep ? keep : [](const Column<Record>&) { return true; };
    MR_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(conn, Update(all) + where));
    WriteSome(r, stmt, all);
    bind(stmt);
    return stmt.Run();
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

  // A row of a result of Select() (every column, in declaration order).
  Result<Record> Read(const SqlRow& row) const {
    Record r;
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (columns_[i].read) MR_RETURN_IF_ERROR(columns_[i].read(Cell{row, i}, r));
    }
    return r;
  }
  // Every row `stmt` (a Select() and its conditions, bound) returns.
  Result<std::vector<Record>> ReadAll(Statement& stmt) const {
    std::vector<Record> rows;
    MR_RETURN_IF_ERROR(stmt.ForEach([&](const SqlRow& row) -> Status {
                             MR_ASSIGN_OR_RETURN(Record r, Read(row));
                             rows.push_back(std::move(r));
                             return Status::Ok();
                           })
                           .status());
    return rows;
  }
  // Every row of `sql` (a Select() and its conditions, without parameters).
  Result<std::vector<Record>> ReadAll(Connection& conn, const std::string& sql) const {
    MR_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(conn, sql));
    return ReadAll(stmt);
  }

 private:
  std::string qualified_;
  std::vector<Column<Record>> columns_;
};

}  // namespace millrace::catalog
