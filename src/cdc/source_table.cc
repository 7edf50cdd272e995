#include "cdc/source_table.h"

namespace millrace::cdc {

int SourceTable::Find(const std::string& column) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == column) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace millrace::cdc
