#include "catalog/catalog_version.h"

namespace millrace::catalog {

Result<std::vector<MigrationStep>> PlanMigration(int stored, const std::string& where) {
  if (stored > kCatalogVersion) {
    return Status::FailedPrecondition(
        "the job catalog in " + where + " is at schema version " + std::to_string(stored) +
        ", newer than this Millrace reads (version " + std::to_string(kCatalogVersion) +
        "); run the Millrace release that wrote it, or a newer one");
  }
  if (stored < 1) {
    return Status::DataLoss("the job catalog in " + where + " records schema version " +
                            std::to_string(stored) + ", which no Millrace wrote");
  }
  static const std::vector<MigrationStep> kSteps = {
      {1, "offsets become JSON objects; jobs.definition is dropped"},
      {2, "the users and grants tables are created"},
      {3, "the audit log table is created"},
      {4, "the table models and load labels tables are created"},
      {5, "the table of files being read is created; the ledger gains the reason of a bad file"},
      {6, "each job's statement, which holds its credentials, is sealed"},
      {7, "the external catalogs table is created"},
      {8, "grants gain the catalog of their object"},
  };
  std::vector<MigrationStep> plan;
  for (const MigrationStep& step : kSteps) {
    if (step.from >= stored) plan.push_back(step);
  }
  return plan;
}

}  // namespace millrace::catalog
