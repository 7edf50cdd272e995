// ExternalCatalogs: the server's external catalogs, in memory over their store, and the changes
// CREATE, ALTER and DROP CATALOG make (catalog_statements.h parses them and checks privileges).
//
// Contract
// - Load reads the store once, at start. Every change is written to the store first and made
//   in memory only once the store has it: a failed write changes nothing.
// - Create and Alter read the properties (ParseCatalog); unless test_connection is false they
//   connect once through `probe` and fail with its error (UNAVAILABLE: not reached;
//   UNAUTHENTICATED: the credentials were refused), naming the catalog.
// - Alter merges the properties given over the stored ones; the type cannot change. Sinks
//   read where a catalog connects at each connection (ConnectParamsOf): an ALTER reaches
//   running jobs at their next connection.
// - Drop refuses a catalog that jobs write into (SetJobsWriting), naming them.
// - Names compare case-insensitively (catalog_def.h); errors name the catalog as written.
// - Thread-safety: every method may be called from any thread; changes are serialized, and a
//   change's probe (a network round trip) runs without holding the lock readers take.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "external/catalog_def.h"
#include "external/catalog_store.h"

namespace millrace::external {

// Connects once to where a catalog points; OK when it could.
using ConnectProbe = std::function<Status(const pg::ConnectParams&)>;
// The probe that opens a libpq connection and closes it.
ConnectProbe PgConnectProbe();

class ExternalCatalogs {
 public:
  // `store` and `clock` are borrowed and must outlive this object.
  ExternalCatalogs(CatalogStore* store, Clock* clock, ConnectProbe probe)
      : store_(store), clock_(clock), probe_(std::move(probe)) {}

  Status Load() EXCLUDES(write_mu_, mu_);

  // ALREADY_EXISTS when one of that name exists, unless `if_not_exists`.
  Status Create(std::string name, std::string comment, CatalogProperties properties,
                bool if_not_exists) EXCLUDES(write_mu_, mu_);
  // ALTER CATALOG name SET PROPERTIES (...). NOT_FOUND when there is none of that name.
  Status SetProperties(std::string_view name, const CatalogProperties& changes)
      EXCLUDES(write_mu_, mu_);
  // ALTER CATALOG name MODIFY COMMENT '...'.
  Status SetComment(std::string_view name, std::string comment) EXCLUDES(write_mu_, mu_);
  // NOT_FOUND when there is none of that name, unless `if_exists`.
  Status Drop(std::string_view name, bool if_exists) EXCLUDES(write_mu_, mu_);

  std::optional<ExternalCatalog> Find(std::string_view name) const EXCLUDES(mu_);
  // Where catalog `name` connects now; NOT_FOUND when there is no such catalog.
  Result<pg::ConnectParams> ConnectParamsOf(std::string_view name) const EXCLUDES(mu_);
  // The names of the jobs that write into tables of a catalog (set once the jobs are up).
  using JobsWriting = std::function<std::vector<std::string>(std::string_view catalog)>;
  void SetJobsWriting(JobsWriting jobs_writing) EXCLUDES(mu_);
  // By name.
  std::vector<ExternalCatalog> List() const EXCLUDES(mu_);

 private:
  // The catalog named `name` (case-insensitively), or null.
  const ExternalCatalog* FindLocked(std::string_view name) const REQUIRES(mu_);
  Status Probe(const ExternalCatalog& catalog) const;
  // Writes `updated` over the catalog now named `name`, in the store and then in memory.
  Status Replace(std::string_view name, ExternalCatalog updated) REQUIRES(write_mu_) EXCLUDES(mu_);

  CatalogStore* const store_;
  Clock* const clock_;
  const ConnectProbe probe_;
  // Held by a change from its read to its write (the probe and the store's write included),
  // so two changes of one catalog never interleave; readers take only mu_.
  Mutex write_mu_;
  mutable Mutex mu_;
  std::vector<ExternalCatalog> catalogs_ GUARDED_BY(mu_);
  JobsWriting jobs_writing_ GUARDED_BY(mu_);
};

}  // namespace millrace::external
