// access::UserStore, one of the catalog's stores (sql_stores.h): tables __millrace.users (the
// password as its mysql_native_password hash in MySQL's text form, "*HEX") and
// __millrace.grants (a row per user, object and privilege).
#pragma once

#include <string>
#include <string_view>

#include "access/user_store.h"
#include "catalog/sql_db.h"
#include "common/result.h"

namespace millrace::catalog {

class SqlUserStore final : public access::UserStore {
 public:
  // `db` is borrowed; `where` names the database in errors.
  SqlUserStore(SqlDatabase* db, std::string where) : db_(db), where_(std::move(where)) {}

  Result<access::UserCatalog> LoadUsers() override;
  Status InsertUser(const access::UserRecord& user) override;
  Status UpdateUser(const access::UserRecord& user) override;
  Status DeleteUser(std::string_view name) override;
  Status AddGrant(const access::Grant& grant) override;
  Status RemoveGrant(const access::Grant& grant) override;

 private:
  SqlDatabase* const db_;
  const std::string where_;
};

}  // namespace millrace::catalog
