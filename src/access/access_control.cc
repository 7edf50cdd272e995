#include "access/access_control.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <tuple>

#include "access/password.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/server_config.h"
#include "common/strings.h"
#include "sql/mysql_errors.h"

namespace millrace::access {
namespace {

// A hash no password has been seen to produce: unknown users are checked against it, so a
// failed login takes as long whether or not the user exists.
constexpr std::string_view kNoUserHash =
    "\x01\x23\x45\x67\x89\xab\xcd\xef\x01\x23"
    "\x45\x67\x89\xab\xcd\xef\x01\x23\x45\x67";

bool HostMatches(std::string_view pattern, std::string_view host) {
  if (pattern == kAnyHost || EqualsIgnoreCase(pattern, host)) return true;
  const std::string address(host);
  return EqualsIgnoreCase(pattern, "localhost") &&
         (IsLoopbackAddress(address) || address == "::ffff:127.0.0.1");
}

std::string HostOf(const UserIdentity& user) {
  return user.host.value_or(std::string(kAnyHost));
}

// Global grants first, then by catalog (the embedded one first), database and table
// (case-insensitively).
bool GrantOrder(const Grant& a, const Grant& b) {
  const auto key = [](const Grant& g) {
    return std::make_tuple(!g.object.global(), ToLower(g.object.catalog), !g.object.table.empty(),
                           ToLower(g.object.database), ToLower(g.object.table));
  };
  return key(a) < key(b);
}

Grant RootGrant() {
  return Grant{std::string(kRootUser), GrantObject{}, PrivilegeSet::All()};
}

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             Clock::Real()->WallNow().time_since_epoch())
      .count();
}

// A host for CREATE USER: '%' or one address, not a pattern.
Status CheckHost(const UserIdentity& user) {
  const std::string host = HostOf(user);
  if (host.empty() || (host != kAnyHost && host.find('%') != std::string::npos)) {
    return sql::CannotUserError("CREATE USER", user.name, host,
                                "the host must be '%' (any address) or one address");
  }
  return Status::Ok();
}

}  // namespace

std::string UserIdentity::ToString() const {
  return "'" + name + "'@'" + host.value_or(std::string(kAnyHost)) + "'";
}

AccessControl::AccessControl(UserStore* store, std::string root_password)
    : store_(store), root_hash_(NativePasswordHash(root_password)) {}

AccessControl::~AccessControl() = default;

Status AccessControl::Load() {
  MutexLock write(&write_mu_);
  MR_ASSIGN_OR_RETURN(UserCatalog catalog, store_->LoadUsers());
  UserMap users;
  for (UserRecord& record : catalog.users) {
    if (EqualsIgnoreCase(record.name, kRootUser)) {
      MR_LOG(kWarning) << "ignoring the stored user " << record.name << ": root is built in";
      continue;
    }
    std::string name = record.name;
    users[name].record = std::move(record);
  }
  for (Grant& grant : catalog.grants) {
    auto it = users.find(grant.user);
    if (it == users.end() || grant.privileges.empty()) continue;
    std::vector<Grant>& grants = it->second.grants;
    auto same = std::find_if(grants.begin(), grants.end(),
                             [&](const Grant& g) { return g.object.SameAs(grant.object); });
    if (same != grants.end()) {
      same->privileges.Add(grant.privileges);
    } else {
      grants.push_back(std::move(grant));
    }
  }
  for (auto& [name, state] : users)
    std::sort(state.grants.begin(), state.grants.end(), GrantOrder);
  MutexLock lock(&mu_);
  users_ = std::move(users);
  return Status::Ok();
}

AccessControl::Credential AccessControl::CredentialOf(std::string_view user,
                                                      std::string_view host) const {
  if (user == kRootUser) return Credential{root_hash_, true, false};
  MutexLock lock(&mu_);
  auto it = users_.find(user);
  if (it == users_.end() || !HostMatches(it->second.record.host, host)) {
    return Credential{std::string(kNoUserHash), false, false};
  }
  return Credential{it->second.record.password_hash, true, it->second.record.require_ssl};
}

