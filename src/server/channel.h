// Internal to the server module: one client connection's socket, read and written in MySQL
// packets with deadlines, from the session's own thread.
//
// Contract
// - The channel owns the connection's io_context and socket. Read and Flush run that
//   io_context on the calling thread until the operation completes or its timeout passes (the
//   pattern of asio's blocking_tcp_client example): a timeout is DEADLINE_EXCEEDED, end of
//   stream or a socket error UNAVAILABLE, a decoder error (packet.h) its own code.
// - Write frames a payload into the output buffer with the current sequence id; Flush sends
//   the buffer. Reading a packet sets the next sequence id; ResetSequence starts a command.
// - Other threads may only Post() work to the channel's io_context; it runs during the next
//   Read or Flush on the owning thread, so it may safely touch the socket.
// - TLS: StartTls runs the server side of a TLS handshake on the socket (within its timeout,
//   like a Read); from then on Read and Flush go through the TLS stream, with the same
//   deadlines and errors. Without TLS they use the socket directly, as before. The byte
//   counters count MySQL packet bytes, before encryption.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "asio.hpp"
#include "common/metrics.h"
#include "common/result.h"
#include "server/packet.h"

namespace asio::ssl {
class context;
}  // namespace asio::ssl

namespace millrace::server {

class Channel {
 public:
  Channel(std::unique_ptr<asio::io_context> io, asio::ip::tcp::socket socket,
          size_t max_packet_size, Counter* bytes_received, Counter* bytes_sent);
  ~Channel();

  // The next packet; `idle_timeout` applies until its first byte, `timeout` after. With
  // `exact`, nothing past the end of the packet is taken from the socket: what follows (a TLS
  // handshake after an SSL request) stays there for StartTls.
  Result<Packet> Read(std::chrono::milliseconds idle_timeout, std::chrono::milliseconds timeout,
                      bool exact = false);
  void Write(std::string_view payload);
  size_t buffered() const { return out_.size(); }
  Status Flush(std::chrono::milliseconds timeout);
  void ResetSequence() { sequence_ = 0; }

  // The server side of a TLS handshake on the socket; `context` must outlive the channel.
  // Bytes already received and not yet read as packets would be lost: it fails if there are
  // any (read the SSL request with `exact`).
  Status StartTls(asio::ssl::context& context, std::chrono::milliseconds timeout);
  bool tls() const { return tls_ != nullptr; }

  // Runs `fn` on the owning thread during its next Read or Flush. Thread-safe.
  void Post(std::function<void()> fn);
  // Closes the socket; pending and later operations fail. Owning thread (or Post) only.
  void Close();
  // "127.0.0.1:54321", or "unknown".
  std::string Peer() const;
  // The socket's descriptor, for poll() by the session's watch (mysql_session.h); -1 once
  // closed. Owning thread only.
  int fd() { return socket_.is_open() ? socket_.native_handle() : -1; }

 private:
  using Completion = std::function<void(const asio::error_code&, size_t)>;
  asio::error_code Run(const std::function<void(Completion)>& start,
                       std::chrono::milliseconds timeout, size_t* bytes);

  std::unique_ptr<asio::io_context> io_;  // declared first: outlives the socket
  asio::ip::tcp::socket socket_;
  struct TlsStream;
  std::unique_ptr<TlsStream> tls_;  // over socket_, once StartTls succeeded; destroyed first
  PacketDecoder decoder_;
  uint8_t sequence_ = 0;
  std::string out_;
  std::array<char, 64 * 1024> in_{};
  Counter* bytes_received_;
  Counter* bytes_sent_;
};

}  // namespace millrace::server
