// Making a downloaded or local file readable by DuckDB's readers: decompressed by our own
// codecs, within a bound, or linked under a plain name.
//
// Contract
// - PrepareLocalFile makes a file readable by DuckDB's readers: a compressed file (any codec)
//   is decompressed into `work_dir` — DuckDB's own gzip and zstd readers accept truncated
//   streams silently, ours do not; a plain file whose name suggests compression gets a plain
//   name. Errors say what is wrong with the stream (a truncated or corrupt one is DATA_LOSS),
//   not which file: the caller names it by its key (read_error.h), never by a work path.
// - DecompressFile reads concatenated streams (members) whole, and fails a stream that is
//   truncated, corrupt or followed by bytes that are not another stream (DATA_LOSS,
//   BadFile::kCorruptStream) and one that expands past its bound
//   (RESOURCE_EXHAUSTED, BadFile::kDecompressionBomb); what it wrote is then removed.
// - Thread-safety: pure functions over the files they are given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "load/file_params.h"

namespace millrace::load {

// `max_decompressed_bytes`: the bound of a compressed file's expansion (nullopt: the default
// of DecompressionBudget).
Result<std::string> PrepareLocalFile(const std::string& path, std::optional<Compression> declared,
                                     const std::string& work_dir, int index,
                                     std::optional<uint64_t> max_decompressed_bytes = std::nullopt);

// How many bytes a compressed file of `compressed_size` may expand to in `work_dir`: `given`,
// else 200 times its size and at least 256 MiB; never more than 90% of the free space of
// the work directory's file system (a decompression bomb fails its file, not the disk).
uint64_t DecompressionBudget(uint64_t compressed_size, const std::string& work_dir,
                             std::optional<uint64_t> given);

// Decompresses `in` (bz2, lz4frame, deflate/zlib, gzip or zstd) into `out`; RESOURCE_EXHAUSTED
// naming the file once the output passes `max_bytes` (the partial output is removed).
Status DecompressFile(Compression compression, const std::string& in, const std::string& out,
                      uint64_t max_bytes = UINT64_MAX);

}  // namespace millrace::load
