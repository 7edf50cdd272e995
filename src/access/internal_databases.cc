#include "access/internal_databases.h"

#include <algorithm>
#include <array>

#include "access/information_schema.h"
#include "common/strings.h"
#include "engine/internal_schema.h"
#include "sql/mysql_information_schema.h"

namespace millrace::access {

bool IsInternalDatabase(std::string_view database) {
  static constexpr std::array<std::string_view, 4> kInternalDatabases = {
      engine::kInternalSchema, sql::kMysqlInfoSchema, kFilteredSchema, kStubSchema};
  return std::any_of(
      kInternalDatabases.begin(), kInternalDatabases.end(),
      [&](std::string_view internal) { return EqualsIgnoreCase(internal, database); });
}

}  // namespace millrace::access
