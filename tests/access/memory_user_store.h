// A UserStore in memory (user_store.h's contract), whose writes fail while `fail_writes` is
// set: for the tests of AccessControl and the statements.
#pragma once

#include <algorithm>
#include <atomic>

#include "access/user_store.h"
#include "common/strings.h"
#include "common/thread_annotations.h"

namespace millrace::access {

class MemoryUserStore final : public UserStore {
 public:
  Result<UserCatalog> LoadUsers() override {
    MutexLock lock(&mu_);
    return catalog_;
  }
  Status InsertUser(const UserRecord& user) override {
    MR_RETURN_IF_ERROR(Write());
    MutexLock lock(&mu_);
    if (Find(user.name) != catalog_.users.end()) return Status::AlreadyExists(user.name);
    catalog_.users.push_back(user);
    return Status::Ok();
  }
  Status UpdateUser(const UserRecord& user) override {
    MR_RETURN_IF_ERROR(Write());
    MutexLock lock(&mu_);
    auto it = Find(user.name);
    if (it == catalog_.users.end()) return Status::NotFound(user.name);
    const int64_t created = it->created_at_us;
    *it = user;
    it->created_at_us = created;
    return Status::Ok();
  }
  Status DeleteUser(std::string_view name) override {
    MR_RETURN_IF_ERROR(Write());
    MutexLock lock(&mu_);
    auto it = Find(name);
    if (it == catalog_.users.end()) return Status::NotFound(std::string(name));
    catalog_.users.erase(it);
    std::erase_if(catalog_.grants, [&](const Grant& g) { return g.user == name; });
    return Status::Ok();
  }
  Status AddGrant(const Grant& grant) override {
    MR_RETURN_IF_ERROR(Write());
    MutexLock lock(&mu_);
    if (Grant* held = Held(grant)) {
      held->privileges.Add(grant.privileges);
    } else {
      catalog_.grants.push_back(grant);
    }
    return Status::Ok();
  }
  Status RemoveGrant(const Grant& grant) override {
    MR_RETURN_IF_ERROR(Write());
    MutexLock lock(&mu_);
    if (Grant* held = Held(grant)) held->privileges.Remove(grant.privileges);
    std::erase_if(catalog_.grants, [](const Grant& g) { return g.privileges.empty(); });
    return Status::Ok();
  }

  std::atomic<bool> fail_writes{false};
  std::atomic<int> writes{0};

 private:
  Status Write() {
    if (fail_writes) return Status::IoError("no space left on device");
    ++writes;
    return Status::Ok();
  }
  // The grant of the same user on the same object, or null.
  Grant* Held(const Grant& grant) REQUIRES(mu_) {
    for (Grant& held : catalog_.grants) {
      if (held.user == grant.user && held.object.SameAs(grant.object)) return &held;
    }
    return nullptr;
  }
  std::vector<UserRecord>::iterator Find(std::string_view name) REQUIRES(mu_) {
    return std::find_if(catalog_.users.begin(), catalog_.users.end(),
                        [&](const UserRecord& u) { return u.name == name; });
  }

  Mutex mu_;
  UserCatalog catalog_ GUARDED_BY(mu_);
};

}  // namespace millrace::access
