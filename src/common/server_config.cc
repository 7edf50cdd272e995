#include "common/server_config.h"

#include "common/endpoint_policy.h"
#include "common/logging.h"
#include "common/strings.h"

namespace millrace {

const std::vector<FlagSpec>& ServerConfig::Flags() {
  static const std::vector<FlagSpec> kFlags = {
      {"data-dir", "MILLRACE_DATA_DIR", "./var", "directory holding the database and job state"},
      {"bind", "MILLRACE_BIND", "127.0.0.1", "address the MySQL and HTTP servers listen on"},
      {"mysql-port", "MILLRACE_MYSQL_PORT", "9030", "MySQL protocol port (0: any free port)"},
      {"http-port", "MILLRACE_HTTP_PORT", "8030", "HTTP port (0: any free port)"},
      {"password-env", "", "MILLRACE_ROOT_PASSWORD",
       "name of the environment variable holding the root password"},
      {"memory-limit", "MILLRACE_MEMORY_LIMIT", "", "DuckDB memory_limit, e.g. 1GB"},
      {"threads", "MILLRACE_THREADS", "", "DuckDB worker threads"},
      {"log-level", "MILLRACE_LOG_LEVEL", "info", "debug, info, warning or error"},
      {"audit-keep", "MILLRACE_AUDIT_KEEP", "100000",
       "how many of the newest audit events (logins, users, grants, jobs, DDL) to keep"},
      {"local-root", "MILLRACE_LOCAL_ROOT", "",
       "directory local() and local-file jobs may read under (repeatable; default "
       "<data-dir>/inbox)",
       false, true},
      {"allow-endpoint", "MILLRACE_ALLOW_ENDPOINT", "",
       "link-local address or CIDR range (169.254.0.0/16, fe80::/10) S3 endpoints and "
       "change-stream hosts may use (repeatable, or comma-separated; none by default: cloud "
       "metadata services answer there)",
       false, true},
      {"tls-cert", "MILLRACE_TLS_CERT", "",
       "PEM certificate (chain) file: TLS on the MySQL port, HTTPS only on the HTTP port"},
      {"tls-key", "MILLRACE_TLS_KEY", "", "PEM private key file of --tls-cert"},
      {"metrics-public", "MILLRACE_METRICS_PUBLIC", "",
       "serve /metrics without a login (otherwise HTTP Basic, as for every route but "
       "/api/health)",
       /*is_bool=*/true},
      {"http-session-idle", "MILLRACE_HTTP_SESSION_IDLE", "1800",
       "seconds after which an unused web console session ends"},
      {"paused-check-interval", "MILLRACE_PAUSED_CHECK_INTERVAL", "60",
       "seconds between looks at what a paused job holds upstream (a change stream's WAL)"},
      {"s3-list-price-per-1000", "MILLRACE_S3_LIST_PRICE_PER_1000", "0.005",
       "price of 1,000 LIST requests, for the jobs' estimated object-store cost (AWS S3 "
       "Standard's, USD)"},
      {"s3-get-price-per-1000", "MILLRACE_S3_GET_PRICE_PER_1000", "0.0004",
       "price of 1,000 GET (and HEAD) requests, for the same estimate"},
      {"secret-key-file", "MILLRACE_SECRET_KEY_FILE", "",
       "the key that seals the jobs' and catalogs' credentials in the catalog (default "
       "<data-dir>/secret.key, created at the first start); servers sharing a --cluster "
       "catalog, or one replacing another, need the same key"},
      {"cluster", "MILLRACE_CLUSTER", "",
       "postgresql://user:password@host:port/database: keep the catalog (jobs, users, grants, "
       "audit log, external catalogs) there; jobs then write tables of external catalogs "
       "(docs/cluster.md). The environment variable keeps the password off the command line"},
      {"lease-timeout", "MILLRACE_LEASE_TIMEOUT", "10",
       "seconds (fractions allowed) a job's lease outlives its server's last renewal with "
       "--cluster: a server that dies or stalls loses its jobs to the others after this long"},
  };
  return kFlags;
}

Result<ServerConfig> ServerConfig::FromFlags(const ParsedFlags& flags, const EnvLookup& env) {
  ServerConfig config;
  config.data_dir = flags.GetOr("data-dir", config.data_dir);
  config.bind_address = flags.GetOr("bind", config.bind_address);
  MR_ASSIGN_OR_RETURN(int64_t mysql_port, flags.GetInt("mysql-port", 0, 65535));
  MR_ASSIGN_OR_RETURN(int64_t http_port, flags.GetInt("http-port", 0, 65535));
  config.mysql_port = static_cast<uint16_t>(mysql_port);
  config.http_port = static_cast<uint16_t>(http_port);
  config.memory_limit = flags.GetOr("memory-limit", "");
  config.cluster = flags.GetOr("cluster", "");
  config.secret_key_file = flags.GetOr("secret-key-file", "");
  MR_ASSIGN_OR_RETURN(const double lease_timeout, flags.GetDouble("lease-timeout", 0.3, 3600));
  config.lease_timeout_ms = static_cast<int64_t>(lease_timeout * 1000);
  if (flags.Get("threads")) {
    MR_ASSIGN_OR_RETURN(int64_t threads, flags.GetInt("threads", 1, 1024));
    config.threads = static_cast<int>(threads);
  }
  config.log_level = flags.GetOr("log-level", config.log_level);
  config.local_roots = flags.GetAll("local-root");
  for (const std::string& ranges : flags.GetAll("allow-endpoint")) {
    for (std::string_view range : SplitString(ranges, ',')) {
      if (!Trim(range).empty()) config.allowed_endpoints.emplace_back(Trim(range));
    }
  }
  MR_RETURN_IF_ERROR(EndpointPolicy::Parse(config.allowed_endpoints).status());
  MR_ASSIGN_OR_RETURN(config.audit_keep, flags.GetInt("audit-keep", 1, 1'000'000'000));
  MR_RETURN_IF_ERROR(ParseLogLevel(config.log_level).status());
  config.metrics_public = flags.GetBool("metrics-public");
  MR_ASSIGN_OR_RETURN(config.http_session_idle_seconds,
                      flags.GetInt("http-session-idle", 60, 30 * 24 * 3600));
  MR_ASSIGN_OR_RETURN(config.paused_check_seconds,
                      flags.GetInt("paused-check-interval", 1, 24 * 3600));
  MR_ASSIGN_OR_RETURN(config.s3_list_price_per_1000,
                      flags.GetDouble("s3-list-price-per-1000", 0, 1e6));
  MR_ASSIGN_OR_RETURN(config.s3_get_price_per_1000,
                      flags.GetDouble("s3-get-price-per-1000", 0, 1e6));
  config.tls_cert_file = flags.GetOr("tls-cert", "");
  config.tls_key_file = flags.GetOr("tls-key", "");
  if (config.tls_cert_file.empty() != config.tls_key_file.empty()) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together: give both or neither");
  }

  const std::string password_env = flags.GetOr("password-env", "MILLRACE_ROOT_PASSWORD");
  if (auto password = env(password_env)) config.root_password = *password;
  Logger::Default().AddSecret(config.root_password);

  if (config.root_password.empty() && !IsLoopbackAddress(config.bind_address)) {
    return Status::InvalidArgument("refusing to listen on non-loopback address " +
                                   config.bind_address + " without a root password; set " +
                                   password_env);
  }
  return config;
}

std::string ServerConfig::SecretKeyPath() const {
  return secret_key_file.empty() ? data_dir + "/secret.key" : secret_key_file;
}

std::string ServerConfig::DatabasePath() const {
  return data_dir + "/millrace.duckdb";
}

std::string ServerConfig::InboxPath() const {
  return data_dir + "/inbox";
}

bool IsLoopbackAddress(const std::string& address) {
  return address == "localhost" || address == "::1" || address.rfind("127.", 0) == 0;
}

}  // namespace millrace
