#include "catalog/sql_external_catalog_store.h"

#include <nlohmann/json.hpp>

#include "catalog/catalog_sql.h"
#include "catalog/catalog_tables.h"

namespace millrace::catalog {
namespace {

using external::ExternalCatalog;

// The row of a catalog under an existing name, compared case-insensitively.
constexpr const char* kNameMatch = " WHERE lower(name) = lower(?)";

Result<bool> NameStored(Connection& conn, std::string_view name) {
  MR_ASSIGN_OR_RETURN(
      auto exists, Statement::Prepare(conn, "SELECT count(*) FROM " +
                                                ExternalCatalogsTable().qualified() + kNameMatch));
  int64_t count = 0;
  MR_RETURN_IF_ERROR(exists.Str(std::string(name))
                         .ForEach([&](const SqlRow& row) {
                           count = row.Int(0);
                           return Status::Ok();
                         })
                         .status());
  return count > 0;
}

Result<CatalogRow> StoredRow(const ExternalCatalog& catalog, const SecretBox& secrets) {
  nlohmann::json properties = nlohmann::json::object();
  for (const auto& [key, value] : catalog.properties)
    properties[key] = value;
  CatalogRow row{.name = catalog.name,
                 .comment = catalog.comment,
                 .create_time_us = catalog.create_time_us,
                 .update_time_us = catalog.update_time_us};
  MR_ASSIGN_OR_RETURN(row.sealed_properties, secrets.Seal(properties.dump()));
  return row;
}

}  // namespace

Status SqlCatalogStore::RequireKey() const {
  if (secrets_ != nullptr) return Status::Ok();
  return Status::FailedPrecondition("the job catalog in " + where_ +
                                    " has no key to seal or open a catalog's password with");
}

Result<std::vector<ExternalCatalog>> SqlCatalogStore::LoadCatalogs() {
  MR_RETURN_IF_ERROR(RequireKey());
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(
      std::vector<CatalogRow> rows,
      ExternalCatalogsTable().ReadAll(*conn, ExternalCatalogsTable().Select() + " ORDER BY name"));
  std::vector<ExternalCatalog> catalogs;
  for (CatalogRow& row : rows) {
    const std::string context = "catalog " + row.name + " in " + where_;
    auto opened = secrets_->Unseal(row.sealed_properties);
    if (!opened.ok()) return opened.status().WithContext(context);
    const nlohmann::json properties = nlohmann::json::parse(*opened, nullptr, false);
    if (!properties.is_object()) return Status::DataLoss(context + ": malformed properties");
    ExternalCatalog catalog{.name = std::move(row.name),
                            .comment = std::move(row.comment),
                            .create_time_us = row.create_time_us,
                            .update_time_us = row.update_time_us};
    for (const auto& [key, value] : properties.items()) {
      if (!value.is_string()) return Status::DataLoss(context + ": malformed properties");
      catalog.properties.emplace(key, value.get<std::string>());
    }
    catalogs.push_back(std::move(catalog));
  }
  return catalogs;
}

Status SqlCatalogStore::InsertCatalog(const ExternalCatalog& catalog) {
  MR_RETURN_IF_ERROR(RequireKey());
  MR_ASSIGN_OR_RETURN(const CatalogRow row, StoredRow(catalog, *secrets_));
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(const bool stored, NameStored(conn, catalog.name));
    if (stored) return Status::AlreadyExists("catalog " + catalog.name + " is in " + where_);
    return ExternalCatalogsTable().InsertRow(conn, row);
  });
}

Status SqlCatalogStore::UpdateCatalog(std::string_view name, const ExternalCatalog& catalog) {
  MR_RETURN_IF_ERROR(RequireKey());
  MR_ASSIGN_OR_RETURN(const CatalogRow row, StoredRow(catalog, *secrets_));
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(const bool stored, NameStored(conn, name));
    if (!stored) return Status::NotFound("catalog " + std::string(name) + " is not in " + where_);
    return ExternalCatalogsTable()
        .UpdateRows(conn, row, nullptr, kNameMatch,
                    [&](Statement& stmt) { stmt.Str(std::string(name)); })
        .status();
  });
}

Status SqlCatalogStore::DeleteCatalog(std::string_view name) {
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(const bool stored, NameStored(conn, name));
    if (!stored) return Status::NotFound("catalog " + std::string(name) + " is not in " + where_);
    MR_ASSIGN_OR_RETURN(
        auto remove, Statement::Prepare(
                         conn, "DELETE FROM " + ExternalCatalogsTable().qualified() + kNameMatch));
    return remove.Str(std::string(name)).Run().status();
  });
}

}  // namespace millrace::catalog
