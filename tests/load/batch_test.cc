#include "load/batch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "source/local_source.h"
#include "testing/temp_dir.h"
#include "testing/wait_for.h"

namespace millrace::load {
namespace {

// A local directory whose downloads of chosen keys wait until the test opens their gate, so a
// test can hold one file in flight and see what the fetcher hands out meanwhile.
class GatedSource final : public source::FileSource {
 public:
  explicit GatedSource(std::unique_ptr<source::FileSource> inner) : inner_(std::move(inner)) {}

  void Hold(const std::string& key) {
    MutexLock lock(&mu_);
    held_[key] = true;
  }
  void Release(const std::string& key) {
    MutexLock lock(&mu_);
    held_[key] = false;
    cv_.notify_all();
  }
  int started() const { return started_; }
  // From now on the source fetches into memory (FileSource::Fetch): through a download to a
  // scratch file of its own, read back.
  void FetchInto(const std::string& scratch) { scratch_ = scratch; }
  // The most downloads in flight at once so far, and the keys in the order they started.
  int most_in_flight() const { return most_in_flight_; }
  std::vector<std::string> start_order() {
    MutexLock lock(&mu_);
    return start_order_;
  }

  Result<source::Listing> List(const source::ListOptions& options) override {
    return inner_->List(options);
  }
  Result<source::FileInfo> Stat(const std::string& key) override { return inner_->Stat(key); }
  Status Download(const source::FileInfo& file, const std::string& local_path) override {
    {
      MutexLock lock(&mu_);
      start_order_.push_back(file.key);
      most_in_flight_ = std::max(most_in_flight_.load(), ++in_flight_);
      ++started_;
      WaitOn(cv_, &mu_, [&]() NO_THREAD_SAFETY_ANALYSIS { return !held_[file.key]; });
    }
    Status done = inner_->Download(file, local_path);
    MutexLock lock(&mu_);
    --in_flight_;
    return done;
  }
  std::string Describe() const override { return inner_->Describe(); }
  bool Fetches() const override { return !scratch_.empty(); }
  Result<std::string> Fetch(const source::FileInfo& file) override {
    const std::string path = scratch_ + "/" + std::to_string(++fetched_);
    MR_RETURN_IF_ERROR(inner_->Download(file, path));
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  std::string scratch_;
  std::atomic<int> fetched_{0};
  std::unique_ptr<source::FileSource> inner_;
  Mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, bool> held_ GUARDED_BY(mu_);
  std::vector<std::string> start_order_ GUARDED_BY(mu_);
  int in_flight_ GUARDED_BY(mu_) = 0;
  std::atomic<int> started_{0};
  std::atomic<int> most_in_flight_{0};
};

class BatchFetcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_.Join("in"));
    for (int i = 0; i < 6; ++i) {
      std::ofstream(dir_.path() + "/in/f" + std::to_string(i) + ".csv") << i << ",x\n";
    }
    source::LocalSourceOptions options;
    options.settle_time = std::chrono::milliseconds(0);
    auto local = source::LocalSource::Create(dir_.path() + "/in/*.csv", options);
    ASSERT_TRUE(local.ok()) << local.status().ToString();
    source_ = std::make_unique<GatedSource>(std::move(local).value());
    auto listing = source_->List({});
    ASSERT_TRUE(listing.ok()) << listing.status().ToString();
    files_ = listing->files;
    ASSERT_EQ(files_.size(), 6u);
    auto work = WorkDirs::Under(dir_.path() + "/work")->Take();
    ASSERT_TRUE(work.ok());
    work_ = std::move(work).value();
  }

  FetchOptions Options(int parallelism) {
    FetchOptions options;
    options.parallelism = parallelism;
    options.local_files = FetchOptions::LocalFiles::kCopy;
    return options;
  }

