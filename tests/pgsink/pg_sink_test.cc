// The PostgreSQL sink against a real PostgreSQL 15, below the job layer: rows staged in DuckDB
// arrive in PostgreSQL as the same values, with the job's offset, ledger and task record in the
// `millrace` schema of the same transaction; a task the sink's offset does not expect, a value
// PostgreSQL refuses and an interrupt commit nothing on either side.
#include "pgsink/pg_sink.h"

#include <gtest/gtest.h>

#include "catalog/duckdb_catalog.h"
#include "catalog/duckdb_sink.h"
#include "common/secret_box.h"
#include "engine/database.h"
#include "engine/engine_test_util.h"
#include "pgsink/sink_schema.h"
#include "testing/postgres_suite.h"

namespace millrace::pgsink {
namespace {

using job::JobRecord;
using job::Offset;

class PgSinkTest : public testing::PostgresSuite {
 protected:
  void SetUp() override {
    table_ = "t" + std::to_string(++counter_);
    Psql("CREATE TABLE public." + table_ +
         " (id bigint NOT NULL, small smallint, amount numeric(12,2), ratio double precision, "
         "flag boolean, note text, day date, at timestamp, at_tz timestamptz, took interval, "
         "uid uuid, doc jsonb, raw bytea, CHECK (id >= 0))");
    Psql("DROP SCHEMA IF EXISTS millrace CASCADE");
    db_ = engine::OpenOrDie({});
    stores_ = std::make_unique<catalog::DuckDbCatalog>(db_.get(), "memory", secrets_.get());
    ASSERT_TRUE(stores_->Open().ok());
    job_.id = 7;
    job_.name = "to_pg";
    job_.create_time_us = 1'000'000;
    job_.state = job::JobState::kRunning;
    job_.epoch = 3;
    ASSERT_TRUE(stores_->jobs()->InsertJob(job_).ok());
    sink_ = MakeSink();
  }

  std::unique_ptr<PgSink> MakeSink(bool delete_sign = false) {
    auto bookkeeping = catalog::DuckDbSink::Open(db_.get());
    EXPECT_TRUE(bookkeeping.ok());
    return std::make_unique<PgSink>(
        PgSinkConfig{.bookkeeping = std::move(bookkeeping).value(),
                     .params = [] { return Result<pg::ConnectParams>(Params()); },
                     .catalog = "pg",
                     .schema = "public",
                     .table = table_,
                     .delete_sign = delete_sign,
                     .job_key = JobKey(job_),
                     .job_name = job_.name,
                     .server = "host-a:12/ab"});
  }

  static pg::ConnectParams Params() {
    return {.host = pg_->host(),
            .port = pg_->port(),
            .database = "postgres",
            .user = pg_->user(),
            .password = pg_->password()};
  }

  // A task's progress from `start` to `end` (one file, `key`).
  job::Progress Progress(const Offset& start, const Offset& end, const std::string& key,
                         int64_t task_id) {
    job::Progress p;
    p.job = job_;
    p.job.current_offset = end;
    p.start = start;
    p.epoch = job_.epoch;
    p.ledger.push_back(job::LedgerEntry{.job_id = job_.id,
                                        .key = key,
                                        .etag = "e-" + key,
                                        .size = 10,
                                        .task_id = task_id,
                                        .rows = 1});
    p.task.task_id = task_id;
    p.task.job_id = job_.id;
    p.task.state = job::TaskState::kSuccess;
    return p;
  }

  // Stages `values` (a DuckDB VALUES list of the table's columns) and commits from `start` to
  // `end`; WriteProgress's answer, or the first error.
  // `sign`, when given (", 0"), ends each row of `values`.
  Result<bool> Load(const std::string& values, const Offset& start, const Offset& end,
                    const std::string& key, int64_t task_id, const std::string& sign = "") {
    MR_ASSIGN_OR_RETURN(auto txn, sink_->Begin(""));
    std::string rows = values;
    for (size_t at = sign.empty() ? std::string::npos : rows.find(')'); at != std::string::npos;
         at = rows.find(')', at + sign.size() + 1)) {
      rows.insert(at, sign);
    }
    MR_RETURN_IF_ERROR(
        txn->connection().Execute("INSERT INTO " + sink_->staging_table() + " VALUES " + rows));
    MR_ASSIGN_OR_RETURN(const bool advanced,
                        txn->WriteProgress(Progress(start, end, key, task_id)));
    if (!advanced) return false;
    MR_RETURN_IF_ERROR(txn->Commit());
    job_.current_offset = end;
    return true;
  }

