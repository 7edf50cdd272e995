#include "pgsink/pg_sink.h"

#include "pgsink/sink_schema.h"

namespace millrace::pgsink {
namespace {

// "file a.csv", or "the 3 files a.csv .. c.csv" of a batch: what a refused COPY names (PostgreSQL
// says which row; the batch is written as one COPY).
std::string FilesOf(const std::vector<job::LedgerEntry>& ledger) {
  if (ledger.empty()) return "the batch";
  if (ledger.size() == 1) return "file " + ledger.front().key;
  return "the " + std::to_string(ledger.size()) + " files " + ledger.front().key + " .. " +
         ledger.back().key;
}

class PgSinkTransaction final : public job::SinkTransaction {
 public:
  PgSinkTransaction(std::unique_ptr<job::SinkTransaction> bookkeeping, pg::PgConnection* pg,
                    const PgSinkConfig* config, const ExternalTarget* target,
                    const std::atomic<bool>* interrupted, std::atomic<bool>* may_differ)
      : bookkeeping_(std::move(bookkeeping)),
        pg_(pg),
        config_(config),
        target_(target),
        interrupted_(interrupted),
        may_differ_(may_differ) {}

  ~PgSinkTransaction() override { Rollback().IgnoreError(); }

  engine::Connection& connection() override { return bookkeeping_->connection(); }

  Result<bool> WriteProgress(const job::Progress& p) override {
    if (p.part != job::Progress::Part::kAll) {
      // Concurrent tasks are for the embedded catalog's tables (job_properties.cc refuses
      // max_concurrent_tasks for external targets).
      return Status::NotSupported("an external table's sink commits one task at a time");
    }
    MR_RETURN_IF_ERROR(CheckInterrupt());
    MR_RETURN_IF_ERROR(Open());
    if (Status copied = Copy(/*clear=*/false); !copied.ok()) {
      return copied.WithContext("copying " + FilesOf(p.ledger) + " into " + target_->Display());
    }
    const CommitStamp stamp{p.epoch, config_->server};
    MR_RETURN_IF_ERROR(InsertLedger(*pg_, config_->job_key, p.ledger, stamp));
    MR_RETURN_IF_ERROR(InsertTask(*pg_, config_->job_key, p.task, p.task_history, stamp));
    // The checks last: each locks the job's row (the catalog's, then the sink's) until its
    // commit, so a server that stops after them (SIGSTOP, a long pause) holds the rows a
    // successor's lease and fence wait for only over the few statements to the commits, and
    // one that stopped before them wakes to the newer epoch and commits nothing.
    MR_RETURN_IF_ERROR(FailPoint("pgsink.before_checks"));
    MR_RETURN_IF_ERROR(CheckInterrupt());
    MR_ASSIGN_OR_RETURN(const bool advanced, bookkeeping_->WriteProgress(p));
    if (!advanced) return false;
    MR_ASSIGN_OR_RETURN(const bool moved,
                        AdvanceJob(*pg_, config_->job_key, p.start, p.job.current_offset, p.epoch));
    if (!moved) {
      // The sink's schema is elsewhere than the catalog: the next turn reads where.
      may_differ_->store(true);
      return false;
    }
    return true;
  }

  Status RecordFilteredRows(int64_t job_id, int64_t task_id, const std::string& file,
                            int64_t time_us, const std::string& select) override {
    return bookkeeping_->RecordFilteredRows(job_id, task_id, file, time_us, select);
  }
  Result<std::vector<job::FilteredRow>> TaskFilteredRows(int64_t job_id, int64_t task_id,
                                                         int64_t limit) override {
    return bookkeeping_->TaskFilteredRows(job_id, task_id, limit);
  }

  std::optional<table::TableDef> TargetModel() const override {
    return pgsink::TargetModel(*target_);
  }

  Status Flush() override {
    MR_RETURN_IF_ERROR(CheckInterrupt());
    MR_RETURN_IF_ERROR(Open());
    Status copied = Copy(/*clear=*/true);
    if (copied.ok()) return Status::Ok();
    // Only a data exception or a constraint (SQLSTATE classes 22 and 23) is the rows' fault;
    // another refusal (the table changed under the task) is not.
    const std::string state = pg::SqlStateOf(copied);
    if (copied.code() == StatusCode::kInvalidArgument && !state.starts_with("22") &&
        !state.starts_with("23")) {
      copied = Status::FailedPrecondition(copied.message()).WithDetail(copied.detail());
    }
    return copied.WithContext("copying into " + target_->Display());
  }

  Status EmptyTarget(const std::string& table) override {
    // The staged rows so far are older than the truncate; PostgreSQL's table is emptied at the
    // commit, before the rows staged after it.
    MR_RETURN_IF_ERROR(connection().Execute("DELETE FROM " + table));
    emptied_ = true;
    return Status::Ok();
  }

  Status Commit() override {
    if (!pg_open_) return Status::FailedPrecondition("nothing was written to commit");
    MR_RETURN_IF_ERROR(FailPoint("pgsink.before_commit"));
    Status committed = pg_->Execute("COMMIT");
    pg_open_ = false;
    if (!committed.ok()) {
      bookkeeping_->Rollback().IgnoreError();  // PostgreSQL's refusal is the error to report
      return committed.WithContext("committing into " + target_->Display());
    }
    FailPoint("pgsink.between_commits").IgnoreError();  // crash only: nothing to fail here
    Status recorded = bookkeeping_->Commit();
    // PostgreSQL has the task and the catalog does not: the next turn reads the sink's offset.
    if (!recorded.ok()) may_differ_->store(true);
    return recorded;
  }

