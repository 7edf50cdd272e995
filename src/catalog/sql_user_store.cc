#include "catalog/sql_user_store.h"

#include "access/password.h"
#include "catalog/catalog_sql.h"
#include "catalog/catalog_tables.h"

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
    "privilege = ? AND lower(catalog_name) = lower(?)";

void BindGrantRow(Statement& stmt, const access::Grant& grant, access::Privilege privilege) {
  stmt.Str(grant.user).Str(grant.object.database).Str(grant.object.table);
  stmt.Str(std::string(access::PrivilegeName(privilege))).Str(grant.object.catalog);
}

}  // namespace

Result<access::UserCatalog> SqlUserStore::LoadUsers() {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  // Users and grants of one snapshot.
  MR_ASSIGN_OR_RETURN(auto txn, SqlTransaction::Begin(*conn));
  access::UserCatalog catalog;
  auto read_users = UsersTable().ReadAll(*conn, UsersTable().Select() + " ORDER BY name");
  if (!read_users.ok()) return read_users.status().WithContext("the catalog of " + where_);
  catalog.users = std::move(read_users).value();
  MR_ASSIGN_OR_RETURN(
      std::vector<GrantRow> rows,
      GrantsTable().ReadAll(*conn, GrantsTable().Select() + " ORDER BY " + GrantsTable().Names()));
  for (GrantRow& row : rows) {
    std::optional<access::PrivilegeSet> privilege = access::ParsePrivilegeName(row.privilege);
    if (!privilege) {
      return Status::DataLoss("a grant to '" + row.user_name + "' in the catalog of " + where_ +
                              " names the unknown privilege " + row.privilege);
    }
    catalog.grants.push_back(access::Grant{
        std::move(row.user_name),
        {std::move(row.database_name), std::move(row.table_name), std::move(row.catalog_name)},
        *privilege});
  }
  MR_RETURN_IF_ERROR(txn.Commit());
  return catalog;
}

Status SqlUserStore::InsertUser(const access::UserRecord& u) {
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(auto exists, Statement::Prepare(conn,
                                                        "SELECT name FROM __millrace.users "
                                                        "WHERE name = ?"));
    bool found = false;
    MR_RETURN_IF_ERROR(exists.Str(u.name)
                           .ForEach([&](const SqlRow&) {
                             found = true;
                             return Status::Ok();
                           })
                           .status());
    if (found) return Status::AlreadyExists("user '" + u.name + "' is in the catalog");
    return UsersTable().InsertRow(conn, u);
  });
}

Status SqlUserStore::UpdateUser(const access::UserRecord& u) {
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    // Every field but the name (the key) and created_at_us (UserStore's contract).
    const auto updated = [](const Column<access::UserRecord>& c) {
      return c.name != "name" && c.name != "created_at_us";
    };
    MR_ASSIGN_OR_RETURN(int64_t changed,
                        UsersTable().UpdateRows(conn, u, updated, " WHERE name = ?",
                                                [&](Statement& stmt) { stmt.Str(u.name); }));
    if (changed != 1) return Status::NotFound("user '" + u.name + "' is not in the catalog");
    return Status::Ok();
  });
}

Status SqlUserStore::DeleteUser(std::string_view name) {
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

Status SqlUserStore::AddGrant(const access::Grant& grant) {
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(
        auto insert,
        Statement::Prepare(conn, std::string("INSERT INTO __millrace.grants (user_name, "
                                             "database_name, table_name, privilege, "
                                             "catalog_name) SELECT ?, ?, ?, ?, ? WHERE NOT EXISTS "
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

Status SqlUserStore::RemoveGrant(const access::Grant& grant) {
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
