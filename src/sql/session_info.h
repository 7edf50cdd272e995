// Who a client session is and what it does: the plain values the router, the session, the
// MySQL dialect translator and the server share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace millrace::sql {

// Who is connected, for USER(), CONNECTION_ID() and messages.
struct SessionInfo {
  uint32_t connection_id = 0;
  std::string user = "root";
  std::string host = "localhost";
  bool tls = false;  // the connection is encrypted
};

// A client session as SHOW PROCESSLIST shows it.
struct ProcessInfo {
  uint32_t id = 0;  // the MySQL connection id
  std::string user;
  std::string host;
  std::optional<std::string> database;
  bool running = false;   // a statement runs ("Query"), or the session waits ("Sleep")
  int64_t seconds = 0;    // in that state
  std::string statement;  // the running statement as it may be logged; "" when idle
};

// What bounds a statement's run: a session variable and its value in seconds (0: none).
struct StatementBound {
  std::string variable;
  int64_t seconds = 0;
};

}  // namespace millrace::sql
