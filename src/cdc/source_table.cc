#include "cdc/source_table.h"

#include <algorithm>

namespace millrace::cdc {

int SourceTable::Find(const std::string& column) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == column) return static_cast<int>(i);
  }
  return -1;
}

Status SourceTable::SetPrimaryKey(std::vector<std::pair<int64_t, size_t>> positions,
                                  std::string_view source) {
  if (positions.empty()) {
    return Status::InvalidArgument(std::string(source) + " table " + Display() +
                                   " has no primary key: change data capture applies updates "
                                   "and deletes by key (add a PRIMARY KEY)");
  }
  std::sort(positions.begin(), positions.end());
  key.clear();
  for (const auto& [position, index] : positions)
    key.push_back(index);
  return Status::Ok();
}

}  // namespace millrace::cdc
