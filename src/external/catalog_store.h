// CatalogStore: where Millrace keeps its external catalogs. The embedded implementation is the
// job catalog (catalog::SqlCatalogStore, table __millrace.external_catalogs); cluster mode
// can keep them in PostgreSQL behind the same interface.
//
// Contract
// - Each method is one transaction of its own: it commits whole or not at all.
// - The store keeps what it is given and checks nothing beyond it (ExternalCatalogs decides what
//   may change). Names are unique, compared case-insensitively, and kept as first given.
// - Properties hold the catalog's password: a store keeps them sealed (common/secret_box.h).
// - Thread-safety: all methods may be called concurrently.
#pragma once

#include <string_view>
#include <vector>

#include "common/result.h"
#include "external/catalog_def.h"

namespace millrace::external {

class CatalogStore {
 public:
  virtual ~CatalogStore() = default;

  virtual Result<std::vector<ExternalCatalog>> LoadCatalogs() = 0;
  // ALREADY_EXISTS when a catalog of that name is stored.
  virtual Status InsertCatalog(const ExternalCatalog& catalog) = 0;
  // Replaces every field of the catalog named `name` (a rename when catalog.name differs).
  // NOT_FOUND when none is stored.
  virtual Status UpdateCatalog(std::string_view name, const ExternalCatalog& catalog) = 0;
  // NOT_FOUND when none is stored.
  virtual Status DeleteCatalog(std::string_view name) = 0;
};

}  // namespace millrace::external