Status AccessControl::Authenticate(std::string_view user, std::string_view host,
                                   std::string_view scramble, std::string_view auth_response,
                                   bool secure) const {
  const Credential credential = CredentialOf(user, host);
  const bool verified = VerifyNativeResponse(credential.hash, scramble, auth_response);
  if (!credential.known || !verified || (credential.require_ssl && !secure)) {
    return sql::AccessDeniedError(user, host, !auth_response.empty());
  }
  return Status::Ok();
}

Status AccessControl::CheckPassword(std::string_view user, std::string_view host,
                                    std::string_view password, bool secure) const {
  const Credential credential = CredentialOf(user, host);
  const bool verified = VerifyPassword(credential.hash, password);
  if (!credential.known || !verified || (credential.require_ssl && !secure)) {
    return sql::AccessDeniedError(user, host, !password.empty());
  }
  return Status::Ok();
}

bool AccessControl::UserExists(std::string_view user) const {
  if (user == kRootUser) return true;
  MutexLock lock(&mu_);
  return users_.find(user) != users_.end();
}

std::string AccessControl::LoginStamp(std::string_view user) const {
  if (user == kRootUser) return "root\n" + root_hash_;
  MutexLock lock(&mu_);
  auto it = users_.find(user);
  if (it == users_.end()) return "";
  const UserRecord& r = it->second.record;
  return std::to_string(r.created_at_us) + "\n" + r.password_hash + "\n" + r.host + "\n" +
         (r.require_ssl ? "ssl" : "");
}

template <typename Pred>
bool AccessControl::AnyGrant(std::string_view user, Pred pred) const {
  if (user == kRootUser) return true;
  MutexLock lock(&mu_);
  auto it = users_.find(user);
  return it != users_.end() &&
         std::any_of(it->second.grants.begin(), it->second.grants.end(), pred);
}

bool AccessControl::HasIn(std::string_view user, Privilege privilege, std::string_view catalog,
                          std::string_view database, std::string_view table) const {
  return AnyGrant(user, [&](const Grant& grant) {
    return (grant.object.global() && grant.privileges.Has(Privilege::kAdmin)) ||
           (grant.privileges.Has(privilege) && grant.object.CoversIn(catalog, database, table));
  });
}

bool AccessControl::HasAnyIn(std::string_view user, std::string_view catalog,
                             std::string_view database, std::string_view table) const {
  return AnyGrant(user, [&](const Grant& grant) {
    if (grant.privileges.empty()) return false;
    if (grant.object.CoversIn(catalog, database, table)) return true;
    // A table's grant makes its database visible, and any grant in a catalog the catalog.
    if (!EqualsIgnoreCase(grant.object.catalog, catalog)) return false;
    if (database.empty()) return !catalog.empty();
    return table.empty() && EqualsIgnoreCase(grant.object.database, database);
  });
}

std::vector<Grant> AccessControl::GrantsOf(std::string_view user) const {
  if (user == kRootUser) return {RootGrant()};
  MutexLock lock(&mu_);
  auto it = users_.find(user);
  if (it == users_.end()) return {};
  return it->second.grants;
}

std::optional<UserRecord> AccessControl::FindUser(std::string_view user) const {
  if (user == kRootUser) {
    UserRecord root;
    root.name = std::string(kRootUser);
    root.password_hash = root_hash_;
    return root;
  }
  MutexLock lock(&mu_);
  auto it = users_.find(user);
  if (it == users_.end()) return std::nullopt;
  return it->second.record;
}

std::vector<UserRecord> AccessControl::Users() const {
  std::vector<UserRecord> users = {*FindUser(kRootUser)};
  MutexLock lock(&mu_);
  for (const auto& [name, state] : users_)
    users.push_back(state.record);
  return users;
}

const AccessControl::UserState* AccessControl::FindLocked(const UserIdentity& user) const {
  auto it = users_.find(user.name);
  if (it == users_.end()) return nullptr;
  if (user.host && !EqualsIgnoreCase(*user.host, it->second.record.host)) return nullptr;
  return &it->second;
}

