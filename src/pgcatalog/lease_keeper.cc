#include "pgcatalog/lease_keeper.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <vector>

#include "common/logging.h"

namespace millrace::pgcatalog {
namespace {

// How often the keeper's thread looks at the injected clock while it waits for the next tick
// (as job::Scheduler does).
constexpr std::chrono::milliseconds kClockPoll{50};

// The first error of a tick, whose parts go on after one (each still helps the next period).
class FirstError {
 public:
  void Note(const Status& s) {
    if (!s.ok() && first_.ok()) first_ = s;
  }
  const Status& status() const { return first_; }

 private:
  Status first_;
};

}  // namespace

Result<std::unique_ptr<LeaseKeeper>> LeaseKeeper::Start(LeaseKeeperConfig config) {
  if (config.leases == nullptr || config.jobs == nullptr || config.clock == nullptr ||
      config.owner.empty() || config.lease_timeout.count() <= 0) {
    return Status::InvalidArgument(
        "LeaseKeeper needs leases, a job service, a clock, an owner "
        "and a lease timeout");
  }
  auto keeper = std::make_unique<LeaseKeeper>(std::move(config));
  if (Status first = keeper->Tick(); !first.ok()) {
    MR_LOG(kWarning) << "leases: " << first.ToString() << "; trying again";
  }
  keeper->thread_ = std::thread([k = keeper.get()] { k->Run(); });
  return keeper;
}

LeaseKeeper::~LeaseKeeper() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (const auto& [job_id, lease] : held()) {
    config_.jobs->Relinquish(job_id);
    if (Status s = config_.leases->Release(lease); !s.ok()) {
      MR_LOG(kWarning) << "leases: cannot release job " << job_id << "'s: " << s.ToString();
    }
  }
  if (Status s = config_.leases->Leave(config_.owner); !s.ok()) {
    MR_LOG(kWarning) << "leases: cannot leave the cluster's servers: " << s.ToString();
  }
}

size_t LeaseKeeper::Share(size_t jobs, int64_t live_servers) {
  const size_t servers = static_cast<size_t>(std::max<int64_t>(live_servers, 1));
  return (jobs + servers - 1) / servers;
}

std::map<int64_t, Lease> LeaseKeeper::held() const {
  MutexLock lock(&mu_);
  std::map<int64_t, Lease> out;
  for (const auto& [job_id, held] : held_)
    out.emplace(job_id, held.lease);
  return out;
}

void LeaseKeeper::Lose(int64_t job_id, const std::string& why) {
  config_.jobs->Relinquish(job_id);
  MutexLock lock(&mu_);
  held_.erase(job_id);
  MR_LOG(kWarning) << "job " << job_id << " no longer runs here: its lease " << why;
}

Status LeaseKeeper::Tick() {
  FirstError errors;
  errors.Note(config_.leases->Heartbeat(config_.owner, config_.lease_timeout));
  // Renewed first: a lost lease stops its tasks before anything else.
  errors.Note(RenewHeld());
  if (config_.follow_catalog) errors.Note(config_.follow_catalog());
  Result<std::vector<int64_t>> jobs = config_.jobs->Follow();
  if (!jobs.ok()) {
    errors.Note(jobs.status());
    return errors.status();
  }
  const std::set<int64_t> present(jobs->begin(), jobs->end());
  for (const auto& [job_id, lease] : held()) {
    if (present.count(job_id) > 0) continue;
    Lose(job_id, "ended with its job (dropped)");
    errors.Note(config_.leases->Release(lease));
  }
  errors.Note(Balance(*jobs));
  return errors.status();
}

Status LeaseKeeper::RenewHeld() {
  FirstError errors;
  for (const auto& [job_id, lease] : held()) {
    // Read before asking: the lease runs out ttl after the database's now() during the call,
    // which is no earlier than this.
    const Clock::SteadyTime asked = config_.clock->SteadyNow();
    Result<bool> renewed = config_.leases->Renew(lease, config_.lease_timeout);
    if (renewed.ok()) {
      if (!*renewed) {
        Lose(job_id, "was taken over or ran out");
        continue;
      }
      MutexLock lock(&mu_);
      held_[job_id].renewed = asked;
      continue;
    }
    errors.Note(renewed.status());
    Clock::SteadyTime last;
    {
      MutexLock lock(&mu_);
      last = held_[job_id].renewed;
    }
    if (config_.clock->SteadyNow() - last >= config_.lease_timeout) {
      Lose(job_id, "could not be renewed for a whole lease timeout");
    }
  }
  return errors.status();
}

Status LeaseKeeper::Balance(const std::vector<int64_t>& jobs) {
  MR_ASSIGN_OR_RETURN(const std::vector<Lease> leases, config_.leases->All());
  std::set<int64_t> taken_by_others;
  for (const Lease& lease : leases) {
    if (!lease.expired && lease.owner != config_.owner) taken_by_others.insert(lease.job_id);
  }
  MR_ASSIGN_OR_RETURN(const int64_t live, config_.leases->LiveServers());
  const size_t share = Share(jobs.size(), live);
  std::map<int64_t, Lease> mine = held();
  const std::pair<size_t, int64_t> counts{jobs.size(), live};
  if (mine.size() <= share) {
    excess_seen_.reset();
  } else {
    // Over this server's share (a server joined, or jobs were dropped): one job per period goes,
    // once the counts held still for two periods, so that a server starting or a flicker of
    // the catalog moves nothing.
    if (excess_seen_ == counts) {
      const Lease given = std::prev(mine.end())->second;
      Lose(given.job_id, "was given up for a server with fewer jobs");
      MR_RETURN_IF_ERROR(config_.leases->Release(given));
      mine.erase(given.job_id);
    }
    excess_seen_ = counts;
  }
  FirstError errors;
  for (int64_t job_id : jobs) {
    if (mine.size() >= share) break;
    if (mine.count(job_id) > 0 || taken_by_others.count(job_id) > 0) continue;
    const Clock::SteadyTime asked = config_.clock->SteadyNow();
    Result<std::optional<Lease>> taken =
        config_.leases->Take(job_id, config_.owner, config_.lease_timeout);
    if (!taken.ok() && taken.status().code() != StatusCode::kNotFound) {
      errors.Note(taken.status());
    }
    if (!taken.ok() || !taken->has_value()) continue;  // dropped, or another server was quicker
    const Lease lease = **taken;
    {
      MutexLock lock(&mu_);
      held_[job_id] = Held{lease, asked};
    }
    if (Status adopted = config_.jobs->Adopt(job_id, lease.epoch); !adopted.ok()) {
      Lose(job_id, "was given back: the job cannot run here: " + adopted.ToString());
      errors.Note(config_.leases->Release(lease));
      continue;
    }
    mine.emplace(job_id, lease);
    MR_LOG(kInfo) << "job " << job_id << " runs here now, at epoch " << lease.epoch;
  }
  return errors.status();
}

void LeaseKeeper::Run() {
  const auto period = config_.lease_timeout / 3;
  Clock::SteadyTime next = config_.clock->SteadyNow() + period;
  while (true) {
    {
      MutexLock lock(&mu_);
      if (stopping_) return;
      if (config_.clock->SteadyNow() < next) {
        WaitOnFor(wake_, &mu_, kClockPoll, [&]() NO_THREAD_SAFETY_ANALYSIS { return stopping_; });
        continue;
      }
    }
    if (Status s = Tick(); !s.ok()) {
      MR_LOG(kWarning) << "leases: " << s.ToString();
    }
    next = config_.clock->SteadyNow() + period;
  }
}

}  // namespace millrace::pgcatalog
