// Internal to the server module: the counters the MySQL server exports on /metrics.
#pragma once

#include "common/metrics.h"

namespace millrace::server {

struct ServerMetrics {
  explicit ServerMetrics(MetricsRegistry* registry)
      : connections(
            registry->AddCounter("millrace_mysql_connections_total", "MySQL connections accepted")),
        rejected(registry->AddCounter("millrace_mysql_connections_rejected_total",
                                      "MySQL connections refused (too many connections)")),
        active(registry->AddGauge("millrace_mysql_connections_active",
                                  "MySQL connections currently open")),
        auth_failures(registry->AddCounter(
            "millrace_mysql_auth_failures_total",
            "MySQL logins refused (wrong user or password, or no TLS under --require-tls)")),
        tls_connections(registry->AddCounter("millrace_mysql_tls_connections_total",
                                             "MySQL connections that completed a TLS handshake")),
        tls_failures(registry->AddCounter("millrace_mysql_tls_handshake_failures_total",
                                          "MySQL connections closed by a failed TLS handshake")),
        protocol_errors(
            registry->AddCounter("millrace_mysql_protocol_errors_total",
                                 "MySQL connections closed for a malformed or oversized packet")),
        queries(registry->AddCounter("millrace_mysql_queries_total", "SQL statements executed")),
        query_errors(registry->AddCounter("millrace_mysql_query_errors_total",
                                          "SQL statements that ended in an error")),
        running(registry->AddGauge("millrace_mysql_statements_running",
                                   "SQL statements currently executing")),
        rows_sent(registry->AddCounter("millrace_mysql_rows_sent_total",
                                       "result rows sent to MySQL clients")),
        bytes_received(registry->AddCounter("millrace_mysql_bytes_received_total",
                                            "bytes received from MySQL clients")),
        bytes_sent(registry->AddCounter("millrace_mysql_bytes_sent_total",
                                        "bytes sent to MySQL clients")) {}

  Counter* connections;
  Counter* rejected;
  Gauge* active;
  Counter* auth_failures;
  Counter* tls_connections;
  Counter* tls_failures;
  Counter* protocol_errors;
  Counter* queries;
  Counter* query_errors;
  Gauge* running;
  Counter* rows_sent;
  Counter* bytes_received;
  Counter* bytes_sent;
};

// Keeps the running-statements gauge right on every path out of a statement.
class RunningStatement {
 public:
  explicit RunningStatement(Gauge* gauge) : gauge_(gauge) { gauge_->Add(1); }
  ~RunningStatement() { gauge_->Add(-1); }
  RunningStatement(const RunningStatement&) = delete;
  RunningStatement& operator=(const RunningStatement&) = delete;

 private:
  Gauge* gauge_;
};

}  // namespace millrace::server
