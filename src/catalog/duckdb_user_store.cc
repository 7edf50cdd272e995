#include "catalog/duckdb_user_store.h"

#include "access/password.h"
#include "catalog/catalog_sql.h"

namespace millrace::catalog {
namespace {

// Each privilege of a set, alone.
std::vector<access::Privilege> Each(access::PrivilegeSet set) {
  std::vector<access::Privilege> out;
  for (uint8_t bit = 1; bit != 0 && bit <= access::PrivilegeSet::All().bits(); bit <<= 1) {
    if ((set.bits() & bit) != 0) out.push_back(static_cast<access::Privilege>(bit));
  }
  return out;
}

// The rows of one user, object and privilege: names of the object compared case-insensitively.
constexpr const char* kGrantRowMatch =
    "user_name = ? AND lower(database_name) = lower(?) AND lower(table_name) = lower(?) AND "
    "privilege = ?";

void BindGrantRow(Statement& stmt, const access::Grant& grant, access::Privilege privilege) {
  stmt.Str(grant.user).Str(grant.object.database).Str(grant.object.table);
  stmt.Str(std::string(access::PrivilegeName(privilege)));
}

}  // namespace

Result<access::UserCatalog> DuckDbUserStore::LoadUsers() {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(auto txn, conn->Begin());  // users and grants of one snapshot
  access::UserCatalog catalog;
  MR_ASSIGN_OR_RETURN(auto users, conn->Query("SELECT name, host, password_hash, require_ssl, "
                                              "max_user_connections, created_at_us FROM "
                                              "__millrace.users ORDER BY name"));
  MR_RETURN_IF_ERROR(ForEachRow(*users, [&](const engine::DataChunk& c, size_t r) -> Status {
    access::UserRecord user;
    user.name = Text(c, 0, r);
    user.host = Text(c, 1, r);
    auto hash = access::ParseNativeHashText(Text(c, 2, r));
    if (!hash.ok()) {
      return Status::DataLoss("user '" + user.name + "' in the catalog of " + where_ +
                              " has a malformed password hash");
    }
    user.password_hash = std::move(hash).value();
    user.require_ssl = !c.IsNull(3, r) && c.GetBool(3, r);
    user.max_user_connections = Int(c, 4, r);
    user.created_at_us = Int(c, 5, r);
    catalog.users.push_back(std::move(user));
    return Status::Ok();
  }));
  MR_ASSIGN_OR_RETURN(auto grants,
                      conn->Query("SELECT user_name, database_name, table_name, privilege FROM "
                                  "__millrace.grants ORDER BY ALL"));
  MR_RETURN_IF_ERROR(ForEachRow(*grants, [&](const engine::DataChunk& c, size_t r) -> Status {
    access::Grant grant;
    grant.user = Text(c, 0, r);
    grant.object.database = Text(c, 1, r);
    grant.object.table = Text(c, 2, r);
    const std::string name = Text(c, 3, r);
    std::optional<access::PrivilegeSet> privilege = access::ParsePrivilegeName(name);
    if (!privilege) {
      return Status::DataLoss("a grant to '" + grant.user + "' in the catalog of " + where_ +
                              " names the unknown privilege " + name);
    }
    grant.privileges = *privilege;
    catalog.grants.push_back(std::move(grant));
    return Status::Ok();
  }));
  MR_RETURN_IF_ERROR(txn.Commit());
  return catalog;
}

Status DuckDbUserStore::InsertUser(const access::UserRecord& u) {
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(auto exists, Statement::Prepare(conn,
                                                        "SELECT name FROM __millrace.users "
                                                        "WHERE name = ?"));
    MR_ASSIGN_OR_RETURN(auto rows, exists.Str(u.name).Query());
    bool found = false;
    MR_RETURN_IF_ERROR(ForEachRow(*rows, [&](const engine::DataChunk&, size_t) {
      found = true;
      return Status::Ok();
    }));
    if (found) return Status::AlreadyExists("user '" + u.name + "' is in the catalog");
    MR_ASSIGN_OR_RETURN(auto insert,
                        Statement::Prepare(conn,
                                           "INSERT INTO __millrace.users (name, host, "
                                           "password_hash, require_ssl, max_user_connections, "
                                           "created_at_us) VALUES (?, ?, ?, ?, ?, ?)"));
    insert.Str(u.name).Str(u.host).Str(access::NativeHashText(u.password_hash));
    insert.Bool(u.require_ssl).Int(u.max_user_connections).Int(u.created_at_us);
    return insert.Run().status();
  });
}

Status DuckDbUserStore::UpdateUser(const access::UserRecord& u) {
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(auto update, Statement::Prepare(conn,
                                                        "UPDATE __millrace.users SET host = ?, "
                                                        "password_hash = ?, require_ssl = ?, "
                                                        "max_user_connections = ? WHERE name = ?"));
    update.Str(u.host).Str(access::NativeHashText(u.password_hash)).Bool(u.require_ssl);
    update.Int(u.max_user_connections).Str(u.name);
    MR_ASSIGN_OR_RETURN(int64_t changed, update.Run());
    if (changed != 1) return Status::NotFound("user '" + u.name + "' is not in the catalog");
    return Status::Ok();
  });
}

Status DuckDbUserStore::DeleteUser(std::string_view name) {
  const std::string user(name);
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(auto users,
                        Statement::Prepare(conn, "DELETE FROM __millrace.users WHERE name = ?"));
    MR_ASSIGN_OR_RETURN(int64_t changed, users.Str(user).Run());
    if (changed == 0) return Status::NotFound("user '" + user + "' is not in the catalog");
    MR_ASSIGN_OR_RETURN(auto grants, Statement::Prepare(conn,
                                                        "DELETE FROM __millrace.grants "
                                                        "WHERE user_name = ?"));
    return grants.Str(user).Run().status();
  });
}

Status DuckDbUserStore::AddGrant(const access::Grant& grant) {
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(
        auto insert,
        Statement::Prepare(conn, std::string("INSERT INTO __millrace.grants (user_name, "
                                             "database_name, table_name, privilege) "
                                             "SELECT ?, ?, ?, ? WHERE NOT EXISTS "
                                             "(SELECT 1 FROM __millrace.grants WHERE ") +
                                     kGrantRowMatch + ")"));
    for (access::Privilege privilege : Each(grant.privileges)) {
      insert.Reset();
      BindGrantRow(insert, grant, privilege);
      BindGrantRow(insert, grant, privilege);
      MR_RETURN_IF_ERROR(insert.Run().status());
    }
    return Status::Ok();
  });
}

Status DuckDbUserStore::RemoveGrant(const access::Grant& grant) {
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(auto remove,
                        Statement::Prepare(conn, std::string("DELETE FROM __millrace.grants "
                                                             "WHERE ") +
                                                     kGrantRowMatch));
    for (access::Privilege privilege : Each(grant.privileges)) {
      remove.Reset();
      BindGrantRow(remove, grant, privilege);
      MR_RETURN_IF_ERROR(remove.Run().status());
    }
    return Status::Ok();
  });
}

}  // namespace millrace::catalog
