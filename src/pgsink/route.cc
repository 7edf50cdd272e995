#include "pgsink/route.h"

#include "pgsink/sink_schema.h"

namespace millrace::pgsink {

Result<job::ExternalRoute> RouteTo(const std::string& catalog_name, CatalogParams params,
                                   const job::ExternalTargetRequest& request,
                                   const RouteContext& context) {
  const std::string name = catalog_name + "." + request.schema + "." + request.table;
  // A change stream's deletes travel to PostgreSQL as their keys with the sign 1.
  const bool delete_sign = request.delete_sign || request.change_stream;
  job::ExternalRoute route;
  if (request.check_now) {
    auto now = params();
    if (!now.ok()) return now.status().WithContext("target " + name);
    auto conn = pg::PgConnection::Connect(*now);
    if (!conn.ok()) return conn.status().WithContext("target " + name);
    MR_ASSIGN_OR_RETURN(ExternalTarget target,
                        DescribeTarget(**conn, catalog_name, request.schema, request.table,
                                       kStagingName, request.delete_sign));
    if (request.change_stream && target.table.key.empty()) {
      return Status::InvalidArgument("a change stream applies its changes by key: the target " +
                                     name + " needs a primary key");
    }
    target.delete_sign = delete_sign;
    route.model = TargetModel(target);
    route.staging_ddl = StagingDdl(target);
  }
  route.target = engine::RelationName{request.schema, request.table, catalog_name};
  route.staging_table = StagingTable(kStagingName);
  route.make_sink = [params = std::move(params), catalog_name, schema = request.schema,
                     table = request.table, delete_sign,
                     context](const job::JobRecord& job) -> Result<std::unique_ptr<job::Sink>> {
    MR_ASSIGN_OR_RETURN(std::unique_ptr<job::Sink> records, context.bookkeeping());
    return std::unique_ptr<job::Sink>(
        std::make_unique<PgSink>(PgSinkConfig{.bookkeeping = std::move(records),
                                              .params = params,
                                              .catalog = catalog_name,
                                              .schema = schema,
                                              .table = table,
                                              .delete_sign = delete_sign,
                                              .job_key = JobKey(job),
                                              .job_name = job.name,
                                              .server = context.server,
                                              .fail_points = context.fail_points}));
  };
  return route;
}

}  // namespace millrace::pgsink
