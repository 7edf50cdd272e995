#include "s3/http_transport.h"

#include <curl/curl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

#include "common/endpoint_policy.h"
#include "common/strings.h"

namespace millrace::s3 {
namespace {

constexpr size_t kMaxIdleHandles = 32;
constexpr size_t kMaxErrorBody = 64 * 1024;

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

// State shared with libcurl's callbacks during one Perform.
// The sockets libcurl opened through OnOpenSocket and has not closed: the handle keeps its
// connections between exchanges, and libcurl does not say which one a transfer is on.
struct Sockets {
  std::vector<curl_socket_t> open;
};

struct Exchange {
  Sockets* sockets = nullptr;
  const HttpRequest* request = nullptr;
  const BodyCallback* on_body = nullptr;
  const HeadersCallback* on_headers = nullptr;
  HttpResponse* response = nullptr;
  Clock* clock = nullptr;
  // Stall detection: when bytes last moved, and how many had moved by then.
  Clock::SteadyTime last_progress;
  curl_off_t last_transferred = 0;
  bool stalled = false;
};

// Opens each new connection's socket once the endpoint policy has seen the address libcurl
// resolved, so that a name resolving to a refused address is refused too.
curl_socket_t OnOpenSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  auto* exchange = static_cast<Exchange*>(user);
  if (Status allowed = EndpointPolicy::Default().CheckAddress(&address->addr); !allowed.ok()) {
    exchange->response->sink_status = std::move(allowed);
    return CURL_SOCKET_BAD;
  }
  const curl_socket_t opened = socket(address->family, address->socktype, address->protocol);
  if (opened != CURL_SOCKET_BAD) exchange->sockets->open.push_back(opened);
  return opened;
}

int OnCloseSocket(void* user, curl_socket_t socket) {
  auto* sockets = static_cast<Sockets*>(user);
  std::erase(sockets->open, socket);
  return ::close(socket);
}

void NoteProgress(Exchange* exchange) {
  exchange->last_progress = exchange->clock->SteadyNow();
}

int OnProgress(void* user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
               curl_off_t ulnow) {
  auto* exchange = static_cast<Exchange*>(user);
  if (dlnow + ulnow != exchange->last_transferred) {
    exchange->last_transferred = dlnow + ulnow;
    NoteProgress(exchange);
    return 0;
  }
  if (exchange->clock->SteadyNow() - exchange->last_progress >= exchange->request->stall_timeout) {
    exchange->stalled = true;
    return 1;  // makes libcurl stop with CURLE_ABORTED_BY_CALLBACK
  }
  return 0;
}

// Acknowledges what the connection received at once instead of after the delayed-ACK timer
// (40 ms on Linux). A server that writes a response's headers and body apart without
// TCP_NODELAY (Ceph RGW's beast front end by default) holds the body back under Nagle's rule
// until the headers are acknowledged: without this, every small GET from it took 40 ms more.
// libcurl's CURLINFO_ACTIVESOCKET does not name the socket during a transfer (and
// curl_easy_reset forgets it), so every open socket of the handle is told: an idle one has
// nothing to acknowledge.
void AckNow(const Sockets& sockets) {
  const int on = 1;
  for (const curl_socket_t socket : sockets.open) {
    // Best effort: a socket that refuses it only keeps the kernel's timing.
    ::setsockopt(socket, IPPROTO_TCP, TCP_QUICKACK, &on, sizeof(on));
  }
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  NoteProgress(exchange);
  const std::string_view line(data, size * count);
  HttpResponse& response = *exchange->response;
  if (line.starts_with("HTTP/")) {
    // A new status line (after 100 Continue, say) starts a new response.
    response.headers.clear();
    response.status = 0;
    const size_t space = line.find(' ');
    if (space != std::string_view::npos) {
      int status = 0;
      for (size_t i = space + 1;
           i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])); ++i) {
        status = status * 10 + (line[i] - '0');
      }
      response.status = status;
    }
    return size * count;
  }
  if (line == "\r\n" || line == "\n") {
    AckNow(*exchange->sockets);
    // End of a header block; 1xx blocks are followed by the real response.
    if (response.ok_status() && *exchange->on_headers) {
      Status status = (*exchange->on_headers)(response);
      if (!status.ok()) {
        response.sink_status = std::move(status);
        return 0;  // makes libcurl stop with CURLE_WRITE_ERROR
      }
    }
    return size * count;
  }
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    response.headers.emplace_back(ToLower(line.substr(0, colon)),
                                  std::string(Trim(line.substr(colon + 1))));
  }
  return size * count;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  HttpResponse& response = *exchange->response;
  const size_t bytes = size * count;
  if (!response.ok_status()) {
    const size_t room = kMaxErrorBody - std::min(kMaxErrorBody, response.error_body.size());
    response.error_body.append(data, std::min(room, bytes));
    return bytes;
  }
  if (!*exchange->on_body) return bytes;  // nobody wants this body
  Status status = (*exchange->on_body)(std::string_view(data, bytes));
  if (!status.ok()) {
    response.sink_status = std::move(status);
    return 0;  // makes libcurl stop with CURLE_WRITE_ERROR
  }
  response.body_bytes += bytes;
  return bytes;
}

