// The factory of cdc_stream("type" = "mysql", ...) and FROM MYSQL ... TO DATABASE job sources.
//
// Contract
// - MakeMysqlChangeSource checks everything a running job would trip on, each with a clear
//   error: the parameters (cdc_params.h), the server reachable with the credentials, its binlog
//   settings and the user's replication privileges (binlog_requirements.h), each table, its
//   engine and primary key (mysql_tables.h), and the targets (source_factory.h).
// - It creates nothing upstream.
// - Thread-safety: may be called concurrently.
#pragma once

#include <memory>

#include "common/result.h"
#include "job/job_plan.h"

namespace millrace::cdc {

Result<std::shared_ptr<job::JobSource>> MakeMysqlChangeSource(
    const job::ChangeSourceRequest& request);

}  // namespace millrace::cdc
