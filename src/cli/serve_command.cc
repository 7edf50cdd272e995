// `millrace serve`: opens the database, starts the MySQL and HTTP servers, and runs until
// SIGTERM or SIGINT.
//
// Ports: once both servers listen, the actual ports (useful with --mysql-port 0 / --http-port
// 0) are logged ("mysql listening on 127.0.0.1:NNNNN") and written to <data-dir>/ports.json as
// {"mysql_port": N, "http_port": N, "pid": N}; the file is removed on shutdown.
//
// TLS: --tls-cert/--tls-key are read and checked before the database opens (exit status 2
// naming the file otherwise); the MySQL port then offers TLS and the HTTP port serves HTTPS.
//
// Shutdown: stop accepting, close idle connections, give running statements --shutdown-grace
// seconds, interrupt what is left, then close the database (checkpoint).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "access/access_control.h"
#include "access/access_guard.h"
#include "access/information_schema.h"
#include "access/login_gate.h"
#include "access/login_throttle.h"
#include "access/user_statements.h"
#include "asio.hpp"
#include "catalog/catalog_views.h"
#include "catalog/duckdb_catalog.h"
#include "catalog/duckdb_sink.h"
#include "cdc/cdc_params.h"
#include "cdc/source_factory.h"
#include "cdc/staged_run.h"
#include "cli/commands.h"
#include "common/clock.h"
#include "common/endpoint_policy.h"
#include "common/fail_point.h"
#include "common/logging.h"
#include "common/metrics.h"
#include "common/random_token.h"
#include "common/secret_box.h"
#include "common/server_config.h"
#include "common/tls.h"
#include "console/console.h"
#include "engine/database.h"
#include "engine/internal_schema.h"
#include "external/catalog_statements.h"
#include "files/file_job_source.h"
#include "http/http_auth.h"
#include "http/http_server.h"
#include "job/job_events.h"
#include "job/job_service.h"
#include "job/job_sql.h"
#include "load/file_table_function.h"
#include "pg/pg_connection.h"
#include "pgcatalog/lease_keeper.h"
#include "pgcatalog/pg_bookkeeping_sink.h"
#include "pgcatalog/pg_catalog.h"
#include "pgsink/route.h"
#include "server/authenticator.h"
#include "server/mysql_server.h"
#include "source/local_source.h"
#include "source/local_watcher.h"
#include "sql/mysql_information_schema.h"
#include "sql/router.h"
#include "table/table_statements.h"

namespace millrace::cli {
namespace {

// Creates `path` if needed and makes it the owner's alone (0700): the data directory holds
// the database, with the jobs' credentials and the users' password hashes.
Status EnsurePrivateDirectory(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return Status::IoError("cannot create directory '" + path + "': " + ec.message());
  std::filesystem::permissions(path, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace, ec);
  if (ec) return Status::IoError("cannot restrict directory '" + path + "': " + ec.message());
  return Status::Ok();
}

std::string PortsFile(const ServerConfig& config) {
  return config.data_dir + "/ports.json";
}

// Written to a temporary name and renamed, so a reader never sees a partial file.
Status WritePortsFile(const ServerConfig& config, uint16_t mysql_port, uint16_t http_port) {
  const std::string path = PortsFile(config);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "{\"mysql_port\": " << mysql_port << ", \"http_port\": " << http_port
        << ", \"pid\": " << getpid() << "}\n";
    if (!out.flush()) return Status::IoError("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::IoError("cannot rename " + tmp + " to " + path + ": " + ec.message());
  return Status::Ok();
}

void RemovePortsFile(const ServerConfig& config) {
  std::error_code ec;
  std::filesystem::remove(PortsFile(config), ec);
  if (ec) {
    MR_LOG(kWarning) << "cannot remove " << PortsFile(config) << ": " << ec.message();
  }
}

// Blocks until SIGINT or SIGTERM and returns its number.
int WaitForShutdownSignal() {
  asio::io_context io;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  int received = 0;
  signals.async_wait([&received](const asio::error_code& ec, int number) {
    if (!ec) received = number;
  });
  io.run();
  return received;
}

// /api/health: the database answers a query.
class DatabaseHealth {
 public:
  explicit DatabaseHealth(std::unique_ptr<engine::Connection> conn) : conn_(std::move(conn)) {}

  http::HealthReport Check() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    http::HealthReport report;
    report.fields.emplace_back("duckdb", JsonQuote(engine::LibraryVersion()));
    auto result = conn_->Query("SELECT 1");
    Status status = result.status();
    if (result.ok()) status = (*result)->Next().status();
    if (!status.ok()) {
      report.healthy = false;
      report.reason = "the database does not answer: " + status.message();
    }
    return report;
  }

 private:
  Mutex mu_;
  std::unique_ptr<engine::Connection> conn_ GUARDED_BY(mu_);
};

// Logins checked against Millrace's users (access_control.h) and recorded in the audit log;
// a session holds one of the user's max_user_connections while it lasts.
// The MySQL port's logins, through the gate both ports share (throttle, users, audit log).
class MySqlAuthenticator final : public server::Authenticator {
 public:
  MySqlAuthenticator(access::AccessControl* access, access::LoginGate* gate)
      : access_(access), gate_(gate) {}

