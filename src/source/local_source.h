// LocalSource: a FileSource over a local directory tree, for patterns like
// "/data/in/*.csv" or "/data/in/{a,b}/**/*.json".
//
// Contract (beyond file_source.h)
// - The glob applies to the whole absolute path. List walks only from the directory of the
//   pattern's literal prefix, descends only into directories under which a path could match
//   and that can hold keys > start_after, never into hidden directories ('.' names) or
//   symlinked ones (no cycles); symlinks to files are followed. A missing start directory
//   lists nothing (like an empty S3 prefix); an unreadable directory fails the listing.
// - Settle rule (files still being written are not taken): a file is taken only when
//     (1) its last change — the later of mtime and ctime — is at least settle_time old by the
//         injected Clock's wall time (ctime because a copy that preserves an old mtime, like
//         `cp -p` or rsync -t, still bumps ctime while writing and when setting the mtime),
//     and
//     (2) its size, mtime, ctime and inode are equal on two looks: the walk's stat and a
//         second stat just before it is returned.
//   The listing stops before the first matching file that fails the rule (unsettled_files
//   counts the held-back ones), so a late-settling file is never skipped by the offset.
//   Writers that want their file taken at once write it under a hidden or temporary name
//   (".x.csv", "x.csv.tmp", "x.csv.part", "x.csv._COPYING_"), which is never listed, and
//   rename it into place. With a watcher, a file it saw closed after writing or renamed into
//   place, unchanged since (LocalWatcher::Landed), passes (1) at once; (2) still applies.
// - ETag: "<size>-<mtime ns>-<inode>" in hex.
// - Download copies the listed version: it fails with ABORTED naming the file if the size,
//   mtime or inode differ from the listing (before, during or after the copy), NOT_FOUND if
//   the file is gone, PERMISSION_DENIED / IO_ERROR naming it if it cannot be read; the
//   partial copy is removed.
// - Place reads in place: it opens the file the key resolves to (under the roots; the errors
//   are Download's), checks through the open file that it is the listed version (ABORTED
//   otherwise), and puts at local_path a symlink to /proc/self/fd/N, which leads DuckDB (it may
//   read the work directory only) to that open file whatever its path names meanwhile. The
//   PlacedFile keeps it open; its CheckUnchanged fails ABORTED when the open file's size or
//   mtime moved (written in place during the read; not ctime, which removing or renaming the
//   file moves too) or the key now names
//   another file (replaced: the version read is not the one to load); a file removed after
//   the read is fine. The user's file is only read: no link count or ctime moves. Where the
//   file system has no such path (a test's), Place copies, as Download.
// - Confinement: see LocalSourceOptions::roots.
// - Events (LocalSourceOptions::watcher): Covers says whether a path the watcher reports
//   concerns the source (its glob matches the file, or could match below the directory).
// - Thread-safety: all methods may be called concurrently (the source holds no mutable state).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/file_rewrite.h"
#include "source/file_source.h"
#include "source/glob.h"
#include "source/local_file_system.h"
#include "source/local_watcher.h"

namespace millrace::source {

struct LocalSourceOptions {
  Clock* clock = Clock::Real();  // must outlive the source
  std::chrono::milliseconds settle_time{1000};
  LocalFileSystem* file_system = nullptr;  // nullptr: the real one; must outlive the source
  // The directories the source may read under (canonical absolute paths, see ResolveRoots);
  // empty: anywhere. A pattern with a "." or ".." segment, or whose literal directory is not
  // under a root, is refused at Create; a file that resolves (symlinks followed) outside every
  // root is refused at Download. Both are PERMISSION_DENIED naming the path and the roots.
  std::vector<std::string> roots;
  // Null: none. Else the source's directory tree is watched while it lives (local_watcher.h),
  // so that its job is woken when a file lands; the settle rule still applies.
  LocalWatcher* watcher = nullptr;
};

// The canonical paths of `roots` (each must be an existing directory), for
// LocalSourceOptions::roots. INVALID_ARGUMENT names a root that is not.
Result<std::vector<std::string>> ResolveRoots(const std::vector<std::string>& roots);

class LocalSource final : public FileSource {
 public:
  // `pattern` must be an absolute path pattern.
  static Result<std::unique_ptr<LocalSource>> Create(std::string_view pattern,
                                                     LocalSourceOptions options);

  Result<Listing> List(const ListOptions& options) override;
  Result<FileInfo> Stat(const std::string& key) override;
  Status Download(const FileInfo& file, const std::string& local_path) override;
  Result<std::unique_ptr<PlacedFile>> Place(const FileInfo& file,
                                            const std::string& local_path) override;
  std::string Describe() const override { return glob_.pattern(); }
  bool Covers(const std::string& path, bool directory) const override;

  // True for names a writer uses while a file is incomplete (never listed).
  static bool IsHiddenOrTemporary(std::string_view name);

 private:
  struct Candidate {
    std::string path;
    FileStat stat;
    bool unreadable = false;  // could not be looked at (Walk): listed as it is, reading it fails
  };

  LocalSource(Glob glob, std::string root, LocalSourceOptions options)
      : glob_(std::move(glob)), root_(std::move(root)), options_(options) {}

  // PERMISSION_DENIED unless canonical `path` lies under a root (or there are none).
  Status CheckUnderRoots(const std::string& path, const std::string& shown) const;
  // Adds the matching entries under `directory` to `out`; a subdirectory that cannot be listed
  // is added to `unlisted` ("<path>: <why>") and passed over.
  Status Walk(const std::string& directory, const std::string& start_after,
              std::vector<Candidate>* out, std::vector<std::string>* unlisted) const;
  bool Settled(const std::string& path, const FileStat& stat) const;
  FileInfo ToFileInfo(const std::string& path, const FileStat& stat) const;
  Status CopyListedVersion(const FileInfo& file, ReadableFile* in, FileRewrite& out) const;

  const Glob glob_;
  const std::string root_;  // directory the walk starts from, without trailing '/'
  const LocalSourceOptions options_;
  std::unique_ptr<LocalWatcher::Handle> watch_;  // null without a watcher
};

// The ETag a local file's state gets (see the contract).
std::string LocalEtag(const FileStat& stat);

}  // namespace millrace::source
