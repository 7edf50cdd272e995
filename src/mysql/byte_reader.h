// Reader: a cursor over the bytes of a binlog event, reading the integer forms MySQL writes
// (little-endian, big-endian, packed), and the bit helpers the row images and metadata use.
//
// Contract
// - Every read checks the bytes are there: it gives nullopt when they are not and never reads
//   past the end. A Reader views the caller's bytes, which must outlive it.
// - BitSet reads bit i of a bitmap, least significant bit of each byte first; the caller checks
//   the bitmap holds it.
// - Thread-safety: a Reader is used by one thread at a time; the functions are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace millrace::mysql {

// A cursor over bytes; every read checks the bytes are there.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}

  bool done() const { return pos_ >= data_.size(); }
  size_t left() const { return data_.size() - pos_; }

  std::optional<std::string_view> Bytes(size_t n) {
    if (left() < n) return std::nullopt;
    std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  // An n-byte little-endian unsigned integer, n <= 8.
  std::optional<uint64_t> Little(size_t n) {
    auto bytes = Bytes(n);
    if (!bytes) return std::nullopt;
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;)
      v = v << 8 | static_cast<uint8_t>((*bytes)[i]);
    return v;
  }
  // An n-byte big-endian unsigned integer, n <= 8: the temporal, DECIMAL and BIT formats.
  std::optional<uint64_t> Big(size_t n) {
    auto bytes = Bytes(n);
    if (!bytes) return std::nullopt;
    uint64_t v = 0;
    for (char c : *bytes)
      v = v << 8 | static_cast<uint8_t>(c);
    return v;
  }
  // A packed (length-encoded) integer; 251, the NULL marker, is not one.
  std::optional<uint64_t> Packed() {
    auto first = Little(1);
    if (!first) return std::nullopt;
    if (*first < 251) return first;
    if (*first == 252) return Little(2);
    if (*first == 253) return Little(3);
    if (*first == 254) return Little(8);
    return std::nullopt;
  }
  std::optional<std::string_view> PackedBytes() {
    auto n = Packed();
    if (!n) return std::nullopt;
    return Bytes(*n);
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

inline bool BitSet(std::string_view bitmap, size_t i) {
  return (static_cast<uint8_t>(bitmap[i / 8]) >> (i % 8)) & 1;
}

// n sign-extended from `bits` bits.
inline int64_t SignExtend(uint64_t n, int bits) {
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((n ^ sign) - sign);
}

}  // namespace millrace::mysql