  Status Authenticate(std::string_view user, std::string_view host, std::string_view scramble,
                      std::string_view auth_response, bool secure) override {
    return gate_->CheckScramble(user, host, scramble, auth_response, secure).status;
  }

  Result<std::unique_ptr<Login>> Admit(std::string_view user) override {
    MR_RETURN_IF_ERROR(access_->AcquireConnection(user));
    return std::unique_ptr<Login>(std::make_unique<Connection>(access_, std::string(user)));
  }

 private:
  class Connection final : public Login {
   public:
    Connection(access::AccessControl* access, std::string user)
        : access_(access), user_(std::move(user)) {}
    ~Connection() override { access_->ReleaseConnection(user_); }

   private:
    access::AccessControl* const access_;
    const std::string user_;
  };

  access::AccessControl* const access_;
  access::LoginGate* const gate_;
};

// The HTTP port's logins, through the same gate.
class HttpAuthenticator final : public http::HttpAuthenticator {
 public:
  HttpAuthenticator(access::AccessControl* access, access::LoginGate* gate)
      : access_(access), gate_(gate) {}

  http::HttpLoginResult CheckPassword(std::string_view user, std::string_view password,
                                      std::string_view host, bool secure) override {
    access::LoginOutcome outcome = gate_->CheckPassword(user, host, password, secure);
    return http::HttpLoginResult{std::move(outcome.status), outcome.retry_after};
  }
  std::string LoginStamp(std::string_view user) override { return access_->LoginStamp(user); }

 private:
  access::AccessControl* const access_;
  access::LoginGate* const gate_;
};

// Local files are taken once unchanged for this long (see source/local_source.h).
constexpr std::chrono::milliseconds kLocalSettleTime{1000};

// "host:pid/random": this run of the server, distinct from every other (see its use below).
std::string ServerIdentity() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) std::snprintf(host, sizeof(host), "unknown");
  return std::string(host) + ":" + std::to_string(getpid()) + "/" + RandomToken(4);
}

int Fail(const Status& status) {
  std::fprintf(stderr, "millrace serve: %s\n", status.message().c_str());
  return 1;
}

}  // namespace

