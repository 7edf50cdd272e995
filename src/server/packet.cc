#include "server/packet.h"

namespace millrace::server {
namespace {

// The payload length in a fragment's 4-byte header.
size_t FragmentLength(const uint8_t* header) {
  return header[0] | (header[1] << 8) | (size_t{header[2]} << 16);
}

}  // namespace

void PacketDecoder::Append(std::string_view bytes) {
  // Compact lazily so a long stream of small packets does not grow the buffer.
  if (offset_ > 0 && offset_ * 2 >= buffer_.size()) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  buffer_.append(bytes);
}

Result<std::optional<Packet>> PacketDecoder::Next(uint8_t* sequence) {
  while (buffer_.size() - offset_ >= 4) {
    const auto* header = reinterpret_cast<const uint8_t*>(buffer_.data() + offset_);
    const size_t length = FragmentLength(header);
    const uint8_t id = header[3];
    if (id != *sequence) {
      return Status::DataLoss("Got packets out of order: expected sequence id " +
                              std::to_string(*sequence) + ", got " + std::to_string(id));
    }
    if (pending_.payload.size() + length > max_payload_) {
      return Status::ResourceExhausted("Got a packet bigger than 'max_allowed_packet' bytes (" +
                                       std::to_string(max_payload_) + ")");
    }
    if (buffer_.size() - offset_ - 4 < length) return std::optional<Packet>();
    if (!started_) pending_.sequence_id = id;
    started_ = true;
    pending_.payload.append(buffer_, offset_ + 4, length);
    offset_ += 4 + length;
    ++*sequence;
    if (length < kMaxFragment) {
      Packet packet = std::move(pending_);
      pending_ = Packet();
      started_ = false;
      return std::optional<Packet>(std::move(packet));
    }
  }
  return std::optional<Packet>();
}

size_t PacketDecoder::Missing() const {
  const size_t have = buffer_.size() - offset_;
  if (have < 4) return 4 - have;
  const size_t length = FragmentLength(reinterpret_cast<const uint8_t*>(buffer_.data() + offset_));
  return have - 4 >= length ? 0 : length + 4 - have;
}

void AppendPacket(std::string_view payload, uint8_t* sequence, std::string* out) {
  while (true) {
    const size_t length = payload.size() < kMaxFragment ? payload.size() : kMaxFragment;
    out->push_back(static_cast<char>(length & 0xff));
    out->push_back(static_cast<char>((length >> 8) & 0xff));
    out->push_back(static_cast<char>((length >> 16) & 0xff));
    out->push_back(static_cast<char>((*sequence)++));
    out->append(payload.substr(0, length));
    payload.remove_prefix(length);
    if (length < kMaxFragment) return;
  }
}

}  // namespace millrace::server
