// Leases: which server runs each job of a cluster (docs/cluster.md), kept in the cluster
// catalog (table __millrace.leases), with time measured by the database's now() only: no
// server's clock decides whether a lease has run out.
//
// Contract
// - A lease is (job, owner, epoch, expiry). Take(job, owner, ttl) succeeds when the job has no
//   lease, when its lease has run out (expiry <= now()), or when `owner` holds it: the lease is
//   then `owner`'s until now() + ttl. A server taking a lease it did not hold unexpired moves
//   the job's epoch (__millrace.jobs.epoch) to the next multiple of job::kEpochsPerLease in the
//   same transaction and the lease carries it: the new holder's commits are newer than every commit
//   of the one before, whose tasks (at the older epoch) the exactly-once checks refuse
//   (catalog/bookkeeping.h, the PostgreSQL sink's AdvanceJob). The holder's own statements
//   move the epoch by one each (job_statements.h), never as far as the next step, so the row's
//   writes of a holder that lost the job are refused too (JobStore::SaveJob: a stored epoch
//   never goes back). Taking again a lease one holds unexpired keeps the epoch. nullopt when
//   another server holds it unexpired; NOT_FOUND when the catalog has no such job.
// - Renew(lease, ttl) moves the expiry to now() + ttl only while the lease is still `owner`'s
//   at its epoch and has not run out; false otherwise: the lease is lost, and its holder must
//   stop the job's tasks (their commits would be refused anyway).
// - Release ends a lease now (its epoch stays), so another server may take the job at once.
// - Held lists the unexpired leases of `owner`; All every lease.
// - The servers sharing the catalog (table __millrace.servers): Heartbeat keeps `server` live
//   until now() + ttl; Leave ends it now (and forgets servers gone for a day); LiveServers
//   counts those live. The keepers divide the jobs among them (lease_keeper.h).
// - Thread-safety: all methods may be called concurrently (each runs a transaction of its
//   own); two servers taking one job at once: one gets it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/sql_db.h"
#include "common/result.h"
#include "job/job_model.h"

namespace millrace::pgcatalog {

struct Lease {
  int64_t job_id = 0;
  std::string owner;
  int64_t epoch = 0;
  bool expired = false;  // All(): the lease had run out when read
};

class Leases {
 public:
  explicit Leases(catalog::SqlDatabase* db) : db_(db) {}  // borrowed

  // The tables, when missing (PgCatalog::Open).
  static Status CreateTables(catalog::SqlConnection& conn);

  Result<std::optional<Lease>> Take(int64_t job_id, const std::string& owner,
                                    std::chrono::milliseconds ttl);
  Result<bool> Renew(const Lease& lease, std::chrono::milliseconds ttl);
  Status Release(const Lease& lease);
  Result<std::vector<Lease>> Held(const std::string& owner);
  Result<std::vector<Lease>> All();

  Status Heartbeat(const std::string& server, std::chrono::milliseconds ttl);
  Status Leave(const std::string& server);
  Result<int64_t> LiveServers();

 private:
  catalog::SqlDatabase* const db_;
};

}  // namespace millrace::pgcatalog
