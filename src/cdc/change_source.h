// ChangeSource: the poll every change source makes, written once. A source's job offset is
// empty before its first batch, a snapshot split while its tables are copied, or a position in
// its log; the source supplies each step (PgChangeSource, MysqlChangeSource), this class the
// order and the one reconnect.
//
// Contract (beyond job_source.h)
// - Poll: an empty offset starts the job (Start); otherwise the tables the offset lists are
//   followed (ChangeStream::FollowOffsetTables), its position is read (PositionIn), and either
//   the next snapshot split is read (SnapshotSplit, when the offset has a "snapshot" part) or
//   the log is streamed from the position (Stream). A stream that fails UNAVAILABLE (a broken
//   connection: a server restart, a timeout while the job was idle) is closed and streamed
//   once more on a new connection from the same position; a stream that fails after that is
//   closed and its error is the source's StreamFailed of it.
// - Read ahead: a poll that streamed a batch of changes and left more (Polled::more) starts
//   the next poll at once on a thread of its own (PollAhead), for the job at the batch's end,
//   while the task loads and commits the batch; the next Poll takes its result when the job is
//   there at the same epoch, else drops it and polls again (a stream whose last batch did not
//   commit restarts at the job's offset, as without read ahead); one that found nothing is not
//   handed out either: the poll reads the stream itself, waiting for a first change as any
//   poll does. Snapshot splits are not read ahead. A read ahead keeps reading (Gathering) until the
//   task asks for its batch, within the bounds and budget of a poll; a poll of the task's own ends
//   once nothing more has arrived. While the read ahead runs, Committed holds the offset and
//   Confirm tells the source once it has ended (the read ahead uses the same connection); TurnEnded
//   waits for it (its result is kept for the next turn's first poll); Drop drops it first. A
//   subclass's destructor calls EndReadAhead before its members go.
// - Thread-safety: as job_source.h: Poll, Committed, TurnEnded and Drop run on the job's task
//   thread (or the dropping statement's after the task ended); the steps below also run on
//   the read ahead's thread, never at the same time as one of those (they wait first).
#pragma once

#include <optional>

#include "cdc/change_stream.h"
#include "cdc/poll_ahead.h"
#include "common/logging.h"
#include "common/result.h"
#include "job/job_source.h"

namespace millrace::cdc {

template <typename Position>
class ChangeSource : public job::JobSource {
 public:
  Result<job::Polled> Poll(const job::JobRecord& job, const job::BatchLimits& limits) final {
    std::optional<Result<job::Polled>> ahead = ahead_.Take(job);
    ConfirmHeld();
    // A read ahead that found nothing yet: the poll waits on the stream itself (a poll's wait
    // for a first change) rather than report it drained, which would wait max_interval.
    if (ahead && ahead->ok() && (*ahead)->batch == nullptr) ahead.reset();
    if (!ahead) {
      const job::Offset& offset = job.current_offset;
      if (offset.empty()) return Start(job, limits);
      if (offset.parts().contains(kSnapshotPart)) {
        MR_RETURN_IF_ERROR(changes().FollowOffsetTables(offset));
        MR_ASSIGN_OR_RETURN(const Position at, PositionIn(offset));
        return SnapshotSplit(job, at, offset.parts()[kSnapshotPart]);
      }
      ahead = StreamFrom(job, limits);
    }
    ReadAhead(job, limits, *ahead);
    return std::move(*ahead);
  }

  void Committed(const job::Offset& offset) final {
    if (ahead_.running()) {
      held_ = offset;
      return;
    }
    Confirm(offset);
  }

  void TurnEnded(job::TurnEnd) final {
    ahead_.Wait();
    ConfirmHeld();
  }

  Status Drop(const job::JobRecord& job) final {
    EndReadAhead();
    held_.reset();
    return DropUpstream(job);
  }

 protected:
  // Waits for the read ahead and drops what it read (see the contract).
  void EndReadAhead() { ahead_.Discard(); }
  // Whether a stream with whole transactions in hand and nothing more arriving this moment
  // keeps reading rather than ending its poll: a read ahead the task has not asked for yet.
  bool Gathering() const { return ahead_.gathering(); }

  // The source's tables, shapes and queue of transactions.
  virtual ChangeStream& changes() = 0;
  // Tells the source upstream that the job committed `offset` (job_source.h's Committed).
  virtual void Confirm(const job::Offset& offset) = 0;
  // Releases what the source holds upstream (job_source.h's Drop).
  virtual Status DropUpstream(const job::JobRecord& job) = 0;
  // The job's first poll: creates what the job needs upstream and takes the first batch.
  virtual Result<job::Polled> Start(const job::JobRecord& job, const job::BatchLimits& limits) = 0;
  // The log position `offset` holds; DATA_LOSS when it holds none.
  virtual Result<Position> PositionIn(const job::Offset& offset) const = 0;
  // The snapshot split after `split` (the offset's snapshot part); `at` is where the log
  // continues once the snapshot is done.
  virtual Result<job::Polled> SnapshotSplit(const job::JobRecord& job, const Position& at,
                                            const nlohmann::json& split) = 0;
  virtual Result<job::Polled> Stream(const job::JobRecord& job, const Position& at,
                                     const job::BatchLimits& limits) = 0;
  virtual void CloseStream() = 0;
  // What the task sees of a stream that failed twice; by default the error itself.
  virtual Status StreamFailed(const Position& at, const Status& error) { return error; }

 private:
  // The log after the job's offset (not a snapshot's), with the one reconnect.
  Result<job::Polled> StreamFrom(const job::JobRecord& job, const job::BatchLimits& limits) {
    MR_RETURN_IF_ERROR(changes().FollowOffsetTables(job.current_offset));
    MR_ASSIGN_OR_RETURN(const Position at, PositionIn(job.current_offset));
    Result<job::Polled> polled = Stream(job, at, limits);
    if (!polled.ok() && polled.status().code() == StatusCode::kUnavailable) {
      MR_LOG(kInfo) << Describe() << ": " << polled.status().ToString() << "; reconnecting";
      CloseStream();
      polled = Stream(job, at, limits);
    }
    if (polled.ok()) return polled;
    CloseStream();
    return StreamFailed(at, polled.status());
  }

  // Starts the next poll after `polled`'s batch when it streamed changes and left more.
  void ReadAhead(const job::JobRecord& job, const job::BatchLimits& limits,
                 const Result<job::Polled>& polled) {
    if (!polled.ok() || !polled->more || polled->batch == nullptr || polled->batch->items() == 0 ||
        polled->batch->end().parts().contains(kSnapshotPart)) {
      return;
    }
    job::JobRecord next = job;
    next.current_offset = polled->batch->end();
    ahead_.Start(next, [this, next, limits] { return StreamFrom(next, limits); });
  }

  void ConfirmHeld() {
    if (!held_) return;
    Confirm(*held_);
    held_.reset();
  }

  PollAhead ahead_;
  std::optional<job::Offset> held_;  // committed while the read ahead ran, not yet confirmed
};

}  // namespace millrace::cdc
