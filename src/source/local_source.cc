#include "source/local_source.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <vector>

#include "source/listing_builder.h"

namespace millrace::source {
namespace {

constexpr size_t kCopyBufferBytes = 1 << 20;

Clock::WallTime ToWallTime(int64_t ns) {
  return Clock::WallTime(
      std::chrono::duration_cast<Clock::WallTime::duration>(std::chrono::nanoseconds(ns)));
}

// Every string that starts with `prefix` is <= `bound`: nothing under it is past an offset.
bool AllExtensionsAtMost(const std::string& prefix, const std::string& bound) {
  return prefix < bound && !bound.starts_with(prefix);
}

}  // namespace

std::string LocalEtag(const FileStat& stat) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%llx-%llx-%llx", static_cast<unsigned long long>(stat.size),
                static_cast<unsigned long long>(stat.mtime_ns),
                static_cast<unsigned long long>(stat.inode));
  return buf;
}

bool LocalSource::IsHiddenOrTemporary(std::string_view name) {
  return name.starts_with('.') || name.ends_with(".tmp") || name.ends_with(".part") ||
         name.ends_with("._COPYING_");
}

Result<std::unique_ptr<LocalSource>> LocalSource::Create(std::string_view pattern,
                                                         LocalSourceOptions options) {
  if (!pattern.starts_with('/')) {
    return Status::InvalidArgument("local file pattern \"" + std::string(pattern) +
                                   "\" is not an absolute path");
  }
  MR_ASSIGN_OR_RETURN(Glob glob, Glob::Compile(pattern));
  if (options.file_system == nullptr) options.file_system = LocalFileSystem::Posix();
  if (options.clock == nullptr) options.clock = Clock::Real();
  // The walk starts at the deepest directory every match lies in.
  const std::string& prefix = glob.LiteralPrefix();
  std::string root = prefix.substr(0, prefix.rfind('/'));
  if (root.empty()) root = "/";
  auto source =
      std::unique_ptr<LocalSource>(new LocalSource(std::move(glob), std::move(root), options));
  if (!options.roots.empty()) {
    for (std::string_view rest = pattern; !rest.empty();) {
      const size_t slash = rest.find('/');
      const std::string_view segment = rest.substr(0, slash);
      if (segment == "." || segment == "..") {
        return Status::PermissionDenied("local file pattern \"" + std::string(pattern) +
                                        "\" has a \"" + std::string(segment) +
                                        "\" segment; give the path under the local root as it is");
      }
      rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    }
    // The walk's directory, symlinks resolved when it exists (a missing one lists nothing).
    auto resolved = options.file_system->Resolve(source->root_);
    MR_RETURN_IF_ERROR(
        source->CheckUnderRoots(resolved.ok() ? *resolved : source->root_, std::string(pattern)));
  }
  if (options.watcher != nullptr) {
    // Only where the glob could match: a pattern rooted high up is not a watch of everything.
    source->watch_ = options.watcher->Watch(source->root_,
                                            [glob = &source->glob_](const std::string& directory) {
                                              return glob->CouldMatchWithPrefix(directory + "/");
                                            });
  }
  return source;
}

Result<std::vector<std::string>> ResolveRoots(const std::vector<std::string>& roots) {
  std::vector<std::string> resolved;
  for (const std::string& root : roots) {
    auto path = LocalFileSystem::Posix()->Resolve(root);
    auto stat = LocalFileSystem::Posix()->Stat(root);
    if (!path.ok() || !stat.ok() || !stat->is_directory) {
      return Status::InvalidArgument("local root " + root + " is not an existing directory");
    }
    resolved.push_back(*path);
  }
  return resolved;
}

Status LocalSource::CheckUnderRoots(const std::string& path, const std::string& shown) const {
  if (options_.roots.empty()) return Status::Ok();
  for (const std::string& root : options_.roots) {
    if (path == root || (path.starts_with(root) && (root == "/" || path[root.size()] == '/'))) {
      return Status::Ok();
    }
  }
  std::string roots;
  for (const std::string& root : options_.roots)
    roots += (roots.empty() ? "" : ", ") + root;
  return Status::PermissionDenied(shown + (shown == path ? "" : " (" + path + ")") +
                                  " is outside the local roots (" + roots +
                                  "); the server's --local-root flag names them");
}

