#include "access/access_e2e_util.h"

#include <filesystem>

namespace millrace::access {

MysqlPtr Connect(uint16_t port, const std::string& user, const std::string& password,
                 std::string* error) {
  return server::ConnectorC(port, password, 0, nullptr, error, nullptr, user);
}

Result<Rows> Query(MYSQL* mysql, const std::string& sql) {
  if (mysql_query(mysql, sql.c_str()) != 0) {
    return Status::Internal(std::to_string(mysql_errno(mysql)) + ": " + mysql_error(mysql));
  }
  Rows rows;
  MYSQL_RES* res = mysql_store_result(mysql);
  if (res == nullptr) return rows;
  const unsigned int fields = mysql_num_fields(res);
  while (MYSQL_ROW row = mysql_fetch_row(res)) {
    std::vector<std::string> cells;
    for (unsigned int i = 0; i < fields; ++i)
      cells.push_back(row[i] != nullptr ? row[i] : "NULL");
    rows.push_back(std::move(cells));
  }
  mysql_free_result(res);
  return rows;
}

void ExpectServerError(const Status& status, const std::string& what) {
  ASSERT_FALSE(status.ok()) << what << " was not refused";
  const int code = std::stoi(status.message());
  EXPECT_GE(code, 1000) << what << ": " << status.message();
  EXPECT_LT(code, 2000) << what << ": " << status.message();
}

Result<MysqlPtr> ConnectAs(uint16_t port, const std::string& user, const std::string& password) {
  std::string error;
  MysqlPtr mysql = Connect(port, user, password, &error);
  if (mysql == nullptr) return Status::PermissionDenied(error);
  return mysql;
}

Result<std::unique_ptr<E2EServer>> E2EServer::Start(const std::string& root_password,
                                                    std::vector<std::string> args,
                                                    std::unique_ptr<testing::TempDir> dir,
                                                    std::vector<std::string> env) {
  mysql_library_init(0, nullptr, nullptr);
  auto e2e = std::make_unique<E2EServer>();
  e2e->dir = dir != nullptr ? std::move(dir) : std::make_unique<testing::TempDir>();
  std::filesystem::create_directories(e2e->dir->Join("data"));
  env.push_back("MILLRACE_ROOT_PASSWORD=" + root_password);
  MR_ASSIGN_OR_RETURN(e2e->server, server::ServerProcess::Start(e2e->dir->Join("data"),
                                                                {std::move(args), std::move(env)}));
  MR_ASSIGN_OR_RETURN(e2e->root, ConnectAs(e2e->server->mysql_port(), "root", root_password));
  return e2e;
}

}  // namespace millrace::access
