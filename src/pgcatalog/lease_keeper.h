// LeaseKeeper: which of a cluster's jobs this server runs (docs/cluster.md), decided by the
// leases of the cluster catalog (leases.h) and told to the job service (JobService::Adopt,
// Relinquish, Follow).
//
// Contract
// - Tick() is one period. It renews each lease this server holds; a renewal refused, or none
//   succeeding for a whole lease timeout (by this server's steady clock: stopping early is the
//   safe side), loses the lease and the job is relinquished (its tasks stop; their commits
//   would be refused anyway: the next holder's epoch fences them). Then it reads the catalog
//   again (follow_catalog, then the jobs: JobService::Follow), releases the leases of jobs no
//   longer there, and takes the lease of each job that has none or whose lease has run out, handing
//   it to the service (Adopt; a job that cannot be adopted has its lease released), while it holds
//   fewer than its share: ceil(jobs / live servers), the servers counted by their heartbeats
//   (Leases::Heartbeat, sent first in each tick). A server holding more than its share (one
//   joined, jobs were dropped) gives up one job per tick, its newest, once the counts of jobs
//   and servers have held still for two ticks: a server joining or leaving moves each job at
//   most once, and none back and forth.
// - Start runs a first Tick, then one every ttl / 3 on a thread of its own. The destructor
//   stops the thread, relinquishes every job held and releases its lease, and leaves the
//   servers (Leases::Leave), so that the others take its jobs at once.
// - A catalog error in a tick is logged and the next tick tries again; Tick returns it.
// - Thread-safety: Tick is called by one thread at a time (the keeper's own once started).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "job/job_service.h"
#include "pgcatalog/leases.h"

namespace millrace::pgcatalog {

struct LeaseKeeperConfig {
  Leases* leases = nullptr;         // not owned
  job::JobService* jobs = nullptr;  // not owned; JobServiceConfig::leased
  Clock* clock = nullptr;           // not owned
  std::string owner;                // this server, unique per start (leases' owner)
  std::chrono::milliseconds lease_timeout{10'000};
  // Reads again what other servers change in the shared catalog besides the jobs (users and
  // grants, external catalogs), each tick before the jobs: a job's plan names them. May be empty.
  std::function<Status()> follow_catalog;
};

class LeaseKeeper {
 public:
  static Result<std::unique_ptr<LeaseKeeper>> Start(LeaseKeeperConfig config);
  explicit LeaseKeeper(LeaseKeeperConfig config) : config_(std::move(config)) {}
  ~LeaseKeeper();

  Status Tick();

  // The jobs whose lease this server holds, by id.
  std::map<int64_t, Lease> held() const EXCLUDES(mu_);

 private:
  struct Held {
    Lease lease;
    Clock::SteadyTime renewed;  // the last successful take or renewal
  };
  void Lose(int64_t job_id, const std::string& why) EXCLUDES(mu_);
  // Tick's parts: renewing the leases held; giving up jobs over this server's share of `jobs`
  // and taking free ones up to it.
  Status RenewHeld() EXCLUDES(mu_);
  Status Balance(const std::vector<int64_t>& jobs) EXCLUDES(mu_);
  void Run();
  static size_t Share(size_t jobs, int64_t live_servers);

  const LeaseKeeperConfig config_;
  mutable Mutex mu_;
  std::map<int64_t, Held> held_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  // Tick's alone (one thread at a time): the counts (jobs, live servers) of the last tick that
  // found this server over its share.
  std::optional<std::pair<size_t, int64_t>> excess_seen_;
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace millrace::pgcatalog