Status LocalSource::Walk(const std::string& directory, const std::string& start_after,
                         std::vector<Candidate>* out, std::vector<std::string>* unlisted) const {
  auto entries = options_.file_system->ListDirectory(directory);
  if (!entries.ok()) {
    // A directory removed while we walk held nothing we could take.
    if (entries.status().code() == StatusCode::kNotFound) return Status::Ok();
    // The root that cannot be listed fails the listing; one subdirectory must not hold up every
    // other file: it is passed over, and reported.
    if (directory == root_) return entries.status();
    unlisted->push_back(entries.status().message());
    return Status::Ok();
  }
  const std::string base = directory == "/" ? "" : directory;
  for (const DirectoryEntry& entry : *entries) {
    if (IsHiddenOrTemporary(entry.name)) continue;
    std::string path = base + "/" + entry.name;
    auto stat = options_.file_system->Stat(path);
    if (!stat.ok()) {
      // Gone since readdir, or a dangling symlink: not a file to take.
      if (stat.status().code() == StatusCode::kNotFound) continue;
      // One entry that cannot be looked at (a symlink loop, no permission) must not stop the
      // listing of every other file: a matching one is listed, and reading it fails, as that
      // file's own error (quarantined with on_error = skip_file); another is not a file the
      // job reads.
      if (path > start_after && glob_.Matches(path)) {
        out->push_back({std::move(path), FileStat{}, /*unreadable=*/true});
      }
      continue;
    }
    if (stat->is_directory) {
      const std::string as_prefix = path + "/";
      if (entry.is_symlink || !glob_.CouldMatchWithPrefix(as_prefix) ||
          AllExtensionsAtMost(as_prefix, start_after)) {
        continue;
      }
      MR_RETURN_IF_ERROR(Walk(path, start_after, out, unlisted));
    } else if (path > start_after && glob_.Matches(path)) {
      // A FIFO, socket or device that matches is not skipped in silence: reading it fails as
      // that file's own error ("not a regular file"), like an entry that cannot be looked at.
      out->push_back({std::move(path), *stat, /*unreadable=*/!stat->is_regular});
    }
  }
  return Status::Ok();
}

bool LocalSource::Covers(const std::string& path, bool directory) const {
  if (directory) return glob_.CouldMatchWithPrefix(path + "/");
  return glob_.Matches(path);
}

bool LocalSource::Settled(const std::string& path, const FileStat& stat) const {
  // Closed after writing or renamed into place, and unchanged since: whole now.
  if (options_.watcher != nullptr &&
      options_.watcher->Landed(path, std::max(stat.mtime_ns, stat.ctime_ns))) {
    return true;
  }
  const auto changed = ToWallTime(std::max(stat.mtime_ns, stat.ctime_ns));
  return options_.clock->WallNow() - changed >= options_.settle_time;
}

FileInfo LocalSource::ToFileInfo(const std::string& path, const FileStat& stat) const {
  return FileInfo{path, LocalEtag(stat), stat.size, ToWallTime(stat.mtime_ns)};
}

Result<Listing> LocalSource::List(const ListOptions& options) {
  std::vector<Candidate> candidates;
  std::vector<std::string> unlisted;
  auto root = options_.file_system->Stat(root_);
  if (!root.ok() && root.status().code() != StatusCode::kNotFound) return root.status();
  if (root.ok() && root->is_directory &&
      (root_ == "/" || !AllExtensionsAtMost(root_ + "/", options.start_after))) {
    MR_RETURN_IF_ERROR(Walk(root_, options.start_after, &candidates, &unlisted));
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.path < b.path; });

  ListingBuilder builder(options);
  bool holding_back = false;
  for (Candidate& candidate : candidates) {
    if (holding_back) {
      builder.SawMatching(candidate.path);
      builder.HoldBack();
      continue;
    }
    if (builder.full()) {  // only marks `more` and the last key
      builder.Offer(ToFileInfo(candidate.path, candidate.stat));
      continue;
    }
    // Nothing to settle on: it never becomes readable by waiting.
    if (candidate.unreadable) {
      builder.Offer(ToFileInfo(candidate.path, candidate.stat));
      continue;
    }
    bool settled = Settled(candidate.path, candidate.stat);
    if (settled) {  // second look
      auto again = options_.file_system->Stat(candidate.path);
      if (!again.ok()) {
        if (again.status().code() == StatusCode::kNotFound) continue;  // deleted meanwhile
        return again.status();
      }
      settled = again->SameVersion(candidate.stat);
    }
    if (!settled) {
      holding_back = true;
      builder.SawMatching(candidate.path);
      builder.HoldBack();
      continue;
    }
    builder.Offer(ToFileInfo(candidate.path, candidate.stat));
  }
  Listing listing = std::move(builder).Finish();
  listing.unlisted_directories = std::move(unlisted);
  return listing;
}

Result<FileInfo> LocalSource::Stat(const std::string& key) {
  if (!glob_.Matches(key)) {
    return Status::InvalidArgument("file " + key + " does not match " + glob_.pattern());
  }
  MR_ASSIGN_OR_RETURN(FileStat stat, options_.file_system->Stat(key));
  if (!stat.is_regular) return Status::InvalidArgument(key + " is not a regular file");
  return ToFileInfo(key, stat);
}