size_t OnUpload(char* buffer, size_t size, size_t count, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  if (!exchange->request->body_reader) return 0;
  return exchange->request->body_reader(buffer, size * count);
}

TransportError Classify(CURLcode code, const Exchange& exchange) {
  const HttpResponse& response = *exchange.response;
  // One of our callbacks refused (the body sink, the endpoint policy): its error is the one.
  if (code != CURLE_OK && !response.sink_status.ok()) return TransportError::kSinkFailed;
  switch (code) {
    case CURLE_OK:
      return TransportError::kNone;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return TransportError::kResolve;
    case CURLE_COULDNT_CONNECT:
      return TransportError::kConnect;
    case CURLE_OPERATION_TIMEDOUT:
      return TransportError::kTimeout;
    case CURLE_ABORTED_BY_CALLBACK:
      return exchange.stalled ? TransportError::kTimeout : TransportError::kOther;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_USE_SSL_FAILED:
      return TransportError::kTls;
    case CURLE_WRITE_ERROR:
      return response.sink_status.ok() ? TransportError::kOther : TransportError::kSinkFailed;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_BAD_CONTENT_ENCODING:
      return TransportError::kBrokenTransfer;
    default:
      return TransportError::kOther;
  }
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

const std::string* HttpResponse::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return &value;
  }
  return nullptr;
}

std::string_view TransportErrorName(TransportError error) {
  switch (error) {
    case TransportError::kNone:
      return "no error";
    case TransportError::kResolve:
      return "could not resolve host";
    case TransportError::kConnect:
      return "could not connect";
    case TransportError::kTimeout:
      return "timed out";
    case TransportError::kTls:
      return "TLS failure";
    case TransportError::kBrokenTransfer:
      return "connection broken mid-response";
    case TransportError::kSinkFailed:
      return "body consumer failed";
    case TransportError::kOther:
      return "transfer failed";
  }
  return "transfer failed";
}

HttpTransport::HttpTransport(Clock* clock) : clock_(clock) {
  GlobalInit();
}

struct HttpTransport::Handle {
  CURL* curl = nullptr;
  Sockets sockets;

  Handle() : curl(curl_easy_init()) {}
  ~Handle() {
    if (curl != nullptr) curl_easy_cleanup(curl);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

HttpTransport::~HttpTransport() = default;

std::unique_ptr<HttpTransport::Handle> HttpTransport::Acquire() {
  {
    MutexLock lock(&mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Handle> handle = std::move(idle_.back());
      idle_.pop_back();
      return handle;
    }
  }
  return std::make_unique<Handle>();
}

void HttpTransport::Release(std::unique_ptr<Handle> handle) {
  // curl_easy_reset clears options but keeps the handle's live connections for reuse.
  curl_easy_reset(handle->curl);
  MutexLock lock(&mu_);
  if (idle_.size() < kMaxIdleHandles) idle_.push_back(std::move(handle));
}

HttpResponse HttpTransport::Perform(const HttpRequest& request, const BodyCallback& on_body,
                                    const HeadersCallback& on_headers) {
  HttpResponse response;
  std::unique_ptr<Handle> handle = Acquire();
  CURL* curl = handle->curl;
  if (curl == nullptr) {
    response.error = TransportError::kOther;
    response.error_detail = "curl_easy_init failed";
    return response;
  }
  Exchange exchange{.sockets = &handle->sockets,
                    .request = &request,
                    .on_body = &on_body,
                    .on_headers = &on_headers,
                    .response = &response,
                    .clock = clock_};
  NoteProgress(&exchange);

  Slist headers;
  for (const auto& [name, value] : request.headers) {
    // "Name;" is libcurl's spelling of a header with an empty value.
    const std::string line = value.empty() ? name + ";" : name + ": " + value;
    headers.reset(curl_slist_append(headers.release(), line.c_str()));
  }
  // No "Expect: 100-continue" round trip before uploads.
  headers.reset(curl_slist_append(headers.release(), "Expect:"));

  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);  // S3 keys may contain "/../"
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, OnOpenSocket);
  curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, &exchange);
  curl_easy_setopt(curl, CURLOPT_CLOSESOCKETFUNCTION, OnCloseSocket);
  curl_easy_setopt(curl, CURLOPT_CLOSESOCKETDATA, &handle->sockets);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &exchange);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &exchange);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::max<int64_t>(1, request.connect_timeout.count())));
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &exchange);
  // Backstop in real time, for clocks that do not move on their own (tests' ManualClock).
  const auto stall_seconds =
      std::max<int64_t>(1, std::chrono::ceil<std::chrono::seconds>(request.stall_timeout).count());
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(2 * stall_seconds));
  if (request.total_timeout.count() > 0) {
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.total_timeout.count()));
  }
  if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body_size));
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, OnUpload);
    curl_easy_setopt(curl, CURLOPT_READDATA, &exchange);
  } else if (request.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }

  const CURLcode code = curl_easy_perform(curl);
  if (response.status == 0) {
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    response.status = static_cast<int>(status);
  }
  response.error = Classify(code, exchange);
  if (exchange.stalled) {
    response.error_detail =
        "no data moved for " + std::to_string(request.stall_timeout.count()) + " ms";
  } else if (code != CURLE_OK) {
    response.error_detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
  }
  Release(std::move(handle));
  return response;
}

}  // namespace millrace::s3
