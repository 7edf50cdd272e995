// The factory of cdc_stream("type" = "postgres", ...) job sources, for the job layer
// (job::ChangeSourceFactory).
//
// Contract
// - MakePgChangeSource checks everything a running job would trip on, each with a clear error:
//   the parameters (cdc_params.h), the server reachable with the credentials, wal_level and the
//   user's REPLICATION attribute, the table and its primary key (pg_tables.h), the target a
//   UNIQUE KEY table, and the job's SELECT: one that only projects, renames, casts and filters
//   its source and binds against the source's columns and the target.
// - It creates nothing upstream: the slot and publication are made by the job's first poll.
// - Thread-safety: may be called concurrently.
#pragma once

#include <memory>

#include "common/result.h"
#include "job/job_plan.h"

namespace millrace::cdc {

Result<std::shared_ptr<job::JobSource>> MakePgChangeSource(const job::ChangeSourceRequest& request);

}  // namespace millrace::cdc
