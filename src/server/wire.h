// Internal to the server module: the integer and string encodings of the MySQL protocol
// (little-endian fixed-width integers, length-encoded integers and strings, NUL-terminated
// strings).
//
// Contract
// - WireWriter appends to a string it owns; it cannot fail.
// - WireReader reads from a view it does not own, never past its end: each read returns false
//   on truncation or an invalid encoding and leaves the reader positioned at the failure.
// - Not thread-safe; values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace millrace::server {

class WireWriter {
 public:
  WireWriter& Int1(uint8_t v);
  WireWriter& Int2(uint16_t v);
  WireWriter& Int3(uint32_t v);
  WireWriter& Int4(uint32_t v);
  WireWriter& Int8(uint64_t v);
  WireWriter& LenEncInt(uint64_t v);
  WireWriter& LenEncString(std::string_view s);
  WireWriter& NulString(std::string_view s);
  WireWriter& Raw(std::string_view s);
  WireWriter& Zeros(size_t n);
  // The NULL cell of a text row (0xFB).
  WireWriter& Null();

  const std::string& data() const { return buf_; }
  std::string Take() { return std::move(buf_); }
  size_t size() const { return buf_.size(); }
  void Clear() { buf_.clear(); }

 private:
  WireWriter& Fixed(uint64_t v, int bytes);

  std::string buf_;
};

class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}

  bool Int1(uint8_t* v);
  bool Int2(uint16_t* v);
  bool Int3(uint32_t* v);
  bool Int4(uint32_t* v);
  // A little-endian integer of `n` bytes (1 to 8).
  bool IntN(size_t n, uint64_t* v);
  bool LenEncInt(uint64_t* v);
  bool LenEncString(std::string_view* s);
  bool NulString(std::string_view* s);
  bool Bytes(size_t n, std::string_view* s);
  bool Skip(size_t n);
  // Everything left.
  std::string_view Rest();

  size_t remaining() const { return data_.size() - pos_; }
  bool done() const { return pos_ == data_.size(); }

 private:
  bool Fixed(size_t n, uint64_t* v);
  template <typename T>
  bool FixedAs(size_t n, T* v);

  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace millrace::server
