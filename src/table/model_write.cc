#include "table/model_write.h"

#include <algorithm>
#include <optional>

#include "common/strings.h"
#include "engine/database.h"
#include "sql/mysql_errors.h"

namespace millrace::table {
namespace {

using engine::QuoteIdentifier;

// The value of a column folded over the rows of one key.
std::string Fold(const Column& column, const std::string& name, const std::string& order) {
  switch (column.aggregation) {
    case Aggregation::kSum:
      return "CAST(sum(" + name + ") AS " + column.duckdb_type + ")";
    case Aggregation::kMax:
      return "max(" + name + ")";
    case Aggregation::kMin:
      return "min(" + name + ")";
    case Aggregation::kReplaceIfNotNull:
      return "arg_max(" + name + ", " + order + ") FILTER (WHERE " + name + " IS NOT NULL)";
    case Aggregation::kReplace:
    case Aggregation::kNone:
      return "arg_max_null(" + name + ", " + order + ")";
  }
  return name;
}

// The value of a column after a new row of its key (EXCLUDED) meets the table's row.
std::string Merge(const Column& column, const std::string& name) {
  const std::string excluded = "EXCLUDED." + name;
  switch (column.aggregation) {
    case Aggregation::kSum:
      return "CASE WHEN " + excluded + " IS NULL THEN " + name + " WHEN " + name +
             " IS NULL THEN " + excluded + " ELSE " + name + " + " + excluded + " END";
    case Aggregation::kMax:
      return "greatest(" + name + ", " + excluded + ")";
    case Aggregation::kMin:
      return "least(" + name + ", " + excluded + ")";
    case Aggregation::kReplaceIfNotNull:
      return "coalesce(" + excluded + ", " + name + ")";
    case Aggregation::kReplace:
    case Aggregation::kNone:
      return excluded;
  }
  return excluded;
}

}  // namespace

Result<std::string> UpsertClause(const TableDef& def, const std::vector<std::string>& columns) {
  std::string keys;
  for (const std::string& key : def.keys) {
    const bool written = std::any_of(columns.begin(), columns.end(), [&](const std::string& c) {
      return EqualsIgnoreCase(c, key);
    });
    if (!written) {
      return sql::TableDefinitionError(
          "key column " + key + " of " + def.name + " is not written: every key column of a " +
          std::string(ModelName(def.model)) + " KEY table needs a value");
    }
    keys += (keys.empty() ? "" : ", ") + QuoteIdentifier(key);
  }
  std::string updates;
  for (const std::string& name : columns) {
    if (def.IsKey(name)) continue;
    const Column* column = def.FindColumn(name);
    const std::string quoted = QuoteIdentifier(name);
    const std::string merged = def.model == TableModel::kAggregate && column != nullptr
                                   ? Merge(*column, quoted)
                                   : "EXCLUDED." + quoted;
    updates += (updates.empty() ? "" : ", ") + quoted + " = " + merged;
  }
  return " ON CONFLICT (" + keys + ") DO " +
         (updates.empty() ? "NOTHING" : "UPDATE SET " + updates);
}

bool IsDeleteSign(std::string_view column) {
  return EqualsIgnoreCase(column, kDeleteSign);
}

Result<std::vector<std::string>> ModelWriteSql(const TableDef& def, std::string_view target,
                                               const std::vector<std::string>& given,
                                               std::string_view source,
                                               std::string_view order_column) {
  std::vector<std::string> columns;
  std::optional<std::string> sign;
  for (const std::string& column : given) {
    if (IsDeleteSign(column)) {
      sign = column;
    } else {
      columns.push_back(column);
    }
  }
  if (sign && def.delete_sign_kept) {
    // The sign is a value like any other: the newest row of a key keeps it.
    columns.push_back(*sign);
    sign.reset();
  }
  if (sign && def.model != TableModel::kUnique) {
    return sql::TableDefinitionError(std::string(kDeleteSign) +
                                     " deletes rows of UNIQUE KEY "
                                     "tables only; " +
                                     def.name + " is " + std::string(ModelName(def.model)) +
                                     " KEY");
  }
  std::string list;
  for (const std::string& column : columns)
    list += (list.empty() ? "" : ", ") + QuoteIdentifier(column);
  const std::string insert = "INSERT INTO " + std::string(target) + " (" + list + ") ";
  if (def.model == TableModel::kDuplicate) {
    return std::vector<std::string>{insert + "SELECT " + list + " FROM (" + std::string(source) +
                                    ")"};
  }
  std::string keys;
  std::string key_match;
  for (const std::string& key : def.keys) {
    keys += (keys.empty() ? "" : ", ") + QuoteIdentifier(key);
    key_match += (key_match.empty() ? "" : " AND ") + std::string(target) + "." +
                 QuoteIdentifier(key) + " = __millrace_newest." + QuoteIdentifier(key);
  }
  MR_ASSIGN_OR_RETURN(const std::string conflict, UpsertClause(def, columns));
  const std::string order = QuoteIdentifier(order_column);
  std::string select;
  for (const std::string& name : columns) {
    const Column* column = def.FindColumn(name);
    const std::string quoted = QuoteIdentifier(name);
    if (def.model == TableModel::kAggregate) {
      select += (select.empty() ? "" : ", ") +
                (def.IsKey(name) || column == nullptr ? quoted : Fold(*column, quoted, order));
    }
  }
  if (def.model == TableModel::kAggregate) {
    return std::vector<std::string>{insert + "SELECT " + select + " FROM (" + std::string(source) +
                                    ") GROUP BY " + keys + conflict};
  }
  const std::string newest = "(SELECT * FROM (" + std::string(source) +
                             ") QUALIFY row_number() OVER (PARTITION BY " + keys + " ORDER BY " +
                             order + " DESC) = 1)";
  if (!sign) {
    return std::vector<std::string>{insert + "SELECT " + list + " FROM " + newest + conflict};
  }
  const std::string sign_value = "TRY_CAST(" + QuoteIdentifier(*sign) + " AS INTEGER) = 1";
  return std::vector<std::string>{"DELETE FROM " + std::string(target) + " USING " + newest +
                                      " AS __millrace_newest WHERE TRY_CAST(__millrace_newest." +
                                      QuoteIdentifier(*sign) + " AS INTEGER) = 1 AND " + key_match,
                                  insert + "SELECT " + list + " FROM " + newest + " WHERE (" +
                                      sign_value + ") IS NOT TRUE" + conflict};
}

}  // namespace millrace::table
