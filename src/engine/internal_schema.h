#pragma once

namespace millrace::engine {

// The schema of the embedded database in which Millrace keeps its own tables: the catalog
// (src/catalog/), table models and load labels (src/table/), a job's filtered rows and the
// change streams' staging tables. The SQL layer hides it from users (SHOW DATABASES) and the
// access layer refuses statements that name it (access/internal_databases.h).
inline constexpr const char* kInternalSchema = "__millrace";

}  // namespace millrace::engine
