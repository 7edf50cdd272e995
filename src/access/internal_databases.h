// The server's internal databases: the job catalog (engine::kInternalSchema), the MySQL
// information_schema views (sql::kMysqlInfoSchema), the filtered information_schema and its
// stubs (information_schema.h).
//
// Contract
// - No client, root included, uses one, names a relation of one in a statement, or makes one a
//   job's target: AccessGuard and JobAccess refuse with MySQL error 1044 naming it.
// - Names compare without regard to case, as DuckDB's catalog resolves them.
#pragma once

#include <string_view>

namespace millrace::access {

bool IsInternalDatabase(std::string_view database);

}  // namespace millrace::access
