#include "table/table_def.h"

#include <algorithm>
#include <array>
#include <utility>

#include "common/strings.h"

namespace millrace::table {

namespace {

// Each model and aggregation with the name Doris writes it: read both ways.
constexpr std::array<std::pair<TableModel, std::string_view>, 3> kModelNames = {{
    {TableModel::kDuplicate, "DUPLICATE"},
    {TableModel::kUnique, "UNIQUE"},
    {TableModel::kAggregate, "AGGREGATE"},
}};
constexpr std::array<std::pair<Aggregation, std::string_view>, 6> kAggregationNames = {{
    {Aggregation::kNone, ""},
    {Aggregation::kSum, "SUM"},
    {Aggregation::kMax, "MAX"},
    {Aggregation::kMin, "MIN"},
    {Aggregation::kReplace, "REPLACE"},
    {Aggregation::kReplaceIfNotNull, "REPLACE_IF_NOT_NULL"},
}};

template <typename Enum, size_t N>
std::string_view NameOf(const std::array<std::pair<Enum, std::string_view>, N>& names, Enum value) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return names.front().second;
}

template <typename Enum, size_t N>
std::optional<Enum> ValueOf(const std::array<std::pair<Enum, std::string_view>, N>& names,
                            std::string_view name) {
  for (const auto& [value, n] : names) {
    if (EqualsIgnoreCase(n, name)) return value;
  }
  return std::nullopt;
}

}  // namespace

std::string_view ModelName(TableModel model) {
  return NameOf(kModelNames, model);
}

std::string_view AggregationName(Aggregation aggregation) {
  return NameOf(kAggregationNames, aggregation);
}

std::optional<TableModel> ModelNamed(std::string_view name) {
  return ValueOf(kModelNames, name);
}

std::optional<Aggregation> AggregationNamed(std::string_view name) {
  return ValueOf(kAggregationNames, name);
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