  Status Rollback() override {
    Status rolled_back;
    if (pg_open_) {
      pg_open_ = false;
      // A broken connection has nothing open any more: its error is not the task's.
      if (pg_->healthy()) rolled_back = pg_->Execute("ROLLBACK");
    }
    Status inner = bookkeeping_->Rollback();
    return rolled_back.ok() ? inner : rolled_back;
  }

 private:
  // PostgreSQL's transaction, begun at the first write.
  Status Open() {
    if (pg_open_) return Status::Ok();
    MR_RETURN_IF_ERROR(pg_->Execute("BEGIN"));
    pg_open_ = true;
    return Status::Ok();
  }
  // The staged rows copied into PostgreSQL (after emptying the table when EmptyTarget asked);
  // `clear`: then taken out of the staging table (a Flush: the commit copies what follows).
  Status Copy(bool clear) {
    MR_RETURN_IF_ERROR(WriteStaged(connection(), *pg_, *target_, emptied_).status());
    emptied_ = false;
    return clear ? connection().Execute("DELETE FROM " + target_->staging) : Status::Ok();
  }

  // The fail point `name`, scoped by the job's name (pg_sink.h).
  Status FailPoint(std::string_view name) const {
    return config_->fail_points == nullptr ? Status::Ok()
                                           : config_->fail_points->Check(name, config_->job_name);
  }

  Status CheckInterrupt() const {
    if (!interrupted_->load()) return Status::Ok();
    return Status::Cancelled("the task was interrupted");
  }

  std::unique_ptr<job::SinkTransaction> bookkeeping_;
  pg::PgConnection* const pg_;
  const PgSinkConfig* const config_;
  const ExternalTarget* const target_;
  const std::atomic<bool>* const interrupted_;
  std::atomic<bool>* const may_differ_;
  bool pg_open_ = false;
  bool emptied_ = false;  // EmptyTarget was called
};

}  // namespace

Result<pg::PgConnection*> PgSink::Connection() {
  {
    MutexLock lock(&mu_);
    if (pg_ != nullptr && pg_->healthy()) return pg_.get();
  }
  const std::string sink =
      "the sink of " + config_.catalog + "." + config_.schema + "." + config_.table;
  auto params = config_.params();
  if (!params.ok()) return params.status().WithContext(sink);
  auto connected = pg::PgConnection::Connect(*params);
  if (!connected.ok()) return connected.status().WithContext(sink);
  MR_RETURN_IF_ERROR(EnsureSinkSchema(**connected));
  MutexLock lock(&mu_);
  pg_ = std::move(connected).value();
  return pg_.get();
}

Result<std::unique_ptr<job::SinkTransaction>> PgSink::Begin(const std::string& database) {
  if (interrupted_.load()) return Status::Cancelled("the task was interrupted");
  MR_ASSIGN_OR_RETURN(pg::PgConnection * pg, Connection());
  MR_ASSIGN_OR_RETURN(target_, DescribeTarget(*pg, config_.catalog, config_.schema, config_.table,
                                              config_.staging_name, config_.delete_sign));
  MR_ASSIGN_OR_RETURN(auto bookkeeping, config_.bookkeeping->Begin(database));
  MR_RETURN_IF_ERROR(bookkeeping->connection().Execute(StagingDdl(target_)));
  return std::unique_ptr<job::SinkTransaction>(std::make_unique<PgSinkTransaction>(
      std::move(bookkeeping), pg, &config_, &target_, &interrupted_, &may_differ_));
}

Result<std::optional<job::KeptProgress>> PgSink::KeptProgressOf(const job::JobRecord& job) {
  if (!may_differ_.load()) return std::optional<job::KeptProgress>();
  MR_ASSIGN_OR_RETURN(pg::PgConnection * pg, Connection());
  MR_ASSIGN_OR_RETURN(const std::optional<SinkJobRow> row, ReadJob(*pg, config_.job_key));
  // Until the caller has taken a differing offset, the next call reads it again.
  if (!row || row->offset == job.current_offset) may_differ_.store(false);
  if (!row) return std::optional<job::KeptProgress>();
  job::KeptProgress kept{row->offset, {}};
  if (!(row->offset == job.current_offset)) {
    MR_ASSIGN_OR_RETURN(kept.ledger, ReadLedger(*pg, config_.job_key));
    for (job::LedgerEntry& entry : kept.ledger)
      entry.job_id = job.id;
  }
  return std::optional<job::KeptProgress>(std::move(kept));
}

Status PgSink::Fence(const job::JobRecord& job) {
  if (job.epoch <= fenced_epoch_.load()) return Status::Ok();
  MR_ASSIGN_OR_RETURN(pg::PgConnection * pg, Connection());
  MR_RETURN_IF_ERROR(StampEpoch(*pg, config_.job_key, job.current_offset, job.epoch));
  fenced_epoch_.store(job.epoch);
  return Status::Ok();
}

void PgSink::Interrupt() {
  interrupted_.store(true);
  config_.bookkeeping->Interrupt();
  MutexLock lock(&mu_);
  if (pg_ != nullptr) pg_->Cancel();
}

void PgSink::ClearInterrupt() {
  interrupted_.store(false);
  config_.bookkeeping->ClearInterrupt();
}

}  // namespace millrace::pgsink
