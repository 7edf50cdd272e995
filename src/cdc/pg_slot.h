// The objects a change-stream job keeps on its PostgreSQL server: the publication it reads and
// the logical replication slot that holds the server's WAL for it.
//
// Contract
// - EnsurePublication creates publication `name` FOR TABLE `tables` when it does not exist. One
//   that exists is the user's: it must publish every kind of change (insert, update, delete,
//   truncate) of every table, each with every row and column (no row filter or column list);
//   otherwise FAILED_PRECONDITION naming what is missing.
// - SlotExists says whether slot `name` exists. DropSlot ends the walsender holding it (a
//   connection just closed may still hold it) and drops it, trying for up to 5 s on `clock`;
//   UNAVAILABLE when it stays in use.
// - SlotRetentionNote is the JobRuntimeMsg of a paused job whose slot is `slot`: "" while it
//   retains at most `limit` bytes of WAL (or before the job made it: `made` false); a warning
//   naming the amount and the server above that; a note that the job cannot resume when the
//   slot is gone or has lost WAL; a note that it cannot look when the server is unreachable.
//   It connects on its own (a RESUME may start the job's task meanwhile).
// - Thread-safety: uses the given connection, or its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cdc/source_table.h"
#include "common/clock.h"
#include "common/result.h"
#include "pg/pg_connection.h"

namespace millrace::cdc {

Status EnsurePublication(pg::PgConnection& conn, const std::string& name,
                         const std::vector<const SourceTable*>& tables);
Result<bool> SlotExists(pg::PgConnection& conn, const std::string& name);
Status DropSlot(pg::PgConnection& conn, const std::string& name, Clock* clock);
std::string SlotRetentionNote(const pg::ConnectParams& params, const std::string& slot, bool made,
                              int64_t limit);

}  // namespace millrace::cdc
