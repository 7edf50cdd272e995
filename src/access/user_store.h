// UserStore: where Millrace keeps its users and grants. The embedded implementation is the job
// catalog (catalog::SqlUserStore, tables __millrace.users and __millrace.grants); cluster
// mode can keep them in PostgreSQL behind the same interface.
//
// Contract
// - Each method is one transaction of its own: it commits whole or not at all.
// - The store keeps what it is given and checks nothing beyond it (AccessControl decides what
//   may change): user names are unique; a user's grants go with it when it is deleted.
// - password_hash is mysql_native_password's 20-byte hash, or empty for no password
//   (password.h); a store may keep it in its text form ("*HEX"), never anything from which
//   the password could be read.
// - Grants are kept a privilege at a time: AddGrant adds the privileges a user does not hold
//   yet on the object, RemoveGrant removes those it holds. Database and table names are
//   matched case-insensitively, and kept as first given.
// - Thread-safety: all methods may be called concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "access/privilege.h"
#include "common/result.h"

namespace millrace::access {

struct UserRecord {
  std::string name;
  std::string host = "%";
  std::string password_hash;  // 20 bytes, or empty: no password
  bool require_ssl = false;
  int64_t max_user_connections = 0;  // 0: no limit
  int64_t created_at_us = 0;         // microseconds since the Unix epoch
};

struct UserCatalog {
  std::vector<UserRecord> users;
  std::vector<Grant> grants;  // one per user and object
};

class UserStore {
 public:
  virtual ~UserStore() = default;

  // Every user and grant.
  virtual Result<UserCatalog> LoadUsers() = 0;
  // ALREADY_EXISTS when a user of that name is stored.
  virtual Status InsertUser(const UserRecord& user) = 0;
  // Writes every field but the name and created_at_us. NOT_FOUND when the user is not stored.
  virtual Status UpdateUser(const UserRecord& user) = 0;
  // The user and its grants. NOT_FOUND when the user is not stored.
  virtual Status DeleteUser(std::string_view name) = 0;
  virtual Status AddGrant(const Grant& grant) = 0;
  virtual Status RemoveGrant(const Grant& grant) = 0;
};

}  // namespace millrace::access
