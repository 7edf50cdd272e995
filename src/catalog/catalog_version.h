// The catalog's schema version and the migrations between versions, one scheme for every
// catalog store (embedded DuckDB today, PostgreSQL in cluster mode).
//
// Contract
// - kCatalogVersion is the version this build writes. Version 1 is the catalog of the first
//   release (no version recorded: a store with the job tables and no version is at 1).
// - PlanMigration(stored) returns the steps that bring a store at `stored` to kCatalogVersion,
//   in order; a store newer than this build is FAILED_PRECONDITION naming both versions, so a
//   downgrade never reads (or damages) data it does not understand.
// - A store runs the steps and records the new version in ONE transaction: a crash during a
//   migration leaves the old version intact.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace millrace::catalog {

// 2: offsets are JSON objects ({"fileName": key}); jobs.definition (a copy of masked_sql) is
//    gone; rows are inserted by column name.
// 3: users and grants (__millrace.users, __millrace.grants).
// 4: the audit log (__millrace.audit).
// 5: the Doris definitions of tables (__millrace.table_models, table/model_catalog.h) and load
//    labels (__millrace.load_labels, table/load_labels.h).
// 6: the files being read (__millrace.reading, job::JobStore::MarkReading); why a file was
//    quarantined (__millrace.files.reason, load/bad_file.h).
// 7: each job's statement (jobs.insert_sql, which holds its credentials) is sealed with the
//    data directory's key (common/secret_box.h).
// 8: external catalogs (__millrace.external_catalogs, external/catalog_store.h), their
//    properties sealed.
inline constexpr int kCatalogVersion = 9;

struct MigrationStep {
  int from = 0;  // the step brings version `from` to `from + 1`
  std::string what;
};

Result<std::vector<MigrationStep>> PlanMigration(int stored, const std::string& where);

}  // namespace millrace::catalog