Status LocalSource::CopyListedVersion(const FileInfo& file, ReadableFile* in,
                                      FileRewrite& out) const {
  auto changed = [&](std::string_view how) {
    return Status::Aborted("file " + file.key + " changed since it was listed (" +
                           std::string(how) + ")");
  };
  MR_ASSIGN_OR_RETURN(FileStat before, in->Stat());
  if (LocalEtag(before) != file.etag) return changed("etag " + LocalEtag(before));
  std::vector<char> buffer(kCopyBufferBytes);
  uint64_t copied = 0;
  while (true) {
    MR_ASSIGN_OR_RETURN(size_t got, in->Read(buffer.data(), buffer.size()));
    if (got == 0) break;
    copied += got;
    if (copied > file.size) return changed("grew while copying");
    MR_RETURN_IF_ERROR(out.Write(std::string_view(buffer.data(), got)));
  }
  if (copied != file.size) return changed("shrank while copying");
  // A rewrite in place that kept the size still moves mtime.
  MR_ASSIGN_OR_RETURN(FileStat after, in->Stat());
  if (!after.SameVersion(before)) return changed("modified while copying");
  return Status::Ok();
}

namespace {

// A local file read in place: the file Place opened stays open, so the link DuckDB follows
// (/proc/self/fd/N) leads to that very file even if a directory on its path is swapped for a
// symlink meanwhile.
class LocalPlacedFile final : public PlacedFile {
 public:
  LocalPlacedFile(std::string key, std::unique_ptr<ReadableFile> file, FileStat version,
                  LocalFileSystem* file_system)
      : key_(std::move(key)),
        file_(std::move(file)),
        version_(version),
        file_system_(file_system) {}

  Status CheckUnchanged() override {
    // Size, mtime and inode, not ctime: removing, renaming or linking the file moves its ctime
    // and changes nothing that was read.
    MR_ASSIGN_OR_RETURN(const FileStat now, file_->Stat());
    if (LocalEtag(now) != LocalEtag(version_)) return Changed("written in place");
    auto at_key = file_system_->Stat(key_);
    // Removed after the read: what was read is the listed version, whole.
    if (!at_key.ok() && at_key.status().code() == StatusCode::kNotFound) return Status::Ok();
    MR_RETURN_IF_ERROR(at_key.status());
    // Replaced: the open file was read whole, but the key names a newer version to load.
    if (at_key->inode != version_.inode) return Changed("replaced by another file");
    return Status::Ok();
  }

 private:
  Status Changed(std::string_view how) const {
    return Status::Aborted("file " + key_ + " changed while it was read (" + std::string(how) +
                           "); it is read again");
  }

  const std::string key_;
  const std::unique_ptr<ReadableFile> file_;
  const FileStat version_;
  LocalFileSystem* const file_system_;
};

}  // namespace

Result<std::unique_ptr<PlacedFile>> LocalSource::Place(const FileInfo& file,
                                                       const std::string& local_path) {
  // The file a symlink resolves to is what is read: it must lie under the roots.
  MR_ASSIGN_OR_RETURN(std::string resolved, options_.file_system->Resolve(file.key));
  if (!options_.roots.empty()) MR_RETURN_IF_ERROR(CheckUnderRoots(resolved, file.key));
  // Opened as Download opens it (a FIFO or a file the server may not read fails here, with the
  // same error), and checked to be the listed version through the open file.
  MR_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> in,
                      options_.file_system->OpenForRead(resolved));
  MR_ASSIGN_OR_RETURN(const FileStat version, in->Stat());
  if (LocalEtag(version) != file.etag) {
    return Status::Aborted("file " + file.key + " changed since it was listed (etag " +
                           LocalEtag(version) + ")");
  }
  const std::string pinned = in->PinnedPath();
  Status linked = pinned.empty() ? Status::NotSupported("no path to the open file")
                                 : options_.file_system->Symlink(pinned, local_path);
  if (linked.code() == StatusCode::kNotSupported) {
    MR_RETURN_IF_ERROR(Download(file, local_path));
    return std::unique_ptr<PlacedFile>();
  }
  MR_RETURN_IF_ERROR(linked);
  return std::unique_ptr<PlacedFile>(
      std::make_unique<LocalPlacedFile>(file.key, std::move(in), version, options_.file_system));
}

Status LocalSource::Download(const FileInfo& file, const std::string& local_path) {
  if (!options_.roots.empty()) {
    // A symlink may point out of the roots: the file it resolves to is what would be read.
    MR_ASSIGN_OR_RETURN(std::string resolved, options_.file_system->Resolve(file.key));
    MR_RETURN_IF_ERROR(CheckUnderRoots(resolved, file.key));
  }
  auto in = options_.file_system->OpenForRead(file.key);
  if (!in.ok()) return in.status();
  MR_ASSIGN_OR_RETURN(std::unique_ptr<FileRewrite> out, FileRewrite::Open(local_path));
  // Never a partial copy left behind: unfinished, `out` removes it.
  MR_RETURN_IF_ERROR(CopyListedVersion(file, in->get(), *out));
  return out->Finish();
}

}  // namespace millrace::source
