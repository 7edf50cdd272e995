// External catalogs: PostgreSQL databases that jobs write into, defined in Doris's grammar
// (`CREATE CATALOG pg PROPERTIES ("type" = "jdbc", "jdbc_url" = "jdbc:postgresql://h:5432/db",
// "user" = ..., "password" = ...)`, or `"type" = "postgresql"` with host, port and database).
//
// Contract
// - CatalogPropertySpecs() declares every property once: the parser accepts only its keys
//   (in any case), the validator checks values by it, SHOW CREATE CATALOG masks its secrets and
//   docs/postgresql.md holds its table (a test keeps the two in sync). A spec's scopes say which
//   type takes it (kJdbcScope, kPostgresqlScope).
// - ParseCatalog reads a catalog's properties into where it connects (CatalogEndpoint). An
//   unknown key, a key the type does not take, a value of the wrong form, a missing required
//   key, a jdbc_url of another engine or with a parameter libpq cannot honour are
//   INVALID_ARGUMENT naming the key (never the password, nor a URL's text past its scheme).
// - Catalog names are Doris's: a letter, then letters, digits and '_', at most 64 characters;
//   they compare case-insensitively (as DuckDB resolves the names a statement writes).
//   `internal` is Doris's own catalog; `system`, `temp` and `memory` are DuckDB's.
// - Thread-safety: pure functions over values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/param_spec.h"
#include "common/result.h"
#include "pg/pg_connection.h"

namespace millrace::external {

inline constexpr uint8_t kJdbcScope = 1;
inline constexpr uint8_t kPostgresqlScope = 2;

// Properties as given, keys lower-cased.
using CatalogProperties = std::map<std::string, std::string, std::less<>>;

struct ExternalCatalog {
  std::string name;
  std::string comment;
  CatalogProperties properties;  // the password included: the store seals them
  int64_t create_time_us = 0;
  int64_t update_time_us = 0;

  // "jdbc" or "postgresql".
  std::string type() const;
};

// Where a catalog connects, read from its properties.
struct CatalogEndpoint {
  pg::ConnectParams params;
  bool test_connection = true;  // CREATE and ALTER connect once before they store it
};

const std::vector<ParamSpec>& CatalogPropertySpecs();

// `properties` with keys lower-cased; INVALID_ARGUMENT when a key is given twice in any case.
Result<CatalogProperties> NormalizeProperties(
    const std::vector<std::pair<std::string, std::string>>& given);
Result<CatalogEndpoint> ParseCatalog(const CatalogProperties& properties);
// OK, or INVALID_ARGUMENT saying what a catalog name must be.
Status CheckCatalogName(std::string_view name);
// The statement that makes `catalog` again, its secrets shown as Doris shows them ("*XXX").
std::string ShowCreateCatalog(const ExternalCatalog& catalog);

}  // namespace millrace::external
