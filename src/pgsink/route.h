// The route of a job into a table of an external catalog (job::ExternalRoute), as the server
// wires it: the job's INSERT writes the staging table, and its sink (PgSink) copies into the
// PostgreSQL table.
//
// Contract
// - RouteTo's sinks read where the catalog connects at each connection (`params`). With
//   check_now it connects and describes the table: missing (NOT_FOUND), unreachable (UNAVAILABLE),
//   the credentials refused (UNAUTHENTICATED) or a column that cannot be written fail the
//   statement, naming the table; the route then holds the table's model and staging DDL. A
//   change stream's target (asked with check_now, job_plan.h) must have a primary key
//   (INVALID_ARGUMENT otherwise), and its staging table keeps the delete sign.
// - The route's sinks keep the job's records in the catalog through the sinks `bookkeeping`
//   makes (catalog::DuckDbSink on the embedded database; in cluster mode
//   pgcatalog::PgBookkeepingSink), and their PostgreSQL key is JobKey of the job's record.
#pragma once

#include "common/fail_point.h"
#include "job/job_plan.h"
#include "job/sink.h"
#include "pgsink/pg_sink.h"

namespace millrace::pgsink {

// What the routes of a server share.
struct RouteContext {
  job::SinkFactory bookkeeping;             // the sinks of the jobs' records (above)
  const FailPoints* fail_points = nullptr;  // may be null; borrowed, outlives the route's sinks
  std::string server;                       // this server's identity (PgSinkConfig::server)
};

Result<job::ExternalRoute> RouteTo(const std::string& catalog_name, CatalogParams params,
                                   const job::ExternalTargetRequest& request,
                                   const RouteContext& context);

}  // namespace millrace::pgsink
