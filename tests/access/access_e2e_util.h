// Helpers of the end-to-end access tests: Connector/C logins as any user, and queries whose
// rows or MySQL error come back as values.
#pragma once

#include <mysql.h>

#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "server/mysql_test_util.h"
#include "testing/temp_dir.h"

namespace millrace::access {

using Rows = std::vector<std::vector<std::string>>;
using server::MysqlPtr;

// Logs in to 127.0.0.1:<port> as `user`; on failure sets `*error` ("1045 (28000): ...") and
// returns null.
MysqlPtr Connect(uint16_t port, const std::string& user, const std::string& password,
                 std::string* error);
// The same, with the failure as a Status.
Result<MysqlPtr> ConnectAs(uint16_t port, const std::string& user, const std::string& password);

// The rows of `sql` (NULL as "NULL"), or the error as "errno: message".
Result<Rows> Query(MYSQL* mysql, const std::string& sql);

// `status` (from Query) is a refusal with a MySQL errno, not a dropped connection (2013,
// 2006); a test failure naming `what` otherwise.
void ExpectServerError(const Status& status, const std::string& what);

// One `millrace serve` for a test binary: its data under <dir>/data of a temporary directory
// (made beforehand by the caller when files must be there first), root logged in.
struct E2EServer {
  std::unique_ptr<testing::TempDir> dir;
  std::unique_ptr<server::ServerProcess> server;
  MysqlPtr root;

  // `env`: more "NAME=value" of the server's environment.
  static Result<std::unique_ptr<E2EServer>> Start(const std::string& root_password,
                                                  std::vector<std::string> args = {},
                                                  std::unique_ptr<testing::TempDir> dir = nullptr,
                                                  std::vector<std::string> env = {});
  uint16_t mysql_port() const { return server->mysql_port(); }
};

}  // namespace millrace::access
