// external::CatalogStore, one of the catalog's stores (sql_stores.h): table
// __millrace.external_catalogs, a row per catalog whose properties (the password among them)
// are one JSON object sealed with the server's key (common/secret_box.h), so a copy of the
// database alone never gives a catalog's password.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "catalog/sql_db.h"
#include "common/result.h"
#include "common/secret_box.h"
#include "external/catalog_store.h"

namespace millrace::catalog {

class SqlCatalogStore final : public external::CatalogStore {
 public:
  // `db` and `secrets` are borrowed; `where` names the database in errors. Without `secrets`
  // no catalog can be stored or loaded (FAILED_PRECONDITION).
  SqlCatalogStore(SqlDatabase* db, std::string where, const SecretBox* secrets)
      : db_(db), where_(std::move(where)), secrets_(secrets) {}

  Result<std::vector<external::ExternalCatalog>> LoadCatalogs() override;
  Status InsertCatalog(const external::ExternalCatalog& catalog) override;
  Status UpdateCatalog(std::string_view name, const external::ExternalCatalog& catalog) override;
  Status DeleteCatalog(std::string_view name) override;

 private:
  Status RequireKey() const;

  SqlDatabase* const db_;
  const std::string where_;
  const SecretBox* const secrets_;
};

}  // namespace millrace::catalog
