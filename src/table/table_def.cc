#include "table/table_def.h"

#include <algorithm>

#include "common/strings.h"

namespace millrace::table {

std::string_view ModelName(TableModel model) {
  switch (model) {
    case TableModel::kDuplicate:
      return "DUPLICATE";
    case TableModel::kUnique:
      return "UNIQUE";
    case TableModel::kAggregate:
      return "AGGREGATE";
  }
  return "DUPLICATE";
}

std::string_view AggregationName(Aggregation aggregation) {
  switch (aggregation) {
    case Aggregation::kNone:
      return "";
    case Aggregation::kSum:
      return "SUM";
    case Aggregation::kMax:
      return "MAX";
    case Aggregation::kMin:
      return "MIN";
    case Aggregation::kReplace:
      return "REPLACE";
    case Aggregation::kReplaceIfNotNull:
      return "REPLACE_IF_NOT_NULL";
  }
  return "";
}

const Column* TableDef::FindColumn(std::string_view column) const {
  auto it = std::find_if(columns.begin(), columns.end(),
                         [&](const Column& c) { return EqualsIgnoreCase(c.name, column); });
  return it == columns.end() ? nullptr : &*it;
}

bool TableDef::IsKey(std::string_view column) const {
  return std::any_of(keys.begin(), keys.end(),
                     [&](const std::string& key) { return EqualsIgnoreCase(key, column); });
}

}  // namespace millrace::table
