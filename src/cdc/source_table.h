// SourceTable: a table of a change stream's source database as Millrace sees it, whatever the
// database: its columns (names, the source's own type, the mapping into DuckDB and Doris types)
// and its primary key.
//
// Contract
// - A column's type_name is the source's spelling of its type (for messages and for casting a
//   key's text back in the source's SQL); type_id is the source's identity of the type
//   (PostgreSQL's OID), compared to notice that a column's type changed.
// - missing_value is what rows older than the column read (PostgreSQL's ADD COLUMN ...
//   DEFAULT x: attmissingval, which no WAL record carries); nullopt: NULL. Only descriptions
//   taken from a change stream have it.
// - Thread-safety: values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "change/change_value.h"
#include "common/status.h"

namespace millrace::cdc {

struct SourceColumn {
  std::string name;
  std::string type_name;
  uint32_t type_id = 0;
  change::TypeMapping mapping;
  bool not_null = false;
  std::optional<std::string> missing_value;
};

struct SourceTable {
  uint32_t oid = 0;  // the source's identity of the table (0: none)
  std::string schema;
  std::string name;
  std::vector<SourceColumn> columns;
  std::vector<size_t> key;  // indexes into columns, in the primary key's order

  // "schema.name", for messages.
  std::string Display() const { return schema + "." + name; }
  // The column named `name`, or -1.
  int Find(const std::string& name) const;
  // Sets `key` from (position in the primary key, column index) pairs in any order;
  // INVALID_ARGUMENT saying why a key is needed when there are none (`source` names the
  // database, e.g. "PostgreSQL").
  Status SetPrimaryKey(std::vector<std::pair<int64_t, size_t>> positions, std::string_view source);
};

}  // namespace millrace::cdc