int RunServe(const std::vector<std::string>& args) {
  const EnvLookup env = ProcessEnv();
  std::vector<FlagSpec> specs = ServerConfig::Flags();
  const std::vector<FlagSpec>& mysql_specs = server::MySqlServerOptions::Flags();
  specs.insert(specs.end(), mysql_specs.begin(), mysql_specs.end());
  auto flags = ParseFlags(args, specs, env);
  if (!flags.ok()) {
    std::fprintf(stderr, "millrace serve: %s\n", flags.status().message().c_str());
    return 2;
  }
  if (flags->help()) {
    std::printf("usage: millrace serve [options]\n\n%s", FlagsHelp(specs).c_str());
    return 0;
  }
  auto config = ServerConfig::FromFlags(*flags, env);
  if (!config.ok()) {
    std::fprintf(stderr, "millrace serve: %s\n", config.status().message().c_str());
    return 2;
  }
  auto mysql_options = server::MySqlServerOptions::FromFlags(*config, *flags);
  if (!mysql_options.ok()) {
    std::fprintf(stderr, "millrace serve: %s\n", mysql_options.status().message().c_str());
    return 2;
  }
  Logger::Default().SetLevel(ParseLogLevel(config->log_level).value_or(LogLevel::kInfo));
  // Checked by FromFlags: parses.
  EndpointPolicy::SetDefault(EndpointPolicy::Parse(config->allowed_endpoints).value());
  if (!config->tls_cert_file.empty()) {
    // Read and checked once, before anything starts: a bad certificate never leaves a server
    // running without TLS.
    auto tls = TlsCredentials::Load(config->tls_cert_file, config->tls_key_file);
    if (!tls.ok()) {
      std::fprintf(stderr, "millrace serve: %s\n", tls.status().message().c_str());
      return 2;
    }
    mysql_options->tls = *tls;
  }

  auto fail_points = FailPoints::FromEnv(env);
  if (!fail_points.ok()) return Fail(fail_points.status());
  // Everything the server creates (database, WAL, work files, ports.json) is 0600/0700.
  ::umask(077);
  if (Status status = EnsurePrivateDirectory(config->data_dir); !status.ok()) return Fail(status);
  std::vector<std::string> local_roots = config->local_roots;
  if (local_roots.empty()) {
    if (Status status = EnsurePrivateDirectory(config->InboxPath()); !status.ok()) {
      return Fail(status);
    }
    local_roots.push_back(config->InboxPath());
  }
  auto resolved_roots = source::ResolveRoots(local_roots);
  if (!resolved_roots.ok()) return Fail(resolved_roots.status());
  RemovePortsFile(*config);  // a stale file from a killed run must not mislead anyone

  engine::DatabaseOptions options;
  options.path = config->DatabasePath();
  options.memory_limit = config->memory_limit;
  options.threads = config->threads;
  options.preserve_insertion_order = false;  // see files/batch_loader.h on row order
  auto db = engine::Database::Open(options);
  if (!db.ok()) return Fail(db.status());
  MR_LOG(kInfo) << "database open at " << options.path;
  auto health_conn = (*db)->Connect();
  if (!health_conn.ok()) return Fail(health_conn.status());

  int signal_number = 0;
  {
    MetricsRegistry metrics;
    metrics.AddCallbackGauge("process_resident_memory_bytes", "resident memory of the process",
                             ProcessResidentBytes);
    // The key that seals the jobs' credentials in the catalog, created at the first start.
    auto secrets = SecretBox::OpenOrCreate(config->SecretKeyPath());
    if (!secrets.ok()) return Fail(secrets.status());
    std::shared_ptr<const SecretBox> secret_box = std::move(secrets).value();
    // Jobs, users and grants, the audit log and the external catalogs: the catalog in the
    // database file (opened, or created, or migrated, here first), which also keeps the
    // embedded tables' definitions; with --cluster the catalog is in PostgreSQL instead
    // (docs/cluster.md), and jobs write tables of external catalogs only.
    catalog::DuckDbCatalog embedded(db->get(), options.path, secret_box.get());
    if (Status status = embedded.Open(); !status.ok()) return Fail(status);
    std::unique_ptr<pgcatalog::PgCatalog> cluster;
    if (!config->cluster.empty()) {
      auto params = pg::ParseConnectUri(config->cluster);
      if (!params.ok()) return Fail(params.status().WithContext("--cluster"));
      cluster = std::make_unique<pgcatalog::PgCatalog>(*params, secret_box.get());
      if (Status status = cluster->Open(); !status.ok()) {
        return Fail(status.WithContext("--cluster"));
      }
      MR_LOG(kInfo) << "the catalog is in " << cluster->where();
    }
    catalog::SqlStores& stores = cluster ? static_cast<catalog::SqlStores&>(*cluster) : embedded;
    // A job's records, beside its rows: in the task's DuckDB transaction, or in the cluster
    // catalog's database.
    job::SinkFactory bookkeeping = catalog::DuckDbSink::Factory(db->get());
    if (cluster) {
      bookkeeping = [database = db->get(), sql = cluster->sql()] {
        return pgcatalog::PgBookkeepingSink::Open(database, sql);
      };
    }
    access::AccessControl access(stores.users(), config->root_password);
    if (Status status = access.Load(); !status.ok()) return Fail(status);
    access.SetDefaultConnectionLimit(mysql_options->max_connections_per_user);
    access::AuditLog audit(stores.audit(), Clock::Real(), config->audit_keep);
    access::LoginThrottle throttle(Clock::Real());
    access::LoginGate logins(&access, &throttle, &audit);
    MySqlAuthenticator authenticator(&access, &logins);
    HttpAuthenticator http_authenticator(&access, &logins);

    sql::RouterOptions router_options;
    router_options.system_variables = mysql_options->SystemVariables();
    router_options.hidden_databases = {engine::kInternalSchema,
                                       std::string(access::kFilteredSchema),
                                       std::string(access::kStubSchema)};
    sql::Router router(db->get(), router_options);
    if (Status status = router.InstallMysqlInformationSchema(); !status.ok()) return Fail(status);

    // S3()/local() and the streaming jobs. Work directories of a killed run are stale.
    const std::string work_root = config->data_dir + "/work";
    std::error_code ignored;
    std::filesystem::remove_all(work_root, ignored);
    if (Status status = EnsurePrivateDirectory(work_root); !status.ok()) return Fail(status);
    load::FileTableFunctionConfig files;
    files.db = db->get();
    files.work_root = work_root;
    files.make_source =
        load::DefaultSourceFactory(Clock::Real(), kLocalSettleTime, *resolved_roots);
    load::RegisterFileTableFunctions(&router.table_functions(), files);
    // The PostgreSQL databases jobs may write into (CREATE CATALOG), and their tables as jobs'
    // targets (the PostgreSQL sink).
    external::ExternalCatalogs external_catalogs(stores.external_catalogs(), Clock::Real(),
                                                 external::PgConnectProbe());
    if (Status status = external_catalogs.Load(); !status.ok()) return Fail(status);
    // Local jobs are woken by inotify when a file lands (polling stays the safety net); without
    // inotify they poll.
    std::unique_ptr<source::LocalWatcher> watcher;
    if (auto started = source::LocalWatcher::Start(); started.ok()) {
      watcher = std::move(started).value();
    } else {
      MR_LOG(kWarning) << "local jobs find new files by polling only: "
                       << started.status().message();
    }
    // This server among those sharing a catalog or a sink's database: the owner of its leases
    // and the committer in the PostgreSQL sink's records. New at each start, so a restarted
    // server never mistakes its predecessor's leases for its own.
    const std::string server_id = ServerIdentity();
    MR_LOG(kInfo) << "server " << server_id;
    const pgsink::RouteContext routes{
        .bookkeeping = bookkeeping, .fail_points = &*fail_points, .server = server_id};
    job::JobServiceConfig jobs_config;
    jobs_config.make_external_target = [&external_catalogs,
                                        &routes](const job::ExternalTargetRequest& request)
        -> Result<std::optional<job::ExternalRoute>> {
      const std::optional<external::ExternalCatalog> catalog =
          external_catalogs.Find(request.catalog);
      if (!catalog) return std::optional<job::ExternalRoute>();
      MR_ASSIGN_OR_RETURN(job::ExternalRoute route,
                          pgsink::RouteTo(
                              catalog->name,
                              [&external_catalogs, name = catalog->name] {
                                return external_catalogs.ConnectParamsOf(name);
                              },
                              request, routes));
      return std::optional<job::ExternalRoute>(std::move(route));
    };
    jobs_config.db = db->get();
    jobs_config.clock = Clock::Real();
    jobs_config.work_root = work_root;
    jobs_config.fault_record = config->data_dir + "/fault_record";
    jobs_config.store = stores.jobs();
    jobs_config.make_sink = catalog::DuckDbSink::Factory(db->get());
    if (cluster) {
      jobs_config.embedded_targets_refused =
          "with --cluster the servers share the jobs, so a job writes a table of an external "
          "catalog (catalog.schema.table), which every server reaches (docs/cluster.md)";
    }
    // The ledger's views: SQL over the embedded catalog's tables, or the cluster catalog's pages.
    if (cluster) {
      jobs_config.ledger_views_from_store = true;
      jobs_config.leased = true;  // the jobs run where their leases are (LeaseKeeper, below)
    } else {
      jobs_config.views = catalog::CatalogViews();
    }
    jobs_config.make_source =
        load::DefaultSourceFactory(Clock::Real(), kLocalSettleTime, *resolved_roots, watcher.get());
    jobs_config.make_file_source = files::MakeFileJobSource;
    jobs_config.make_change_source = cdc::MakeChangeSource;
    if (Status s = cdc::RegisterStagedRuns(**db); !s.ok()) return Fail(s);
    jobs_config.change_stream_params = cdc::ChangeStreamParamTables();
    jobs_config.tasks.paused_check = std::chrono::seconds(config->paused_check_seconds);
    jobs_config.fail_points = &*fail_points;
    // Set below, once every table function is registered; job statements arrive after.
    std::shared_ptr<access::AccessGuard> guard;
    jobs_config.access.control = &access;
    jobs_config.access.fail_points = &*fail_points;
    jobs_config.access.check_query =
        [&guard, database = db->get()](const sql::SessionInfo& who, const std::string& schema,
                                       std::string_view select, std::string_view source) -> Status {
      if (guard == nullptr) return Status::Unavailable("the server is still starting");
      MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::Connection> conn, database->Connect());
      return guard->CheckJobQuery(*conn, who, schema, select, source);
    };
    jobs_config.access.connection_user = [&router](uint64_t connection_id) {
      return router.SessionUser(connection_id);
    };
    auto jobs = job::JobService::Start(std::move(jobs_config));
    if (!jobs.ok()) return Fail(jobs.status());
    if (Status status = (*jobs)->RegisterViews(&router.table_functions()); !status.ok()) {
      return Fail(status);
    }
    (*jobs)->RegisterMetrics(&metrics, {.list_per_1000 = config->s3_list_price_per_1000,
                                        .get_per_1000 = config->s3_get_price_per_1000});
    job::RegisterJobStatements(&router, jobs->get());
    // Events wake jobs: files landing in local directories, and S3 event notifications pushed
    // to POST /api/s3-events (job_events.h).
    job::EventIntake events(jobs->get(), &metrics);
    // The listener calls `events`: it is taken away before they go (declared after them,
    // destroyed before them).
    struct WakeListener {
      source::LocalWatcher* watcher;
      ~WakeListener() {
        if (watcher != nullptr) watcher->SetListener(nullptr);
      }
    } wake_listener{watcher.get()};
    if (watcher != nullptr) {
      watcher->SetListener(
          [&events](const std::string& path, bool directory) { events.Local(path, directory); });
    }
    // A catalog stays while jobs write into it.
    external_catalogs.SetJobsWriting(
        [registry = (*jobs)->ApiContext().registry](std::string_view catalog) {
          std::vector<std::string> names;
          for (const job::JobRow& row : registry->SnapshotJobs()) {
            if (EqualsIgnoreCase(row.target.catalog, catalog)) names.push_back(row.record.name);
          }
          return names;
        });
    table::RegisterTableStatements(&router);
    if (Status status = (*db)->RegisterTableFunction(access::MakeAuditLogFunction(
            &audit, &access,
            [&router](uint64_t connection_id) { return router.SessionUser(connection_id); }));
        !status.ok()) {
      return Fail(status);
    }
    // information_schema for users without ADMIN_PRIV: what they hold a privilege on.
    if (Status status = (*db)->RegisterTableFunction(access::MakeGrantsFunction(
            &access,
            [&router](uint64_t connection_id) { return router.SessionUser(connection_id); }));
        !status.ok()) {
      return Fail(status);
    }
    if (Status status = access::InstallFilteredInformationSchema(
            **health_conn, {std::string(engine::kInternalSchema)});
        !status.ok()) {
      return Fail(status);
    }
    access::RegisterUserStatements(&router, &access);
    external::RegisterCatalogStatements(&router, &external_catalogs, &access);
    mysql_options->authenticator = &authenticator;
    // DuckDB's own lock, the sandbox's backstop: from here on it reads and writes only the
    // work directory (where S3() and local() files and job batches are fetched to) and its
    // own files. Local roots are never added: local() copies from them into the work
    // directory, under Millrace's checks.
    if (Status status = (*db)->LockDown({work_root}); !status.ok()) return Fail(status);
    // The sandbox and the privileges: every client statement passes them before it runs.
    auto sandbox_conn = (*db)->Connect();
    if (!sandbox_conn.ok()) return Fail(sandbox_conn.status());
    auto sandbox =
        access::Sandbox::Create(**sandbox_conn, (*db)->RegisteredTableFunctions(), {"audit_log"});
    if (!sandbox.ok()) return Fail(sandbox.status());
    guard = std::make_shared<access::AccessGuard>(&access, std::move(sandbox).value(), &audit,
                                                  &*fail_points,
                                                  [&external_catalogs](std::string_view name) {
                                                    return external_catalogs.Find(name).has_value();
                                                  });
    router.SetGuard(guard);
    server::MySqlServer mysql(*mysql_options, &router, &metrics);
    if (Status status = mysql.Start(); !status.ok()) return Fail(status);

    DatabaseHealth health(std::move(health_conn).value());
    http::HttpServerOptions http_options;
    http_options.bind_address = config->bind_address;
    http_options.port = config->http_port;
    http_options.tls = mysql_options->tls;
    http_options.authenticator = &http_authenticator;
    http_options.metrics_public = config->metrics_public;
    http_options.may_see_job = [api = (*jobs)->ApiContext()](const std::string& user,
                                                             const std::string& job) {
      return job::ApiJobVisible(api, user, job).ok();
    };
    http_options.sessions.idle_timeout = std::chrono::seconds(config->http_session_idle_seconds);
    http::HttpServer http_server(
        http_options, &metrics,
        [&health, &mysql] {
          http::HealthReport report = health.Check();
          report.fields.emplace_back("mysql_connections", std::to_string(mysql.active_sessions()));
          return report;
        },
        Clock::Real());
    console::RegisterConsole(&http_server, {jobs->get(), &audit, &access});
    // Open to anyone: the job's event secret (query parameter `secret` or header
    // X-Millrace-Event-Secret) authenticates it.
    http_server.PostOpen("/api/s3-events", [&events](const http::HttpRequest& request) {
      std::string secret = request.Param("secret");
      if (secret.empty()) secret = request.Header("x-millrace-event-secret");
      job::EventAnswer answer = events.S3(request.body, secret);
      return http::HttpResponse{answer.status, "application/json", std::move(answer.body)};
    });
    if (Status status = http_server.Start(); !status.ok()) {
      mysql.Shutdown(std::chrono::milliseconds(0));
      return Fail(status);
    }
    const bool tls = mysql_options->tls != nullptr;
    MR_LOG(kInfo) << "mysql listening on " << config->bind_address << ":" << mysql.port()
                  << (tls ? (mysql_options->require_tls ? " (TLS required)" : " (TLS offered)")
                          : "");
    MR_LOG(kInfo) << "http listening on " << config->bind_address << ":" << http_server.port()
                  << (tls ? " (HTTPS only)" : "");
    if (Status status = WritePortsFile(*config, mysql.port(), http_server.port()); !status.ok()) {
      http_server.Stop();
      mysql.Shutdown(std::chrono::milliseconds(0));
      return Fail(status);
    }

    // With --cluster, which jobs run here: those whose lease this server takes. Declared last,
    // so it stops (and releases its leases) before the servers and the jobs do.
    std::unique_ptr<pgcatalog::LeaseKeeper> keeper;
    if (cluster) {
      auto started = pgcatalog::LeaseKeeper::Start(
          {.leases = cluster->leases(),
           .jobs = jobs->get(),
           .clock = Clock::Real(),
           .owner = server_id,
           .lease_timeout = std::chrono::milliseconds(config->lease_timeout_ms),
           .follow_catalog = [&access, &external_catalogs]() -> Status {
             MR_RETURN_IF_ERROR(access.Load());
             return external_catalogs.Load();
           }});
      if (!started.ok()) {
        http_server.Stop();
        mysql.Shutdown(std::chrono::milliseconds(0));
        return Fail(started.status());
      }
      keeper = std::move(started).value();
    }

    signal_number = WaitForShutdownSignal();
    MR_LOG(kInfo) << "received " << strsignal(signal_number) << ", shutting down";
    RemovePortsFile(*config);
    http_server.Stop();
    mysql.Shutdown(mysql_options->shutdown_grace);
  }
  db->reset();  // closes the database cleanly (checkpoint) before exit
  MR_LOG(kInfo) << "stopped";
  return 0;
}

}  // namespace millrace::cli
