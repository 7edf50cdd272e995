#include "server/wire.h"

namespace millrace::server {

namespace {

void AppendLittleEndian(std::string* buf, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    buf->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

WireWriter& WireWriter::Fixed(uint64_t v, int bytes) {
  AppendLittleEndian(&buf_, v, bytes);
  return *this;
}

WireWriter& WireWriter::Int1(uint8_t v) {
  return Fixed(v, 1);
}
WireWriter& WireWriter::Int2(uint16_t v) {
  return Fixed(v, 2);
}
WireWriter& WireWriter::Int3(uint32_t v) {
  return Fixed(v, 3);
}
WireWriter& WireWriter::Int4(uint32_t v) {
  return Fixed(v, 4);
}
WireWriter& WireWriter::Int8(uint64_t v) {
  return Fixed(v, 8);
}

WireWriter& WireWriter::LenEncInt(uint64_t v) {
  if (v < 251) return Int1(static_cast<uint8_t>(v));
  if (v < (1u << 16)) return Int1(0xfc).Int2(static_cast<uint16_t>(v));
  if (v < (1u << 24)) return Int1(0xfd).Int3(static_cast<uint32_t>(v));
  return Int1(0xfe).Int8(v);
}

WireWriter& WireWriter::LenEncString(std::string_view s) {
  return LenEncInt(s.size()).Raw(s);
}

WireWriter& WireWriter::NulString(std::string_view s) {
  Raw(s);
  buf_.push_back('\0');
  return *this;
}

WireWriter& WireWriter::Raw(std::string_view s) {
  buf_.append(s);
  return *this;
}

WireWriter& WireWriter::Zeros(size_t n) {
  buf_.append(n, '\0');
  return *this;
}

WireWriter& WireWriter::Null() {
  return Int1(0xfb);
}

bool WireReader::Fixed(size_t n, uint64_t* v) {
  if (remaining() < n) return false;
  uint64_t out = 0;
  for (size_t i = 0; i < n; ++i) {
    out |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
  }
  pos_ += n;
  *v = out;
  return true;
}

template <typename T>
bool WireReader::FixedAs(size_t n, T* v) {
  uint64_t out = 0;
  if (!Fixed(n, &out)) return false;
  *v = static_cast<T>(out);
  return true;
}

bool WireReader::Int1(uint8_t* v) {
  return FixedAs(1, v);
}
bool WireReader::Int2(uint16_t* v) {
  return FixedAs(2, v);
}
bool WireReader::Int3(uint32_t* v) {
  return FixedAs(3, v);
}
bool WireReader::Int4(uint32_t* v) {
  return FixedAs(4, v);
}

bool WireReader::IntN(size_t n, uint64_t* v) {
  return n >= 1 && n <= 8 && Fixed(n, v);
}

bool WireReader::LenEncInt(uint64_t* v) {
  uint8_t first = 0;
  if (!Int1(&first)) return false;
  if (first < 0xfb) {
    *v = first;
    return true;
  }
  switch (first) {
    case 0xfc:
      return Fixed(2, v);
    case 0xfd:
      return Fixed(3, v);
    case 0xfe:
      return Fixed(8, v);
    default:
      return false;  // 0xfb (NULL) and 0xff are not integers
  }
}

bool WireReader::LenEncString(std::string_view* s) {
  const size_t start = pos_;
  uint64_t n = 0;
  if (!LenEncInt(&n) || n > remaining()) {
    pos_ = start;
    return false;
  }
  return Bytes(static_cast<size_t>(n), s);
}

bool WireReader::NulString(std::string_view* s) {
  const size_t nul = data_.find('\0', pos_);
  if (nul == std::string_view::npos) return false;
  *s = data_.substr(pos_, nul - pos_);
  pos_ = nul + 1;
  return true;
}

bool WireReader::Bytes(size_t n, std::string_view* s) {
  if (remaining() < n) return false;
  *s = data_.substr(pos_, n);
  pos_ += n;
  return true;
}

bool WireReader::Skip(size_t n) {
  if (remaining() < n) return false;
  pos_ += n;
  return true;
}

std::string_view WireReader::Rest() {
  std::string_view rest = data_.substr(pos_);
  pos_ = data_.size();
  return rest;
}

}  // namespace millrace::server
