#include "cdc/pg_slot.h"

#include <cstdlib>

#include "cdc/pg_tables.h"

namespace millrace::cdc {

Status EnsurePublication(pg::PgConnection& meta, const std::string& name,
                         const std::vector<const SourceTable*>& tables) {
  MR_ASSIGN_OR_RETURN(
      pg::Rows published,
      meta.Query("SELECT 1 FROM pg_publication WHERE pubname = " + meta.Literal(name)));
  if (published.rows.empty()) {
    std::string list;
    for (const SourceTable* table : tables)
      list += (list.empty() ? "" : ", ") + QuotedName(meta, *table);
    return meta.Execute("CREATE PUBLICATION " + meta.Identifier(name) + " FOR TABLE " + list);
  }
  // A publication of the user's must carry every change of every column of the tables.
  MR_ASSIGN_OR_RETURN(
      pg::Rows kinds,
      meta.Query("SELECT pubinsert AND pubupdate AND pubdelete AND pubtruncate FROM "
                 "pg_publication WHERE pubname = " +
                 meta.Literal(name)));
  if (kinds.rows.empty() || kinds.rows[0][0].value_or("f") != "t") {
    return Status::FailedPrecondition("publication " + name +
                                      " does not publish every kind of change (it needs "
                                      "publish = 'insert, update, delete, truncate')");
  }
  for (const SourceTable* table : tables) {
    MR_ASSIGN_OR_RETURN(
        pg::Rows listed,
        meta.Query("SELECT rowfilter IS NULL, cardinality(attnames) FROM pg_publication_tables "
                   "WHERE pubname = " +
                   meta.Literal(name) + " AND schemaname = " + meta.Literal(table->schema) +
                   " AND tablename = " + meta.Literal(table->name)));
    if (listed.rows.empty()) {
      return Status::FailedPrecondition("publication " + name + " does not publish " +
                                        table->Display() + "; add it (ALTER PUBLICATION " + name +
                                        " ADD TABLE ...) or name another publication");
    }
    if (listed.rows[0][0].value_or("f") != "t" ||
        listed.rows[0][1].value_or("") != std::to_string(table->columns.size())) {
      return Status::FailedPrecondition(
          "publication " + name + " publishes " + table->Display() +
          " with a row filter or a column list; the job needs every row and column");
    }
  }
  return Status::Ok();
}

Result<bool> SlotExists(pg::PgConnection& conn, const std::string& name) {
  MR_ASSIGN_OR_RETURN(
      pg::Rows rows,
      conn.Query("SELECT 1 FROM pg_replication_slots WHERE slot_name = " + conn.Literal(name)));
  return !rows.rows.empty();
}

Status DropSlot(pg::PgConnection& conn, const std::string& name, Clock* clock) {
  // The walsender of a connection just closed may not have ended yet.
  MR_RETURN_IF_ERROR(conn.Execute(
      "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = " +
      conn.Literal(name) + " AND active_pid IS NOT NULL"));
  for (int attempt = 0; attempt < 50; ++attempt) {
    MR_RETURN_IF_ERROR(
        conn.Execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                     "WHERE slot_name = " +
                     conn.Literal(name) + " AND active_pid IS NULL"));
    MR_ASSIGN_OR_RETURN(
        pg::Rows left,
        conn.Query("SELECT 1 FROM pg_replication_slots WHERE slot_name = " + conn.Literal(name)));
    if (left.rows.empty()) return Status::Ok();
    clock->SleepFor(std::chrono::milliseconds(100));
  }
  return Status::Unavailable("replication slot " + name + " stayed in use for 5 s");
}

std::string SlotRetentionNote(const pg::ConnectParams& params, const std::string& slot, bool made,
                              int64_t limit) {
  if (!made) return "";  // no slot yet
  auto conn = pg::PgConnection::Connect(params);
  if (!conn.ok()) {
    return "cannot see how much WAL replication slot " + slot +
           " retains: " + conn.status().message();
  }
  auto rows = (*conn)->Query(
      "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint, "
      "pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)), wal_status FROM "
      "pg_replication_slots WHERE slot_name = " +
      (*conn)->Literal(slot));
  if (!rows.ok()) {
    return "cannot see how much WAL replication slot " + slot +
           " retains: " + rows.status().message();
  }
  if (rows->rows.empty() || rows->rows[0][2].value_or("") == "lost" || !rows->rows[0][0]) {
    return "replication slot " + slot + " on " + pg::Describe(params) +
           (rows->rows.empty() ? " no longer exists" : " has lost WAL the job needs") +
           ": the job cannot resume where it stopped; recreate it";
  }
  const int64_t retained = std::atoll(rows->rows[0][0]->c_str());
  if (retained <= limit) return "";
  return "replication slot " + slot + " retains " + rows->rows[0][1].value_or("?") + " of WAL on " +
         pg::Describe(params) +
         " while the job is paused (cdc.wal_retention_warning = " + std::to_string(limit) +
         " bytes): RESUME the job, or DROP it to release the slot";
}

}  // namespace millrace::cdc