  static Offset File(const std::string& key) { return Offset::FileName(key); }

  static int counter_;
  std::string table_;
  std::unique_ptr<SecretBox> secrets_ = SecretBox::WithKey(std::string(32, 'k'));
  std::unique_ptr<engine::Database> db_;
  std::unique_ptr<catalog::DuckDbCatalog> stores_;
  JobRecord job_;
  std::unique_ptr<PgSink> sink_;
};

int PgSinkTest::counter_ = 0;

constexpr char kRow[] =
    "(1, -7, 1234.5, 'inf', true, E'tab\\there\\nnew line\\\\ back é', DATE '2024-02-29', "
    "TIMESTAMP '2024-01-02 03:04:05.123456', TIMESTAMPTZ '2024-01-02 03:04:05+00', "
    "INTERVAL '1 day 02:03:04', '6f1c8e4a-8c0e-4f8f-9a51-0d7b5c1e2f3a', '{\"a\": [1, 2]}', "
    "'\\x00\\xFFab'::BLOB), (2, NULL, NULL, 'nan', NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL)";

TEST_F(PgSinkTest, ValuesArriveAsTheSameValuesWithTheJobsRecords) {
  auto loaded = Load(kRow, Offset(), File("a.csv"), "a.csv", 1);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_TRUE(*loaded);
  EXPECT_EQ(Psql("SELECT id, small, amount, ratio, flag, note, day, at, at_tz, took, uid, doc, "
                 "encode(raw, 'hex') FROM public." +
                 table_ + " ORDER BY id"),
            "1|-7|1234.50|Infinity|t|tab\there\nnew line\\ back é|2024-02-29|2024-01-02 "
            "03:04:05.123456|2024-01-02 03:04:05+00|1 day 02:03:04|"
            "6f1c8e4a-8c0e-4f8f-9a51-0d7b5c1e2f3a|{\"a\": [1, 2]}|00ff6162\n"
            "2|||NaN|||||||||");
  // The job's offset, ledger and task record, in the same database.
  EXPECT_EQ(Psql("SELECT job_key, job_offset, epoch FROM millrace.jobs"),
            "to_pg#7@1000000|" + File("a.csv").ToJson() + "|3");
  // Each stamped with the commit's epoch and server.
  EXPECT_EQ(Psql("SELECT file_key, etag, state, task_id, rows, epoch, server FROM millrace.files"),
            "a.csv|e-a.csv|LOADED|1|1|3|host-a:12/ab");
  EXPECT_EQ(Psql("SELECT task_id, state, epoch, server FROM millrace.tasks"),
            "1|SUCCESS|3|host-a:12/ab");
  EXPECT_EQ(Psql("SELECT version FROM millrace.version"), "2");
  // And in the embedded catalog.
  EXPECT_EQ(stores_->jobs()->LoadJobs().value().at(0).current_offset, File("a.csv"));
  // The sink's progress is read while it may differ from the catalog's: once, then not again
  // while each commit lands on both sides.
  auto first = sink_->KeptProgressOf(job_);
  ASSERT_TRUE(first.ok() && first->has_value()) << first.status().ToString();
  EXPECT_EQ((*first)->offset, File("a.csv"));
  EXPECT_TRUE((*first)->ledger.empty());
  auto again = sink_->KeptProgressOf(job_);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value());
  // The next task stages only its own rows.
  ASSERT_TRUE(Load("(3, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
                   File("a.csv"), File("b.csv"), "b.csv", 2)
                  .value());
  EXPECT_EQ(Psql("SELECT count(*), sum(id) FROM public." + table_), "3|6");
  EXPECT_EQ(Psql("SELECT count(*) FROM millrace.files"), "2");
}

TEST_F(PgSinkTest, ATaskTheSinksOffsetDoesNotExpectCommitsNothing) {
  ASSERT_TRUE(Load(kRow, Offset(), File("a.csv"), "a.csv", 1).value());
  // The sink's schema is ahead of the embedded catalog (a crash between the two commits).
  Psql("UPDATE millrace.jobs SET job_offset = '" + File("b.csv").ToJson() + "'");
  auto refused = Load(kRow, File("a.csv"), File("b.csv"), "b.csv", 2);
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_FALSE(*refused);
  EXPECT_EQ(Psql("SELECT count(*) FROM public." + table_), "2");
  EXPECT_EQ(stores_->jobs()->LoadJobs().value().at(0).current_offset, File("a.csv"));
  // The refusal makes the sink read where its schema stands, with its ledger.
  auto kept = sink_->KeptProgressOf(job_);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  ASSERT_TRUE(kept->has_value());
  EXPECT_EQ((*kept)->offset, File("b.csv"));
  ASSERT_EQ((*kept)->ledger.size(), 1u);
  EXPECT_EQ((*kept)->ledger[0].key, "a.csv");
  EXPECT_EQ((*kept)->ledger[0].job_id, job_.id);
  // A task of an older epoch than the sink's last commit is refused too.
  Psql("UPDATE millrace.jobs SET job_offset = '" + File("a.csv").ToJson() + "', epoch = 4");
  EXPECT_FALSE(Load(kRow, File("a.csv"), File("b.csv"), "b.csv", 2).value());
  EXPECT_EQ(Psql("SELECT count(*) FROM public." + table_), "2");
}

// A server taking the job over stamps its newer epoch: a task of the server before, at the
// offset the sink holds, commits nothing; a stamp never lowers the epoch, and makes the row of
// a job that has none at the job's offset.
TEST_F(PgSinkTest, AStampedEpochFencesTheTasksOfEarlierEpochs) {
  ASSERT_TRUE(Load(kRow, Offset(), File("a.csv"), "a.csv", 1).value());
  auto conn = pg::PgConnection::Connect(Params());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  ASSERT_TRUE(StampEpoch(**conn, JobKey(job_), File("zzz.csv"), job_.epoch + 1).ok());
  EXPECT_EQ(Psql("SELECT job_offset FROM millrace.jobs"), File("a.csv").ToJson());  // kept
  EXPECT_FALSE(Load(kRow, File("a.csv"), File("b.csv"), "b.csv", 2).value());
  EXPECT_EQ(Psql("SELECT count(*) FROM public." + table_), "2");
  ASSERT_TRUE(StampEpoch(**conn, JobKey(job_), File("a.csv"), job_.epoch).ok());
  EXPECT_EQ(Psql("SELECT epoch FROM millrace.jobs"), std::to_string(job_.epoch + 1));

  ASSERT_TRUE(StampEpoch(**conn, "other#9@1", File("x.csv"), 3).ok());
  EXPECT_EQ(Psql("SELECT job_offset || ' ' || epoch FROM millrace.jobs WHERE job_key = "
                 "'other#9@1'"),
            File("x.csv").ToJson() + " 3");
}

TEST_F(PgSinkTest, AValuePostgresqlRefusesCommitsNothing) {
  ASSERT_TRUE(Load(kRow, Offset(), File("a.csv"), "a.csv", 1).value());
  // The CHECK (id >= 0) fails inside the COPY.
  auto refused = Load("(-1, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
                      File("a.csv"), File("b.csv"), "b.csv", 2);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(pg::SqlStateOf(refused.status()), "23514") << refused.status().ToString();
  // Named by file and table; PostgreSQL's message names the row.
  EXPECT_NE(refused.status().message().find("copying file b.csv into pg.public." + table_),
            std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("Failing row contains (-1"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(Psql("SELECT count(*) FROM public." + table_), "2");
  EXPECT_EQ(Psql("SELECT job_offset FROM millrace.jobs"), File("a.csv").ToJson());
  EXPECT_EQ(stores_->jobs()->LoadJobs().value().at(0).current_offset, File("a.csv"));
  // The sink goes on with the next task.
  ASSERT_TRUE(Load(kRow, File("a.csv"), File("b.csv"), "b.csv", 2).value());
  EXPECT_EQ(Psql("SELECT count(*) FROM public." + table_), "4");
}

TEST_F(PgSinkTest, InterruptedAndReconnected) {
  sink_->Interrupt();
  EXPECT_EQ(sink_->Begin("").status().code(), StatusCode::kCancelled);
  sink_->ClearInterrupt();
  ASSERT_TRUE(Load(kRow, Offset(), File("a.csv"), "a.csv", 1).value());
  // PostgreSQL restarts between two tasks: the next one connects again.
  ASSERT_TRUE(pg_->Restart().ok());
  auto after = Load(kRow, File("a.csv"), File("b.csv"), "b.csv", 2);
  if (!after.ok()) {
    // The task that finds the connection broken fails as unreachable, and the next connects.
    EXPECT_EQ(after.status().code(), StatusCode::kUnavailable) << after.status().ToString();
    after = Load(kRow, File("a.csv"), File("b.csv"), "b.csv", 2);
  }
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_TRUE(*after);
  EXPECT_EQ(Psql("SELECT count(*) FROM public." + table_), "4");
}

// A schema of version 1 (no commit stamps) is migrated: its rows say epoch 0 and no server, the
// next commit's are stamped.
TEST_F(PgSinkTest, AVersion1SinkSchemaIsMigrated) {
  ASSERT_TRUE(Load(kRow, Offset(), File("a.csv"), "a.csv", 1).value());
  Psql(
      "ALTER TABLE millrace.files DROP COLUMN epoch, DROP COLUMN server; ALTER TABLE "
      "millrace.tasks DROP COLUMN epoch, DROP COLUMN server; UPDATE millrace.version SET "
      "version = 1");
  sink_ = MakeSink();
  ASSERT_TRUE(Load(kRow, File("a.csv"), File("b.csv"), "b.csv", 2).value());
  EXPECT_EQ(Psql("SELECT version FROM millrace.version"), "2");
  EXPECT_EQ(Psql("SELECT file_key, epoch, server FROM millrace.files ORDER BY file_key"),
            "a.csv|0|\nb.csv|3|host-a:12/ab");
}

TEST_F(PgSinkTest, ANewerSinkSchemaIsRefused) {
  ASSERT_TRUE(Load(kRow, Offset(), File("a.csv"), "a.csv", 1).value());
  Psql("UPDATE millrace.version SET version = 99");
  sink_ = MakeSink();
  auto begun = sink_->Begin("");
  EXPECT_EQ(begun.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(begun.status().message().find("version 99"), std::string::npos);
}

TEST_F(PgSinkTest, ATableWithAPrimaryKeyIsUpsertedByKey) {
  Psql("ALTER TABLE public." + table_ + " ADD PRIMARY KEY (id)");
  sink_ = MakeSink();
  ASSERT_TRUE(Load(kRow, Offset(), File("a.csv"), "a.csv", 1).value());
  {
    // The loader writes by the model the sink says, into a staging table with the same key.
    auto txn = sink_->Begin("");
    ASSERT_TRUE(txn.ok());
    const std::optional<table::TableDef> model = (*txn)->TargetModel();
    ASSERT_TRUE(model.has_value());
    EXPECT_EQ(model->model, table::TableModel::kUnique);
    EXPECT_EQ(model->keys, std::vector<std::string>{"id"});
    EXPECT_FALSE((*txn)
                     ->connection()
                     .Execute("INSERT INTO " + sink_->staging_table() + " (id) VALUES (5), (5)")
                     .ok());
  }
  ASSERT_TRUE(Load("(2, 9, NULL, 0, NULL, 'two again', NULL, NULL, NULL, NULL, NULL, NULL, "
                   "NULL), (4, NULL, NULL, 0, NULL, 'four', NULL, NULL, NULL, NULL, NULL, NULL, "
                   "NULL)",
                   File("a.csv"), File("b.csv"), "b.csv", 2)
                  .value());
  EXPECT_EQ(Psql("SELECT id, small, note FROM public." + table_ + " ORDER BY id"),
            "1|-7|tab\there\nnew line\\ back é\n2|9|two again\n4||four");
}

TEST_F(PgSinkTest, TheDeleteSignDeletesByKey) {
  Psql("ALTER TABLE public." + table_ + " ADD PRIMARY KEY (id)");
  sink_ = MakeSink(/*delete_sign=*/true);
  ASSERT_TRUE(Load(kRow, Offset(), File("a.csv"), "a.csv", 1, ", 0").value());
  EXPECT_EQ(Psql("SELECT count(*) FROM public." + table_), "2");
  // Key 1's newest row has the sign 1, key 7's the sign 0.
  ASSERT_TRUE(Load("(1, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1), "
                   "(7, NULL, NULL, 0, NULL, 'seven', NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
                   "0)",
                   File("a.csv"), File("b.csv"), "b.csv", 2, "")
                  .value());
  EXPECT_EQ(Psql("SELECT string_agg(id::text, ',' ORDER BY id) FROM public." + table_), "2,7");
}

TEST_F(PgSinkTest, TargetsThatCannotBeWritten) {
  auto conn = pg::PgConnection::Connect(Params());
  ASSERT_TRUE(conn.ok());
  EXPECT_EQ(DescribeTarget(**conn, "pg", "public", "missing", "s").status().code(),
            StatusCode::kNotFound);
  Psql("CREATE TABLE public.with_array (id int, tags text[])");
  auto arrays = DescribeTarget(**conn, "pg", "public", "with_array", "s");
  EXPECT_EQ(arrays.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(arrays.status().message().find("column tags"), std::string::npos);
}

}  // namespace
}  // namespace millrace::pgsink