  // f5.csv two records (8 bytes) where the others hold one (4 bytes); files_ listed again.
  void MakeTheLastFileLarger() {
    std::ofstream(dir_.path() + "/in/f5.csv", std::ios::trunc) << "5,x\n6,y\n";
    auto listing = source_->List({});
    ASSERT_TRUE(listing.ok());
    files_ = listing->files;
  }
  // CSV files of up to 4 bytes kept in memory (FetchOptions::keep_bytes_max).
  FetchOptions KeepingFilesOf4Bytes() {
    FetchOptions options = Options(2);
    options.csv.column_separator = ",";
    options.keep_bytes_max = 4;
    return options;
  }

  testing::TempDir dir_;
  std::unique_ptr<GatedSource> source_;
  std::vector<source::FileInfo> files_;
  std::unique_ptr<WorkDir> work_;
};

std::string Contents(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(BatchFetcherTest, EarlyFilesAreHandedOutWhileLaterOnesAreStillDownloading) {
  source_->Hold(files_[4].key);
  BatchFetcher fetcher(*source_, SourceKind::kLocal, files_, Options(2), work_->path());
  // Files 0-3 are ready although file 4 cannot finish: a caller loads them meanwhile.
  for (size_t i = 0; i < 4; ++i) {
    const FetchedFile& f = fetcher.Wait(i);
    ASSERT_TRUE(f.status.ok()) << f.status.ToString();
    EXPECT_EQ(Contents(f.path), std::to_string(i) + ",x\n");
    EXPECT_NE(f.path, files_[i].key) << "kCopy fetches a copy";
  }
  source_->Release(files_[4].key);
  EXPECT_EQ(Contents(fetcher.Wait(4).path), "4,x\n");
  EXPECT_EQ(Contents(fetcher.Wait(5).path), "5,x\n");
}

// CSV files up to keep_bytes_max are also handed out in memory, counted from there; larger ones
// and every file with keep_bytes_max 0 only on disk, counted from the file.
TEST_F(BatchFetcherTest, SmallCsvFilesAreKeptInMemoryCountedTheSame) {
  ASSERT_NO_FATAL_FAILURE(MakeTheLastFileLarger());
  FetchOptions options = KeepingFilesOf4Bytes();
  {
    BatchFetcher fetcher(*source_, SourceKind::kLocal, files_, options, work_->path());
    for (size_t i = 0; i < 5; ++i) {
      const FetchedFile& f = fetcher.Wait(i);
      ASSERT_TRUE(f.status.ok()) << f.status.ToString();
      ASSERT_TRUE(f.bytes.has_value()) << i;
      EXPECT_EQ(*f.bytes, std::to_string(i) + ",x\n");
      EXPECT_EQ(*f.bytes, Contents(f.path));
      EXPECT_EQ(f.records, 1);
    }
    const FetchedFile& larger = fetcher.Wait(5);
    ASSERT_TRUE(larger.status.ok()) << larger.status.ToString();
    EXPECT_FALSE(larger.bytes.has_value());
    EXPECT_EQ(larger.records, 2);
  }
  options.keep_bytes_max = 0;
  BatchFetcher fetcher(*source_, SourceKind::kLocal, files_, options, work_->path());
  for (size_t i = 0; i < files_.size(); ++i) {
    EXPECT_FALSE(fetcher.Wait(i).bytes.has_value()) << i;
    EXPECT_EQ(fetcher.Wait(i).records, i == 5 ? 2 : 1);
  }
}

// With kept_in_memory_only, a source that fetches hands small CSV files out in memory with no
// file at their path until Materialize writes it (once); a larger one is downloaded as before.
TEST_F(BatchFetcherTest, FilesKeptInMemoryOnlyAreWrittenWhenAsked) {
  ASSERT_NO_FATAL_FAILURE(MakeTheLastFileLarger());
  std::filesystem::create_directories(dir_.Join("scratch"));
  source_->FetchInto(dir_.Join("scratch"));
  FetchOptions options = KeepingFilesOf4Bytes();
  options.kept_in_memory_only = true;
  BatchFetcher fetcher(*source_, SourceKind::kS3, files_, options, work_->path());
  for (size_t i = 0; i < 5; ++i) {
    const FetchedFile& f = fetcher.Wait(i);
    ASSERT_TRUE(f.status.ok()) << f.status.ToString();
    ASSERT_TRUE(f.bytes.has_value()) << i;
    EXPECT_EQ(*f.bytes, std::to_string(i) + ",x\n");
    EXPECT_EQ(f.records, 1);
    EXPECT_FALSE(f.on_disk);
    EXPECT_FALSE(std::filesystem::exists(f.path)) << f.path;
  }
  ASSERT_TRUE(fetcher.Materialize(2).ok());
  EXPECT_TRUE(fetcher.Wait(2).on_disk);
  EXPECT_EQ(Contents(fetcher.Wait(2).path), "2,x\n");
  ASSERT_TRUE(fetcher.Materialize(2).ok());  // once: nothing more to write
  EXPECT_FALSE(std::filesystem::exists(fetcher.Wait(3).path));
  const FetchedFile& larger = fetcher.Wait(5);
  ASSERT_TRUE(larger.status.ok()) << larger.status.ToString();
  EXPECT_TRUE(larger.on_disk);
  EXPECT_FALSE(larger.bytes.has_value());
  EXPECT_EQ(Contents(larger.path), "5,x\n6,y\n");
  EXPECT_TRUE(fetcher.Materialize(5).ok());
}

TEST_F(BatchFetcherTest, CancelStartsNothingMoreAndUnblocksWaiters) {
  source_->Hold(files_[0].key);
  auto fetcher = std::make_unique<BatchFetcher>(*source_, SourceKind::kLocal, files_, Options(1),
                                                work_->path());
  ASSERT_TRUE(testing::WaitFor([&] { return source_->started() == 1; }));
  fetcher->Cancel();
  // The file never started reports CANCELLED naming it; the one in flight runs to its end.
  const FetchedFile& later = fetcher->Wait(3);
  EXPECT_EQ(later.status.code(), StatusCode::kCancelled);
  EXPECT_NE(later.status.message().find(files_[3].key), std::string::npos);
  source_->Release(files_[0].key);
  EXPECT_TRUE(fetcher->Wait(0).status.ok());
  fetcher.reset();
  EXPECT_EQ(source_->started(), 1);
}

// AllStarted is what a read ahead queued behind a batch waits for (FileJobSource): ready once
// the last file has started, or once the fetcher is cancelled or gone, never before.
TEST_F(BatchFetcherTest, AllStartedIsReadyOnceTheLastFileHasStarted) {
  source_->Hold(files_[4].key);
  source_->Hold(files_[5].key);
  BatchFetcher fetcher(*source_, SourceKind::kLocal, files_, Options(1), work_->path());
  const std::shared_future<void> started = fetcher.AllStarted();
  ASSERT_TRUE(testing::WaitFor([&] { return source_->started() == 5; }));
  // File 4 is in flight, file 5 not started.
  EXPECT_EQ(started.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  source_->Release(files_[4].key);
  started.wait();  // file 5 is taken once file 4 ends
  // Ready as the fetcher takes file 5, its download a moment later.
  EXPECT_TRUE(testing::WaitFor([&] { return source_->started() == 6; }));
  source_->Release(files_[5].key);
  EXPECT_TRUE(fetcher.Wait(5).status.ok());
}

TEST_F(BatchFetcherTest, AllStartedIsReadyOnceCancelledAndOutlivesTheFetcher) {
  source_->Hold(files_[0].key);
  auto fetcher = std::make_unique<BatchFetcher>(*source_, SourceKind::kLocal, files_, Options(1),
                                                work_->path());
  const std::shared_future<void> started = fetcher->AllStarted();
  ASSERT_TRUE(testing::WaitFor([&] { return source_->started() == 1; }));
  EXPECT_EQ(started.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  fetcher->Cancel();
  started.wait();
  source_->Release(files_[0].key);
  fetcher.reset();
  started.wait();
  const std::vector<source::FileInfo> none;
  BatchFetcher empty(*source_, SourceKind::kLocal, none, Options(1), work_->path());
  EXPECT_EQ(empty.AllStarted().wait_for(std::chrono::seconds(0)), std::future_status::ready);
}

// The destructor lets the download in flight end and starts none of the files after it.
TEST_F(BatchFetcherTest, DestroyingAFetcherStartsNothingMore) {
  source_->Hold(files_[1].key);
  auto fetcher = std::make_unique<BatchFetcher>(*source_, SourceKind::kLocal, files_, Options(1),
                                                work_->path());
  ASSERT_TRUE(fetcher->Wait(0).status.ok());
  ASSERT_TRUE(testing::WaitFor([&] { return source_->started() == 2; }));
  // File 1 is released only once the destructor has begun: its Cancel is what ends a Wait on
  // file 3, which no download can reach while file 1 is held.
  BatchFetcher* raw = fetcher.get();
  std::atomic<bool> destroying{false};
  std::thread waiter([&] {
    EXPECT_EQ(raw->Wait(3).status.code(), StatusCode::kCancelled);
    destroying = true;
  });
  std::thread release([&] {
    EXPECT_TRUE(testing::WaitFor([&] { return destroying.load(); }));
    source_->Release(files_[1].key);
  });
  fetcher.reset();  // returns once file 1's download ends
  release.join();
  waiter.join();
  EXPECT_EQ(source_->started(), 2);
}

TEST_F(BatchFetcherTest, LargeFilesDownloadOneAtATimeSmallOnesInParallel) {
  auto started_while_first_held = [&](uint64_t max_bytes_in_flight) {
    source_ = std::make_unique<GatedSource>(std::move(source_));  // fresh counters
    source_->Hold(files_[0].key);
    FetchOptions options = Options(4);
    options.max_bytes_in_flight = max_bytes_in_flight;
    BatchFetcher fetcher(*source_, SourceKind::kLocal, files_, options, work_->path());
    // Later files start while file 0 is held only if the budget allows them: all of them soon,
    // or none within 100 ms.
    testing::WaitFor([&] { return source_->started() == static_cast<int>(files_.size()); },
                     std::chrono::milliseconds(100));
    const int started = source_->started();
    source_->Release(files_[0].key);
    for (size_t i = 0; i < files_.size(); ++i)
      EXPECT_TRUE(fetcher.Wait(i).status.ok());
    return started;
  };
  EXPECT_EQ(started_while_first_held(/*max_bytes_in_flight=*/1), 1);
  EXPECT_EQ(started_while_first_held(/*max_bytes_in_flight=*/1 << 20), 6);
}

// A batch and its read ahead share their job's download slots: together no more downloads in
// flight than the slots, and a freed slot goes to a waiter of the earlier keys although the
// later batch asked first (a read ahead starts before its batch's own fetcher).
TEST_F(BatchFetcherTest, FetchersSharingSlotsStayWithinThemEarlierKeysFirst) {
  FetchOptions options = Options(2);
  options.slots = std::make_shared<DownloadSlots>(1);
  // The file lists and directories outlive the fetchers (declared first).
  std::vector<std::vector<source::FileInfo>> parts;
  std::vector<std::unique_ptr<WorkDir>> dirs;
  auto fetch = [&](size_t from, size_t to) {
    parts.emplace_back(files_.begin() + from, files_.begin() + to);
    auto work = WorkDirs::Under(dir_.Join("w" + std::to_string(from)))->Take();
    EXPECT_TRUE(work.ok());
    dirs.push_back(std::move(work).value());
    return std::make_unique<BatchFetcher>(*source_, SourceKind::kLocal, parts.back(), options,
                                          dirs.back()->path());
  };
  parts.reserve(3);
  source_->Hold(files_[0].key);
  auto holder = fetch(0, 1);  // takes the one slot and keeps it
  ASSERT_TRUE(testing::WaitFor([&] { return source_->started() == 1; }));
  auto ahead = fetch(3, 6);  // waits first: its three files, a thread each
  ASSERT_TRUE(testing::WaitFor([&] { return options.slots->waiters() == 3; }));
  auto batch = fetch(1, 3);
  ASSERT_TRUE(testing::WaitFor([&] { return options.slots->waiters() == 5; }));
  source_->Release(files_[0].key);
  for (size_t i = 0; i < 2; ++i)
    EXPECT_TRUE(batch->Wait(i).status.ok());
  for (size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(ahead->Wait(i).status.ok());
  // One at a time, the batch's files before any of the read ahead's.
  const std::vector<std::string> order = source_->start_order();
  ASSERT_EQ(order.size(), 6u);
  EXPECT_EQ(std::set<std::string>(order.begin() + 1, order.begin() + 3),
            (std::set<std::string>{files_[1].key, files_[2].key}));
  EXPECT_EQ(source_->most_in_flight(), 1);
}

// A fetcher whose threads wait for a slot held elsewhere ends at once when cancelled: its files
// report CANCELLED and its destructor does not wait for the slot.
TEST_F(BatchFetcherTest, AFetcherWaitingForASharedSlotIsCancelled) {
  FetchOptions options = Options(1);
  options.slots = std::make_shared<DownloadSlots>(1);
  const std::vector<source::FileInfo> first(files_.begin(), files_.begin() + 1);
  const std::vector<source::FileInfo> rest(files_.begin() + 1, files_.end());
  source_->Hold(files_[0].key);
  BatchFetcher holder(*source_, SourceKind::kLocal, first, options, work_->path());
  ASSERT_TRUE(testing::WaitFor([&] { return source_->started() == 1; }));
  auto work_rest = WorkDirs::Under(dir_.path() + "/work_rest")->Take();
  ASSERT_TRUE(work_rest.ok());
  auto waiting = std::make_unique<BatchFetcher>(*source_, SourceKind::kLocal, rest, options,
                                                (*work_rest)->path());
  waiting->Cancel();
  for (size_t i = 0; i < rest.size(); ++i) {
    const FetchedFile& f = waiting->Wait(i);
    EXPECT_EQ(f.status.code(), StatusCode::kCancelled);
    EXPECT_NE(f.status.message().find(rest[i].key), std::string::npos);
  }
  waiting.reset();
  source_->Release(files_[0].key);
  EXPECT_TRUE(holder.Wait(0).status.ok());
  EXPECT_EQ(source_->started(), 1);
}

TEST_F(BatchFetcherTest, AFailedFileIsReportedAndTheOthersStillArrive) {
  std::filesystem::remove(files_[2].key);
  std::vector<FetchedFile> each;
  {
    BatchFetcher fetcher(*source_, SourceKind::kLocal, files_, Options(4), work_->path());
    for (size_t i = 0; i < files_.size(); ++i)
      each.push_back(fetcher.Wait(i));
  }
  ASSERT_EQ(each.size(), 6u);
  for (size_t i = 0; i < each.size(); ++i) {
    if (i == 2) {
      EXPECT_EQ(each[i].status.code(), StatusCode::kNotFound);
      EXPECT_TRUE(each[i].download_failed);
      EXPECT_NE(each[i].status.message().find(files_[2].key), std::string::npos);
    } else {
      EXPECT_TRUE(each[i].status.ok()) << each[i].status.ToString();
    }
  }
  auto all = FetchFiles(*source_, SourceKind::kLocal, files_, Options(4), work_->path());
  EXPECT_EQ(all.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace millrace::load