Status AccessControl::RefuseRoot(const UserIdentity& user, std::string_view operation) {
  if (!EqualsIgnoreCase(user.name, kRootUser)) return Status::Ok();
  return sql::CannotUserError(operation, user.name, HostOf(user),
                              "root is built in: it holds every privilege and its password is "
                              "set at start (--password-env)");
}

Status AccessControl::CreateUser(const UserIdentity& user, const UserChange& change,
                                 bool if_not_exists) {
  MR_RETURN_IF_ERROR(RefuseRoot(user, "CREATE USER"));
  MR_RETURN_IF_ERROR(CheckHost(user));
  if (user.name.empty()) return sql::CannotUserError("CREATE USER", user.name, HostOf(user));
  // A name that shows like another ('root ' like root) or holds what a log line or a terminal
  // would act on is refused: a user is who its name says.
  const unsigned char first = static_cast<unsigned char>(user.name.front());
  const unsigned char last = static_cast<unsigned char>(user.name.back());
  if (std::isspace(first) || std::isspace(last)) {
    return sql::CannotUserError("CREATE USER", user.name, HostOf(user),
                                "a user name may not begin or end with a space");
  }
  for (unsigned char c : user.name) {
    if (c < 0x20 || c == 0x7f) {
      return sql::CannotUserError("CREATE USER", user.name, HostOf(user),
                                  "a user name may not hold control characters");
    }
  }
  MutexLock write(&write_mu_);
  {
    MutexLock lock(&mu_);
    if (users_.find(user.name) != users_.end()) {
      if (if_not_exists) return Status::Ok();
      return sql::CannotUserError("CREATE USER", user.name, HostOf(user));
    }
  }
  UserRecord record;
  record.name = user.name;
  record.host = HostOf(user);
  record.password_hash = change.password_hash.value_or("");
  record.require_ssl = change.require_ssl.value_or(false);
  record.max_user_connections = change.max_user_connections.value_or(0);
  record.created_at_us = NowMicros();
  MR_RETURN_IF_ERROR(store_->InsertUser(record));
  MutexLock lock(&mu_);
  users_[record.name].record = record;
  MR_LOG(kInfo) << "created user " << user.ToString();
  return Status::Ok();
}

Status AccessControl::AlterUser(const UserIdentity& user, const UserChange& change,
                                std::string_view operation) {
  MR_RETURN_IF_ERROR(RefuseRoot(user, operation));
  MutexLock write(&write_mu_);
  UserRecord record;
  {
    MutexLock lock(&mu_);
    const UserState* state = FindLocked(user);
    if (state == nullptr) {
      if (operation == "SET PASSWORD") return sql::PasswordNoMatchError();
      return sql::CannotUserError(operation, user.name, HostOf(user));
    }
    record = state->record;
  }
  if (change.password_hash) record.password_hash = *change.password_hash;
  if (change.require_ssl) record.require_ssl = *change.require_ssl;
  if (change.max_user_connections) record.max_user_connections = *change.max_user_connections;
  MR_RETURN_IF_ERROR(store_->UpdateUser(record));
  MutexLock lock(&mu_);
  users_[record.name].record = record;
  MR_LOG(kInfo) << "altered user " << user.ToString()
                << (change.password_hash ? " (password changed)" : "");
  return Status::Ok();
}

Status AccessControl::DropUser(const UserIdentity& user, bool if_exists) {
  MR_RETURN_IF_ERROR(RefuseRoot(user, "DROP USER"));
  MutexLock write(&write_mu_);
  {
    MutexLock lock(&mu_);
    if (FindLocked(user) == nullptr) {
      if (if_exists) return Status::Ok();
      return sql::CannotUserError("DROP USER", user.name, HostOf(user));
    }
  }
  MR_RETURN_IF_ERROR(store_->DeleteUser(user.name));
  MutexLock lock(&mu_);
  users_.erase(user.name);
  MR_LOG(kInfo) << "dropped user " << user.ToString();
  return Status::Ok();
}

