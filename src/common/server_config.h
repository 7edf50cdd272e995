// ServerConfig: everything `millrace serve` needs, read from flags and the environment.
//
// Contract
// - Flags win over environment variables, which win over defaults (SPEC section 6).
// - The root password is never a flag: --password-env names the environment variable that
//   holds it (MILLRACE_ROOT_PASSWORD by default). The password is registered with the logger
//   as a secret as soon as it is read.
// - Validation refuses a non-loopback bind address without a password, and --tls-cert
//   without --tls-key or the reverse.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/flags.h"
#include "common/result.h"

namespace millrace {

struct ServerConfig {
  std::string data_dir = "./var";
  std::string bind_address = "127.0.0.1";
  uint16_t mysql_port = 9030;
  uint16_t http_port = 8030;
  std::string root_password;  // empty: no password
  std::string memory_limit;   // DuckDB memory_limit, e.g. "1GB"; empty: DuckDB's default
  // The catalog's PostgreSQL URI (--cluster); empty: the catalog is in the database file.
  std::string cluster;
  std::string secret_key_file;  // --secret-key-file; empty: SecretKeyPath's default
  // --lease-timeout: with --cluster, how long a job's lease outlives its holder's last renewal
  // (pgcatalog::LeaseKeeper), in milliseconds.
  int64_t lease_timeout_ms = 10'000;
  int threads = 0;  // DuckDB threads; 0: DuckDB's default
  std::string log_level = "info";
  // Directories local() and local-file jobs may read under (--local-root, repeatable); empty
  // flags: <data_dir>/inbox.
  std::vector<std::string> local_roots;
  // Link-local ranges S3 endpoints and change-stream hosts may use (--allow-endpoint,
  // common/endpoint_policy.h); empty: none.
  std::vector<std::string> allowed_endpoints;
  // How many of the newest audit events the catalog keeps (--audit-keep).
  int64_t audit_keep = 100'000;
  // PEM files of the certificate (chain) and private key for TLS on both ports; both empty:
  // no TLS. Only named here: common/tls.h reads and checks them.
  std::string tls_cert_file;
  std::string tls_key_file;
  // --metrics-public: /metrics answers without a login (for a Prometheus without a password).
  bool metrics_public = false;
  // --http-session-idle: a web console session unused this long ends.
  int64_t http_session_idle_seconds = 1800;
  // How often a paused job's source is asked what it holds upstream (job::TaskPolicy).
  int64_t paused_check_seconds = 60;
  // Prices per 1,000 object-store requests for the jobs' estimated request cost
  // (job::ObjectStorePrices; docs/metrics.md): LIST, and GET (HEAD too).
  double s3_list_price_per_1000 = 0.005;
  double s3_get_price_per_1000 = 0.0004;

  // The flag table of `millrace serve`, shared by the parser and --help.
  static const std::vector<FlagSpec>& Flags();
  static Result<ServerConfig> FromFlags(const ParsedFlags& flags, const EnvLookup& env);

  // Path of the DuckDB database file inside data_dir.
  std::string DatabasePath() const;
  // The key file that seals the credentials the catalog keeps: --secret-key-file, else
  // <data_dir>/secret.key.
  std::string SecretKeyPath() const;
  // The default local root, created by `serve` when no --local-root is given.
  std::string InboxPath() const;
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackAddress(const std::string& address);

}  // namespace millrace
