// The `millrace` schema of a PostgreSQL database jobs write into: where each job's offset,
// epoch, ledger and task records live, next to its rows, so one PostgreSQL transaction
// commits them together (pg_sink.h). On restart the offset here is the truth for the job.
//
// Contract
// - EnsureSinkSchema creates the schema and its tables when missing (the user needs CREATE on
//   the database the first time; USAGE and DML on `millrace` afterwards) and records
//   kSinkSchemaVersion; a schema recorded at a newer version is FAILED_PRECONDITION naming
//   both versions (a downgrade never writes what it does not understand). Two servers making
//   it at once: the loser's DDL fails on a duplicate and it reads what the winner made.
// - A job is known here by its key (JobKey): stable for the job's life, distinct between jobs
//   and between servers that share the database.
// - AdvanceJob is the exactly-once check, inside the caller's open transaction: it moves the
//   job from `start` to `end` only when the job's row is at `start` with an epoch no newer
//   than `epoch`, and stamps `epoch`; false, having changed nothing, otherwise. A job without
//   a row has not committed here yet: its row is made at `end` (the job may start at an
//   offset it was given). The row is locked until the transaction ends, so two
//   writers of one job serialize and the second sees the first's offset.
// - InsertLedger replaces a file's row of the same job and key (a reload); InsertTask adds the
//   task's record and keeps the newest `keep` of the job. Both record the commit's stamp: the
//   epoch it committed at and the server that committed it (cluster mode: its lease's owner),
//   from which a test or an operator tells who committed what under which lease.
// - Thread-safety: the functions use the given connection (one thread at a time).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "job/job_model.h"
#include "job/offset.h"
#include "pg/pg_connection.h"

namespace millrace::pgsink {

// 1: millrace.version, millrace.jobs (offset, epoch), millrace.files (the ledger),
//    millrace.tasks.
// 2: files and tasks record their commit's epoch and server (CommitStamp); a version 1 schema
//    is migrated by EnsureSinkSchema.
inline constexpr int kSinkSchemaVersion = 2;

// Who committed a task: its epoch and the committing server's identity.
struct CommitStamp {
  int64_t epoch = 0;
  std::string server;
};

// "<name>#<id>@<create_time_us>": a job's key in a sink's database.
std::string JobKey(const job::JobRecord& job);

Status EnsureSinkSchema(pg::PgConnection& conn);

struct SinkJobRow {
  job::Offset offset;
  int64_t epoch = 0;
};
// The job's row, or nullopt when it has none (it never committed here).
Result<std::optional<SinkJobRow>> ReadJob(pg::PgConnection& conn, const std::string& job_key);

Result<bool> AdvanceJob(pg::PgConnection& conn, const std::string& job_key,
                        const job::Offset& start, const job::Offset& end, int64_t epoch);
// Fences the job's earlier epochs out of the sink: its row's epoch becomes `epoch` unless it is
// newer already (never lowered), its offset kept; a job without a row gets one at `offset` (the
// job's, where it stands). A server that takes a job over stamps the epoch its lease carries
// before its first task (docs/cluster.md), so that AdvanceJob refuses every task of the server
// before it, even one that was about to commit the job's next batch.
Status StampEpoch(pg::PgConnection& conn, const std::string& job_key, const job::Offset& offset,
                  int64_t epoch);
Status InsertLedger(pg::PgConnection& conn, const std::string& job_key,
                    const std::vector<job::LedgerEntry>& entries, const CommitStamp& stamp);
Status InsertTask(pg::PgConnection& conn, const std::string& job_key, const job::TaskRecord& task,
                  int keep, const CommitStamp& stamp);
// The job's ledger as the sink keeps it, by key.
Result<std::vector<job::LedgerEntry>> ReadLedger(pg::PgConnection& conn,
                                                 const std::string& job_key);

}  // namespace millrace::pgsink
