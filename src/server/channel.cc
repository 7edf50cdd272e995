#include "server/channel.h"

#include <algorithm>

#include "asio/ssl.hpp"

namespace millrace::server {

struct Channel::TlsStream {
  TlsStream(asio::ip::tcp::socket& socket, asio::ssl::context& context) : stream(socket, context) {}
  asio::ssl::stream<asio::ip::tcp::socket&> stream;
};

Channel::Channel(std::unique_ptr<asio::io_context> io, asio::ip::tcp::socket socket,
                 size_t max_packet_size, Counter* bytes_received, Counter* bytes_sent)
    : io_(std::move(io)),
      socket_(std::move(socket)),
      decoder_(max_packet_size),
      bytes_received_(bytes_received),
      bytes_sent_(bytes_sent) {
  asio::error_code ignored;  // Nagle only adds latency; failing to disable it is harmless.
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
}

Channel::~Channel() {
  Close();
}

asio::error_code Channel::Run(const std::function<void(Completion)>& start,
                              std::chrono::milliseconds timeout, size_t* bytes) {
  std::optional<asio::error_code> result;
  start([&result, bytes](const asio::error_code& ec, size_t n) {
    result = ec;
    *bytes = n;
  });
  io_->restart();
  io_->run_for(timeout);
  if (!result) {
    asio::error_code ignored;  // cancelling an operation that is still pending cannot fail usefully
    socket_.cancel(ignored);
    io_->restart();
    io_->run();
    return asio::error::timed_out;
  }
  return *result;
}

Result<Packet> Channel::Read(std::chrono::milliseconds idle_timeout,
                             std::chrono::milliseconds timeout, bool exact) {
  while (true) {
    Result<std::optional<Packet>> packet = decoder_.Next(&sequence_);
    if (!packet.ok()) {
      ++sequence_;  // an ERR reply follows the offending packet
      return packet.status();
    }
    if (*packet) return std::move(**packet);
    const bool partial = decoder_.HasPartial();
    const asio::mutable_buffer buffer(
        in_.data(), exact ? std::min(in_.size(), decoder_.Missing()) : in_.size());
    size_t n = 0;
    const asio::error_code ec = Run(
        [this, buffer](Completion done) {
          if (tls_) {
            tls_->stream.async_read_some(buffer, std::move(done));
          } else {
            socket_.async_read_some(buffer, std::move(done));
          }
        },
        partial ? timeout : idle_timeout, &n);
    if (ec == asio::error::timed_out) {
      return Status::DeadlineExceeded(partial ? "timed out receiving a packet"
                                              : "idle timeout: no command from the client");
    }
    // A TLS client that closes without close_notify reads as a truncated stream.
    if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
      return Status::Unavailable("the client closed the connection");
    }
    if (ec) return Status::Unavailable("receiving from the client failed: " + ec.message());
    bytes_received_->Add(n);
    decoder_.Append(std::string_view(in_.data(), n));
  }
}

void Channel::Write(std::string_view payload) {
  AppendPacket(payload, &sequence_, &out_);
}

Status Channel::Flush(std::chrono::milliseconds timeout) {
  if (out_.empty()) return Status::Ok();
  size_t n = 0;
  const asio::error_code ec = Run(
      [this](Completion done) {
        if (tls_) {
          asio::async_write(tls_->stream, asio::buffer(out_), std::move(done));
        } else {
          asio::async_write(socket_, asio::buffer(out_), std::move(done));
        }
      },
      timeout, &n);
  bytes_sent_->Add(n);
  out_.clear();
  if (ec == asio::error::timed_out)
    return Status::DeadlineExceeded("timed out sending to the client");
  if (ec) return Status::Unavailable("sending to the client failed: " + ec.message());
  return Status::Ok();
}

Status Channel::StartTls(asio::ssl::context& context, std::chrono::milliseconds timeout) {
  if (decoder_.HasPartial()) {
    return Status::InvalidArgument("the client sent data before the TLS handshake");
  }
  tls_ = std::make_unique<TlsStream>(socket_, context);
  size_t unused = 0;
  const asio::error_code ec = Run(
      [this](Completion done) {
        tls_->stream.async_handshake(
            asio::ssl::stream_base::server,
            [done = std::move(done)](const asio::error_code& error) { done(error, 0); });
      },
      timeout, &unused);
  if (!ec) return Status::Ok();
  tls_.reset();  // tls() stays false; the connection closes
  if (ec == asio::error::timed_out)
    return Status::DeadlineExceeded("timed out in the TLS handshake");
  return Status::Unavailable("the TLS handshake failed: " + ec.message());
}

void Channel::Post(std::function<void()> fn) {
  asio::post(*io_, std::move(fn));
}

void Channel::Close() {
  asio::error_code ignored;  // the peer may already be gone; closing is all that matters
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

std::string Channel::Peer() const {
  asio::error_code ec;
  const auto endpoint = socket_.remote_endpoint(ec);
  if (ec) return "unknown";
  return endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

}  // namespace millrace::server
