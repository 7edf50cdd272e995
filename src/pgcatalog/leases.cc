#include "pgcatalog/leases.h"

#include "catalog/catalog_sql.h"

namespace millrace::pgcatalog {
namespace {

using catalog::SqlRow;
using catalog::Statement;

// `ttl` as an interval the database adds to now().
constexpr char kTtl[] = "(CAST(? AS BIGINT) * INTERVAL '1 millisecond')";

Result<std::vector<Lease>> ReadLeases(catalog::SqlConnection& conn, const std::string& where,
                                      const std::string& owner) {
  MR_ASSIGN_OR_RETURN(Statement stmt,
                      Statement::Prepare(conn,
                                         "SELECT job_id, owner, epoch, expires_at <= now() FROM "
                                         "__millrace.leases" +
                                             where + " ORDER BY job_id"));
  if (!owner.empty()) stmt.Str(owner);
  std::vector<Lease> leases;
  MR_RETURN_IF_ERROR(stmt.ForEach([&](const SqlRow& row) {
                           leases.push_back({row.Int(0), row.Text(1), row.Int(2), row.Bool(3)});
                           return Status::Ok();
                         })
                         .status());
  return leases;
}

}  // namespace

Status Leases::CreateTables(catalog::SqlConnection& conn) {
  MR_RETURN_IF_ERROR(conn.Execute(
      "CREATE TABLE IF NOT EXISTS __millrace.leases (job_id BIGINT PRIMARY KEY, owner VARCHAR "
      "COLLATE \"C\" NOT NULL, epoch BIGINT NOT NULL, expires_at TIMESTAMPTZ NOT NULL)"));
  return conn.Execute(
      "CREATE TABLE IF NOT EXISTS __millrace.servers (server VARCHAR COLLATE \"C\" PRIMARY KEY, "
      "expires_at TIMESTAMPTZ NOT NULL)");
}

Status Leases::Heartbeat(const std::string& server, std::chrono::milliseconds ttl) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(Statement beat,
                      Statement::Prepare(*conn, std::string("INSERT INTO __millrace.servers "
                                                            "(server, expires_at) VALUES (?, "
                                                            "now() + ") +
                                                    kTtl +
                                                    ") ON CONFLICT (server) DO UPDATE SET "
                                                    "expires_at = EXCLUDED.expires_at"));
  return beat.Str(server).Int(ttl.count()).Run().status();
}

Status Leases::Leave(const std::string& server) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(Statement leave,
                      Statement::Prepare(*conn,
                                         "DELETE FROM __millrace.servers WHERE server = ? "
                                         "OR expires_at < now() - INTERVAL '1 day'"));
  return leave.Str(server).Run().status();
}

Result<int64_t> Leases::LiveServers() {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(Statement live,
                      Statement::Prepare(*conn,
                                         "SELECT count(*) FROM __millrace.servers WHERE "
                                         "expires_at > now()"));
  int64_t count = 0;
  MR_RETURN_IF_ERROR(live.ForEach([&](const SqlRow& row) {
                           count = row.Int(0);
                           return Status::Ok();
                         })
                         .status());
  return count;
}

Result<std::optional<Lease>> Leases::Take(int64_t job_id, const std::string& owner,
                                          std::chrono::milliseconds ttl) {
  std::optional<Lease> taken;
  Status done = catalog::InTransaction(*db_, [&](catalog::SqlConnection& conn) -> Status {
    // The job's row first, locked: two servers taking one job serialize on it.
    MR_ASSIGN_OR_RETURN(Statement job,
                        Statement::Prepare(conn,
                                           "SELECT epoch FROM __millrace.jobs WHERE id = ? FOR "
                                           "UPDATE"));
    std::optional<int64_t> epoch;
    MR_RETURN_IF_ERROR(job.Int(job_id)
                           .ForEach([&](const SqlRow& row) {
                             epoch = row.Int(0);
                             return Status::Ok();
                           })
                           .status());
    if (!epoch) return Status::NotFound("job " + std::to_string(job_id) + " is not in the catalog");
    MR_ASSIGN_OR_RETURN(Statement current,
                        Statement::Prepare(conn,
                                           "SELECT owner, expires_at > now() FROM "
                                           "__millrace.leases WHERE job_id = ?"));
    std::optional<std::string> holder;
    bool unexpired = false;
    MR_RETURN_IF_ERROR(current.Int(job_id)
                           .ForEach([&](const SqlRow& row) {
                             holder = row.Text(0);
                             unexpired = row.Bool(1);
                             return Status::Ok();
                           })
                           .status());
    if (holder && unexpired && *holder != owner) return Status::Ok();  // another's
    const bool renewing = holder && unexpired && *holder == owner;
    if (!renewing) {
      // A new holder fences the one before: its epoch is newer than every earlier commit's.
      *epoch = (*epoch / job::kEpochsPerLease + 1) * job::kEpochsPerLease;
      MR_ASSIGN_OR_RETURN(Statement bump,
                          Statement::Prepare(conn,
                                             "UPDATE __millrace.jobs SET epoch = ? WHERE "
                                             "id = ?"));
      MR_RETURN_IF_ERROR(bump.Int(*epoch).Int(job_id).Run().status());
    }
    MR_ASSIGN_OR_RETURN(
        Statement upsert,
        Statement::Prepare(conn, std::string("INSERT INTO __millrace.leases (job_id, "
                                             "owner, epoch, expires_at) VALUES (?, ?, "
                                             "?, now() + ") +
                                     kTtl +
                                     ") ON CONFLICT (job_id) DO UPDATE SET owner = "
                                     "EXCLUDED.owner, epoch = EXCLUDED.epoch, "
                                     "expires_at = EXCLUDED.expires_at"));
    MR_RETURN_IF_ERROR(upsert.Int(job_id).Str(owner).Int(*epoch).Int(ttl.count()).Run().status());
    taken = Lease{job_id, owner, *epoch, false};
    return Status::Ok();
  });
  MR_RETURN_IF_ERROR(done);
  return taken;
}

Result<bool> Leases::Renew(const Lease& lease, std::chrono::milliseconds ttl) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(Statement renew,
                      Statement::Prepare(*conn, std::string("UPDATE __millrace.leases SET "
                                                            "expires_at = now() + ") +
                                                    kTtl +
                                                    " WHERE job_id = ? AND owner = ? AND epoch "
                                                    "= ? AND expires_at > now()"));
  MR_ASSIGN_OR_RETURN(
      int64_t changed,
      renew.Int(ttl.count()).Int(lease.job_id).Str(lease.owner).Int(lease.epoch).Run());
  return changed == 1;
}

Status Leases::Release(const Lease& lease) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(Statement release,
                      Statement::Prepare(*conn,
                                         "UPDATE __millrace.leases SET expires_at = now() WHERE "
                                         "job_id = ? AND owner = ? AND epoch = ?"));
  return release.Int(lease.job_id).Str(lease.owner).Int(lease.epoch).Run().status();
}

Result<std::vector<Lease>> Leases::Held(const std::string& owner) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  return ReadLeases(*conn, " WHERE owner = ? AND expires_at > now()", owner);
}

Result<std::vector<Lease>> Leases::All() {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  return ReadLeases(*conn, "", "");
}

}  // namespace millrace::pgcatalog
