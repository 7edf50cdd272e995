// ListingBuilder: applies ListOptions' limits to matching files offered in key order; shared by
// the S3 and local sources so both cut batches the same way.
#pragma once

#include <string>
#include <utility>

#include "source/file_source.h"

namespace millrace::source {

class ListingBuilder {
 public:
  explicit ListingBuilder(const ListOptions& options) : options_(options) {}

  // True once max_files files were taken or the bytes taken reached max_bytes.
  bool full() const {
    return listing_.files.size() >= options_.max_files || bytes_ >= options_.max_bytes;
  }

  // Offers the next matching file. Taken while not full(); past that it only marks `more`.
  void Offer(FileInfo file) {
    listing_.last_matching_key = file.key;
    if (full()) {
      listing_.more = true;
      return;
    }
    bytes_ += file.size;
    listing_.files.push_back(std::move(file));
  }

  // A matching key seen and not offered (held back, or past what was read).
  void SawMatching(const std::string& key) { listing_.last_matching_key = key; }
  void set_more() { listing_.more = true; }
  void HoldBack() { ++listing_.unsettled_files; }

  Listing Finish() && { return std::move(listing_); }

 private:
  const ListOptions& options_;
  uint64_t bytes_ = 0;
  Listing listing_;
};

}  // namespace millrace::source
