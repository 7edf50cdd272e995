#include "server/mysql_server.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <system_error>
#include <thread>

#include "asio/ssl.hpp"
#include "common/logging.h"
#include "server/channel.h"
#include "server/mysql_session.h"
#include "server/protocol.h"
#include "server/server_metrics.h"
#include "sql/mysql_errors.h"

namespace millrace::server {

// ---------------------------------------------------------------------------------------------
// Options

const std::vector<FlagSpec>& MySqlServerOptions::Flags() {
  static const std::vector<FlagSpec> kFlags = {
      {"idle-timeout", "MILLRACE_IDLE_TIMEOUT", "28800",
       "seconds a MySQL connection may wait for its next command before it is closed"},
      {"net-timeout", "MILLRACE_NET_TIMEOUT", "60",
       "seconds to finish receiving a started packet, or sending buffered results"},
      {"max-packet-size", "MILLRACE_MAX_PACKET_SIZE", "67108864",
       "largest MySQL packet accepted from a client, in bytes (max_allowed_packet)"},
      {"max-connections", "MILLRACE_MAX_CONNECTIONS", "512", "most concurrent MySQL connections"},
      {"max-connections-per-user", "MILLRACE_MAX_CONNECTIONS_PER_USER", "100",
       "most concurrent MySQL connections of one user whose own MAX_USER_CONNECTIONS is 0 (0: no "
       "limit); past it a login gets ERR 1203"},
      {"shutdown-grace", "MILLRACE_SHUTDOWN_GRACE", "30",
       "seconds running statements get to finish on SIGTERM before they are interrupted"},
      {"require-tls", "MILLRACE_REQUIRE_TLS", "",
       "refuse MySQL logins without TLS (ERR 3159); needs --tls-cert", /*is_bool=*/true},
  };
  return kFlags;
}

Result<MySqlServerOptions> MySqlServerOptions::FromFlags(const ServerConfig& config,
                                                         const ParsedFlags& flags) {
  MySqlServerOptions options;
  options.bind_address = config.bind_address;
  options.port = config.mysql_port;
  options.root_password = config.root_password;
  MR_ASSIGN_OR_RETURN(int64_t idle, flags.GetInt("idle-timeout", 1, 31'536'000));
  MR_ASSIGN_OR_RETURN(int64_t net, flags.GetInt("net-timeout", 1, 86'400));
  MR_ASSIGN_OR_RETURN(int64_t packet, flags.GetInt("max-packet-size", 1024, int64_t{1} << 30));
  MR_ASSIGN_OR_RETURN(int64_t connections, flags.GetInt("max-connections", 1, 100'000));
  MR_ASSIGN_OR_RETURN(int64_t grace, flags.GetInt("shutdown-grace", 0, 86'400));
  MR_ASSIGN_OR_RETURN(int64_t per_user, flags.GetInt("max-connections-per-user", 0, 100'000));
  options.max_connections_per_user = static_cast<int>(per_user);
  options.idle_timeout = std::chrono::seconds(idle);
  options.net_timeout = std::chrono::seconds(net);
  options.max_packet_size = static_cast<size_t>(packet);
  options.max_connections = static_cast<int>(connections);
  options.shutdown_grace = std::chrono::seconds(grace);
  options.require_tls = flags.GetBool("require-tls");
  if (options.require_tls && config.tls_cert_file.empty()) {
    return Status::InvalidArgument(
        "--require-tls needs a certificate: set --tls-cert and --tls-key");
  }
  return options;
}

std::vector<sql::SystemVariable> MySqlServerOptions::SystemVariables() const {
  auto number = [](std::string name, int64_t value) {
    return sql::SystemVariable{std::move(name), std::to_string(value), true};
  };
  return {
      number("interactive_timeout", idle_timeout.count()),
      number("wait_timeout", idle_timeout.count()),
      number("net_read_timeout", net_timeout.count()),
      number("net_write_timeout", net_timeout.count()),
      number("max_allowed_packet", static_cast<int64_t>(max_packet_size)),
      number("max_connections", max_connections),
      number("max_user_connections", max_connections_per_user),
  };
}

// ---------------------------------------------------------------------------------------------
// Server

class MySqlServer::Impl {
 public:
  Impl(MySqlServerOptions options, sql::Router* router, MetricsRegistry* metrics)
      : options_(std::move(options)),
        root_only_(options_.authenticator == nullptr ? RootOnly(options_.root_password) : nullptr),
        metrics_(metrics),
        env_{router, &options_, &metrics_, &stopping_,
             root_only_ != nullptr ? root_only_.get() : options_.authenticator},
        acceptor_(accept_io_),
        retry_timer_(accept_io_) {
    env_.started = router->options().clock->SteadyNow();
  }

  ~Impl() { Shutdown(std::chrono::milliseconds(0)); }

  Status Start() {
    MR_RETURN_IF_ERROR(StartTls());
    asio::error_code ec;
    asio::ip::tcp::resolver resolver(accept_io_);
    const auto endpoints = resolver.resolve(
        options_.bind_address, std::to_string(options_.port),
        asio::ip::tcp::resolver::passive | asio::ip::tcp::resolver::numeric_service, ec);
    const std::string where = options_.bind_address + ":" + std::to_string(options_.port);
    if (ec || endpoints.empty()) {
      return Status::InvalidArgument("cannot resolve MySQL bind address " + where + ": " +
                                     ec.message());
    }
    const asio::ip::tcp::endpoint endpoint = endpoints.begin()->endpoint();
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return Status::Unavailable("cannot listen for MySQL on " + where + ": " + ec.message());
    port_ = acceptor_.local_endpoint(ec).port();
    if (ec) return Status::Unavailable("cannot read the MySQL listening port: " + ec.message());
    AcceptNext();
    accept_thread_ = std::thread([this] { accept_io_.run(); });
    watch_thread_ = std::thread([this] { Watch(); });
    started_ = true;
    return Status::Ok();
  }

  uint16_t port() const { return port_; }

  size_t active_sessions() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    size_t active = 0;
    for (const auto& [id, slot] : slots_)
      active += slot.done ? 0 : 1;
    return active;
  }

  void Shutdown(std::chrono::milliseconds grace) EXCLUDES(mu_) {
    if (!started_) return;
    started_ = false;
    stopping_ = true;
    asio::post(accept_io_, [this] {
      asio::error_code ignored;  // closing a listening socket only fails if it is already closed
      acceptor_.close(ignored);
      retry_timer_.cancel();
    });
    accept_thread_.join();

    std::map<uint32_t, Slot> slots;
    {
      MutexLock lock(&mu_);
      for (auto& [id, slot] : slots_)
        slot.session->RequestStop();
      const bool finished =
          WaitOnFor(cv_, &mu_, grace, [this]() NO_THREAD_SAFETY_ANALYSIS { return AllDone(); });
      if (!finished) {
        MR_LOG(kWarning) << "interrupting the statements still running after the " << grace.count()
                         << " ms shutdown grace period";
        for (auto& [id, slot] : slots_) {
          if (!slot.done) slot.session->ForceStop();
        }
        WaitOn(cv_, &mu_, [this]() NO_THREAD_SAFETY_ANALYSIS { return AllDone(); });
      }
      slots.swap(slots_);
    }
    for (auto& [id, slot] : slots)
      slot.thread.join();
    {
      MutexLock lock(&mu_);
      watch_stop_ = true;
      cv_.notify_all();
    }
    watch_thread_.join();
  }

 private:
  // How often running statements are looked at: a statement past its bound, or whose client
  // has gone, is interrupted within this much of it.
  static constexpr std::chrono::milliseconds kWatchInterval{200};

  // Bounds running statements: those past their session's query_timeout or insert_timeout
  // (sql::Router::InterruptOverdue) and those whose client has gone
  // (MySqlSession::InterruptIfClientGone) are interrupted.
  void Watch() EXCLUDES(mu_) {
    while (true) {
      {
        MutexLock lock(&mu_);
        if (WaitOnFor(cv_, &mu_, kWatchInterval,
                      [this]() NO_THREAD_SAFETY_ANALYSIS { return watch_stop_; })) {
          return;
        }
        // Under mu_: a session is neither destroyed nor reaped meanwhile.
        for (auto& [id, slot] : slots_) {
          if (!slot.done) slot.session->InterruptIfClientGone();
        }
      }
      env_.router->InterruptOverdue();
    }
  }

  struct Slot {
    std::unique_ptr<MySqlSession> session;
    std::thread thread;
    bool done = false;
  };

  // The TLS context every session's handshake uses, when the options hold a certificate.
  Status StartTls() {
    if (options_.tls == nullptr) {
      if (options_.require_tls) return Status::InvalidArgument("require_tls needs a certificate");
      return Status::Ok();
    }
    try {
      tls_context_ = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    } catch (const std::system_error& e) {
      return Status::Internal(std::string("cannot create the MySQL TLS context: ") + e.what());
    }
    MR_RETURN_IF_ERROR(options_.tls->ConfigureServer(tls_context_->native_handle()));
    env_.tls = tls_context_.get();
    return Status::Ok();
  }

  bool AllDone() REQUIRES(mu_) {
    for (const auto& [id, slot] : slots_) {
      if (!slot.done) return false;
    }
    return true;
  }

  void AcceptNext() {
    auto io = std::make_unique<asio::io_context>();
    asio::io_context& context = *io;
    acceptor_.async_accept(
        context, [this, io = std::move(io)](const asio::error_code& ec,
                                            asio::ip::tcp::socket socket) mutable {
          if (stopping_ || ec == asio::error::operation_aborted) return;
          if (ec) {
            // E.g. out of file descriptors: back off instead of spinning on the error.
            MR_LOG(kWarning) << "accepting a MySQL connection failed: " << ec.message();
            retry_timer_.expires_after(std::chrono::milliseconds(100));
            retry_timer_.async_wait([this](const asio::error_code& wait_error) {
              if (!wait_error && !stopping_) AcceptNext();
            });
            return;
          }
          OnAccept(io, socket);
          AcceptNext();
        });
  }

  // Takes `io` and `socket` by reference so that, when the connection is refused, the socket
  // is destroyed before its io_context (the caller owns both, in that order).
  void OnAccept(std::unique_ptr<asio::io_context>& io, asio::ip::tcp::socket& socket)
      EXCLUDES(mu_) {
    metrics_.connections->Add();
    Reap();
    if (active_sessions() >= static_cast<size_t>(options_.max_connections)) {
      metrics_.rejected->Add();
      std::string packet;
      uint8_t sequence = 0;
      AppendPacket(BuildErr(sql::kErConCount, "08004", "Too many connections"), &sequence, &packet);
      asio::error_code ignored;  // a refused client that cannot read its refusal is still refused
      asio::write(socket, asio::buffer(packet), ignored);
      socket.close(ignored);
      return;
    }
    const uint32_t id = next_id_++;
    auto channel =
        std::make_unique<Channel>(std::move(io), std::move(socket), options_.max_packet_size,
                                  metrics_.bytes_received, metrics_.bytes_sent);
    auto session = std::make_unique<MySqlSession>(id, std::move(channel), env_);
    MySqlSession* raw = session.get();
    MutexLock lock(&mu_);
    Slot& slot = slots_[id];
    slot.session = std::move(session);
    try {
      slot.thread = std::thread([this, raw, id] {
        raw->Run();
        MutexLock done_lock(&mu_);
        slots_[id].done = true;
        cv_.notify_all();
      });
    } catch (const std::system_error& e) {
      MR_LOG(kError) << "cannot start a thread for MySQL connection " << id << ": " << e.what();
      slots_.erase(id);
    }
  }

  // Joins the threads of finished sessions.
  void Reap() EXCLUDES(mu_) {
    std::vector<Slot> finished;
    {
      MutexLock lock(&mu_);
      for (auto it = slots_.begin(); it != slots_.end();) {
        if (it->second.done) {
          finished.push_back(std::move(it->second));
          it = slots_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (Slot& slot : finished)
      slot.thread.join();
  }

  MySqlServerOptions options_;
  // The authenticator when the options name none.
  std::unique_ptr<Authenticator> root_only_;
  ServerMetrics metrics_;
  std::atomic<bool> stopping_{false};
  SessionEnvironment env_;
  std::unique_ptr<asio::ssl::context> tls_context_;  // null: no TLS
  asio::io_context accept_io_;
  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer retry_timer_;
  std::thread accept_thread_;
  std::thread watch_thread_;
  uint16_t port_ = 0;
  bool started_ = false;
  std::atomic<uint32_t> next_id_{1};

  Mutex mu_;
  std::condition_variable cv_;
  std::map<uint32_t, Slot> slots_ GUARDED_BY(mu_);
  bool watch_stop_ GUARDED_BY(mu_) = false;
};

MySqlServer::MySqlServer(MySqlServerOptions options, sql::Router* router, MetricsRegistry* metrics)
    : impl_(std::make_unique<Impl>(std::move(options), router, metrics)) {}

MySqlServer::~MySqlServer() = default;

Status MySqlServer::Start() {
  return impl_->Start();
}
uint16_t MySqlServer::port() const {
  return impl_->port();
}
void MySqlServer::Shutdown(std::chrono::milliseconds grace) {
  impl_->Shutdown(grace);
}
size_t MySqlServer::active_sessions() const {
  return impl_->active_sessions();
}

}  // namespace millrace::server
