// external::CatalogStore in the embedded DuckDB database: table __millrace.external_catalogs,
// a row per catalog whose properties (the password among them) are one JSON object sealed with
// the data directory's key (common/secret_box.h), so a copy of the database file alone never
// gives a catalog's password. Opened by DuckDbCatalog (duckdb_catalog.h), which owns it; each
// method is a transaction of its own.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/secret_box.h"
#include "engine/database.h"
#include "external/catalog_store.h"

namespace millrace::catalog {

class DuckDbCatalogStore final : public external::CatalogStore {
 public:
  // `db` and `secrets` are borrowed; `where` names the database in errors. Without `secrets`
  // no catalog can be stored or loaded (FAILED_PRECONDITION).
  DuckDbCatalogStore(engine::Database* db, std::string where, const SecretBox* secrets)
      : db_(db), where_(std::move(where)), secrets_(secrets) {}

  Result<std::vector<external::ExternalCatalog>> LoadCatalogs() override;
  Status InsertCatalog(const external::ExternalCatalog& catalog) override;
  Status UpdateCatalog(std::string_view name, const external::ExternalCatalog& catalog) override;
  Status DeleteCatalog(std::string_view name) override;

 private:
  Status RequireKey() const;

  engine::Database* const db_;
  const std::string where_;
  const SecretBox* const secrets_;
};

}  // namespace millrace::catalog
