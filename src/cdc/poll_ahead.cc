#include "cdc/poll_ahead.h"

#include <chrono>
#include <utility>

#include "common/logging.h"

namespace millrace::cdc {
namespace {

// A read ahead that is not used: its error, if any, is met again by the poll made instead.
void Drop(const Result<job::Polled>& polled) {
  if (!polled.ok()) {
    MR_LOG(kInfo) << "a read ahead not used failed: " << polled.status().ToString();
  }
}

}  // namespace

void PollAhead::Start(const job::JobRecord& job, PollFn poll) {
  offset_ = job.current_offset;
  epoch_ = job.epoch;
  asked_ = false;
  result_ = std::async(std::launch::async, std::move(poll));
}

std::optional<Result<job::Polled>> PollAhead::Take(const job::JobRecord& job) {
  Ask();
  if (!result_.valid()) return std::nullopt;
  Result<job::Polled> polled = result_.get();
  if (job.current_offset == offset_ && job.epoch == epoch_) return polled;
  Drop(polled);
  return std::nullopt;
}

void PollAhead::Wait() {
  Ask();
  if (result_.valid()) result_.wait();
}

void PollAhead::Discard() {
  Ask();
  if (result_.valid()) Drop(result_.get());
}

bool PollAhead::running() const {
  return result_.valid() && result_.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
}

}  // namespace millrace::cdc