Status AccessControl::GrantPrivileges(const UserIdentity& user, const GrantObject& object,
                                      PrivilegeSet privileges) {
  MR_RETURN_IF_ERROR(RefuseRoot(user, "GRANT"));
  if (privileges.Has(Privilege::kAdmin) && !object.global()) {
    return sql::WrongUsageError(object.table.empty() ? "DB GRANT" : "TABLE GRANT",
                                "GLOBAL PRIVILEGES (ADMIN_PRIV is granted ON *.* only)");
  }
  MutexLock write(&write_mu_);
  Grant grant{user.name, object, privileges};
  {
    MutexLock lock(&mu_);
    const UserState* state = FindLocked(user);
    if (state == nullptr) return sql::CantCreateUserWithGrantError();
    for (const Grant& held : state->grants) {
      if (!held.object.SameAs(object)) continue;
      grant.object = held.object;  // the spelling first granted
      grant.privileges.Remove(held.privileges);
    }
  }
  if (grant.privileges.empty()) return Status::Ok();
  MR_RETURN_IF_ERROR(store_->AddGrant(grant));
  MutexLock lock(&mu_);
  std::vector<Grant>& grants = users_[user.name].grants;
  auto held = std::find_if(grants.begin(), grants.end(),
                           [&](const Grant& g) { return g.object.SameAs(object); });
  if (held != grants.end()) {
    held->privileges.Add(grant.privileges);
  } else {
    grants.push_back(grant);
    std::sort(grants.begin(), grants.end(), GrantOrder);
  }
  MR_LOG(kInfo) << "granted " << PrivilegeNames(grant.privileges) << " on "
                << grant.object.ToString() << " to " << user.ToString();
  return Status::Ok();
}

Status AccessControl::RevokePrivileges(const UserIdentity& user, const GrantObject& object,
                                       PrivilegeSet privileges) {
  MR_RETURN_IF_ERROR(RefuseRoot(user, "REVOKE"));
  MutexLock write(&write_mu_);
  Grant grant{user.name, object, PrivilegeSet()};
  {
    MutexLock lock(&mu_);
    const UserState* state = FindLocked(user);
    if (state == nullptr) return sql::NonexistingGrantError(user.name, HostOf(user));
    auto held = std::find_if(state->grants.begin(), state->grants.end(),
                             [&](const Grant& g) { return g.object.SameAs(object); });
    if (held == state->grants.end()) {
      return sql::NonexistingGrantError(user.name, state->record.host);
    }
    grant.object = held->object;
    grant.privileges = PrivilegeSet(held->privileges.bits() & privileges.bits());
  }
  if (grant.privileges.empty()) return Status::Ok();
  MR_RETURN_IF_ERROR(store_->RemoveGrant(grant));
  MutexLock lock(&mu_);
  std::vector<Grant>& grants = users_[user.name].grants;
  for (Grant& held : grants) {
    if (held.object.SameAs(object)) held.privileges.Remove(grant.privileges);
  }
  std::erase_if(grants, [](const Grant& g) { return g.privileges.empty(); });
  MR_LOG(kInfo) << "revoked " << PrivilegeNames(grant.privileges) << " on "
                << grant.object.ToString() << " from " << user.ToString();
  return Status::Ok();
}

Status AccessControl::AcquireConnection(std::string_view user) {
  MutexLock lock(&mu_);
  int64_t limit = 0;
  if (auto it = users_.find(user); it != users_.end()) {
    limit = it->second.record.max_user_connections;
  }
  if (limit == 0) limit = default_connection_limit_;
  auto count = connections_.find(user);
  if (count == connections_.end()) count = connections_.emplace(std::string(user), 0).first;
  if (limit > 0 && count->second >= limit) return sql::TooManyUserConnectionsError(user);
  ++count->second;
  return Status::Ok();
}

void AccessControl::SetDefaultConnectionLimit(int64_t limit) {
  MutexLock lock(&mu_);
  default_connection_limit_ = limit;
}

void AccessControl::ReleaseConnection(std::string_view user) {
  MutexLock lock(&mu_);
  auto count = connections_.find(user);
  if (count == connections_.end()) return;
  if (--count->second <= 0) connections_.erase(count);
}

}  // namespace millrace::access
