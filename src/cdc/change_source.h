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
// - Thread-safety: as job_source.h: Poll runs on the job's task thread.
#pragma once

#include "cdc/change_stream.h"
#include "common/logging.h"
#include "common/result.h"
#include "job/job_source.h"

namespace millrace::cdc {

template <typename Position>
class ChangeSource : public job::JobSource {
 public:
  Result<job::Polled> Poll(const job::JobRecord& job, const job::BatchLimits& limits) final {
    const job::Offset& offset = job.current_offset;
    if (offset.empty()) return Start(job, limits);
    MR_RETURN_IF_ERROR(changes().FollowOffsetTables(offset));
    MR_ASSIGN_OR_RETURN(const Position at, PositionIn(offset));
    if (offset.parts().contains(kSnapshotPart)) {
      return SnapshotSplit(job, at, offset.parts()[kSnapshotPart]);
    }
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

 protected:
  // The source's tables, shapes and queue of transactions.
  virtual ChangeStream& changes() = 0;
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
};

}  // namespace millrace::cdc
