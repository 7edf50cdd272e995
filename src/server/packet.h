// MySQL packet framing: a 3-byte little-endian payload length, a 1-byte sequence id, the
// payload. Payloads of 2^24-1 bytes or more travel as several packets, each full one followed
// by the next, ending with a shorter (possibly empty) one.
//
// Contract
// - PacketDecoder turns received bytes, in whatever pieces they arrive, into logical packets
//   (split payloads joined). It never buffers more than one fragment header past the
//   configured maximum: a length header that would take the payload over `max_payload` fails
//   at once with RESOURCE_EXHAUSTED (MySQL error 1153), before any of it is stored.
// - Sequence ids: each fragment must carry the expected id (`*sequence`, incremented per
//   fragment, modulo 256); a mismatch is DATA_LOSS (MySQL error 1156, packets out of order).
// - After an error the decoder is unusable; the connection must be closed.
// - AppendPacket frames a payload for sending, splitting as required, and advances the
//   sequence id per fragment.
// - Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace millrace::server {

inline constexpr size_t kMaxFragment = 0xffffff;

struct Packet {
  uint8_t sequence_id = 0;  // of the first fragment
  std::string payload;
};

class PacketDecoder {
 public:
  explicit PacketDecoder(size_t max_payload) : max_payload_(max_payload) {}

  void Append(std::string_view bytes);
  // The next logical packet; nullopt when more bytes are needed.
  Result<std::optional<Packet>> Next(uint8_t* sequence);
  // True when bytes of a packet not yet complete are buffered.
  bool HasPartial() const { return buffer_.size() > offset_ || started_; }
  // Bytes missing from the fragment being received (its 4-byte header first): receiving no
  // more than this never takes bytes past the end of the packet.
  size_t Missing() const;

 private:
  size_t max_payload_;
  std::string buffer_;
  size_t offset_ = 0;  // start of the unconsumed bytes in buffer_
  Packet pending_;     // fragments of the current logical packet
  bool started_ = false;
};

// Appends `payload` framed as one or more packets to `out`.
void AppendPacket(std::string_view payload, uint8_t* sequence, std::string* out);

}  // namespace millrace::server
