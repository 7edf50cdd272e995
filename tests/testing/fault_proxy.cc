#include "testing/fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include "common/strings.h"

namespace millrace::testing {
namespace {

using namespace std::chrono_literals;

constexpr auto kPollSlice = 50ms;
constexpr auto kUpstreamTimeout = 30s;

std::string StripQuotes(std::string_view s) {
  s = Trim(s);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return std::string(s);
}

// Parses a whole hexadecimal or decimal number; nullopt when `s` is not one.
std::optional<uint64_t> ParseNumber(std::string_view s, int base) {
  s = Trim(s);
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc() || s.empty()) return std::nullopt;
  // Chunk sizes may carry extensions after ';'.
  if (end != s.data() + s.size() && *end != ';') return std::nullopt;
  return value;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto byte =
        s[i] == '%' && i + 2 < s.size() ? ParseNumber(s.substr(i + 1, 2), 16) : std::nullopt;
    if (byte) {
      out.push_back(static_cast<char>(*byte));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

using Headers = std::vector<std::pair<std::string, std::string>>;  // names lower-cased

std::string HeaderValue(const Headers& headers, std::string_view name) {
  for (const auto& [n, v] : headers) {
    if (n == name) return v;
  }
  return "";
}

// Parses "line\r\nName: value\r\n...\r\n\r\n" (`head` without the final blank line).
void ParseHead(std::string_view head, std::string* first_line, Headers* headers) {
  size_t eol = head.find("\r\n");
  *first_line = std::string(head.substr(0, eol));
  while (eol != std::string_view::npos) {
    head.remove_prefix(eol + 2);
    eol = head.find("\r\n");
    const std::string_view line = head.substr(0, eol);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    headers->emplace_back(ToLower(Trim(line.substr(0, colon))),
                          std::string(Trim(line.substr(colon + 1))));
  }
}

// Decodes a chunked body; false while it is incomplete.
bool DecodeChunked(std::string_view in, std::string* out) {
  out->clear();
  while (true) {
    const size_t eol = in.find("\r\n");
    if (eol == std::string_view::npos) return false;
    const std::optional<uint64_t> parsed = ParseNumber(in.substr(0, eol), 16);
    if (!parsed) return false;
    const size_t size = *parsed;
    in.remove_prefix(eol + 2);
    if (size == 0) return true;  // trailers ignored
    if (in.size() < size + 2) return false;
    out->append(in.substr(0, size));
    in.remove_prefix(size + 2);
  }
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string S3ErrorBody(std::string_view code, std::string_view resource) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + std::string(code) +
         "</Code><Message>injected by the fault proxy</Message><Resource>" + std::string(resource) +
         "</Resource><RequestId>fault-proxy</RequestId></Error>";
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 412:
      return "Precondition Failed";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Error";
  }
}

}  // namespace

std::string_view RequestKindName(RequestKind kind) {
  switch (kind) {
    case RequestKind::kList:
      return "LIST";
    case RequestKind::kGet:
      return "GET";
    case RequestKind::kHead:
      return "HEAD";
    case RequestKind::kOther:
      return "OTHER";
  }
  return "OTHER";
}

struct FaultProxy::Request {
  std::string method;
  std::string target;
  Headers headers;
  std::string body;
  ProxiedRequest summary;
};

struct FaultProxy::Response {
  std::string status_line;
  Headers headers;
  std::string body;
  bool head_only = false;  // answer to HEAD: Content-Length describes a body not sent
};

Result<std::unique_ptr<FaultProxy>> FaultProxy::Start(Options options) {
  std::unique_ptr<FaultProxy> proxy(new FaultProxy(std::move(options)));
  {
    MutexLock lock(&proxy->mu_);
    proxy->enforce_if_match_ = proxy->options_.enforce_if_match;
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(std::string("socket: ") + std::strerror(errno));
  proxy->listen_fd_ = fd;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd, 64) != 0) {
    return Status::IoError(std::string("fault proxy bind/listen: ") + std::strerror(errno));
  }
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  proxy->port_ = ntohs(addr.sin_port);
  proxy->accept_thread_ = std::thread([p = proxy.get()] { p->AcceptLoop(); });
  return proxy;
}

FaultProxy::~FaultProxy() {
  Stop();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

std::string FaultProxy::endpoint() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

void FaultProxy::AddRule(FaultRule rule) {
  MutexLock lock(&mu_);
  rules_.push_back(std::move(rule));
}

void FaultProxy::ClearRules() {
  MutexLock lock(&mu_);
  rules_.clear();
}

void FaultProxy::set_enforce_if_match(bool on) {
  MutexLock lock(&mu_);
  enforce_if_match_ = on;
}

ProxyCounts FaultProxy::counts() const {
  MutexLock lock(&mu_);
  return counts_;
}

std::vector<ProxiedRequest> FaultProxy::requests() const {
  MutexLock lock(&mu_);
  return requests_;
}

void FaultProxy::ResetCounts() {
  MutexLock lock(&mu_);
  counts_ = {};
  requests_.clear();
}

bool FaultProxy::WaitForHold(std::chrono::milliseconds timeout) {
  MutexLock lock(&mu_);
  return WaitOnFor(cv_, &mu_, timeout, [this]() NO_THREAD_SAFETY_ANALYSIS { return held_ > 0; });
}

void FaultProxy::ReleaseHold() {
  MutexLock lock(&mu_);
  ++releases_;
  cv_.notify_all();
}

bool FaultProxy::stopping() {
  MutexLock lock(&mu_);
  return stopping_;
}

void FaultProxy::Stop() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    if (stopping_ && !accept_thread_.joinable()) return;
    stopping_ = true;
    for (int fd : open_fds_)
      ::shutdown(fd, SHUT_RDWR);
    cv_.notify_all();
  }
  if (accept_thread_.joinable()) accept_thread_.join();
  {
    MutexLock lock(&mu_);
    threads.swap(connection_threads_);
  }
  for (std::thread& t : threads)
    t.join();
}

bool FaultProxy::SleepFor(std::chrono::milliseconds d) {
  MutexLock lock(&mu_);
  return !WaitOnFor(cv_, &mu_, d, [this]() NO_THREAD_SAFETY_ANALYSIS { return stopping_; });
}

bool FaultProxy::Hold() {
  MutexLock lock(&mu_);
  ++held_;
  cv_.notify_all();
  WaitOn(cv_, &mu_, [this]() NO_THREAD_SAFETY_ANALYSIS { return releases_ > 0 || stopping_; });
  --held_;
  if (releases_ > 0) --releases_;
  return !stopping_;
}

void FaultProxy::AcceptLoop() {
  while (!stopping()) {
    pollfd pfd{listen_fd_, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(kPollSlice.count())) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    MutexLock lock(&mu_);
    if (stopping_) {
      ::close(fd);
      break;
    }
    open_fds_.push_back(fd);
    connection_threads_.emplace_back([this, fd] { ServeConnection(fd); });
  }
}

bool FaultProxy::ReadMore(int fd, std::string* buffer, std::chrono::milliseconds timeout) {
  auto waited = 0ms;
  while (waited < timeout) {
    if (stopping()) return false;
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(kPollSlice.count()));
    if (ready == 0) {
      waited += kPollSlice;
      continue;
    }
    if (ready < 0 && errno == EINTR) continue;
    char chunk[64 * 1024];
    const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer->append(chunk, static_cast<size_t>(n));
    return true;
  }
  return false;
}

bool FaultProxy::ReadRequest(int fd, std::string* buffer, Request* request) {
  size_t head_end;
  while ((head_end = buffer->find("\r\n\r\n")) == std::string::npos) {
    // A keep-alive client may sit idle for long: wait as long as the proxy lives.
    if (!ReadMore(fd, buffer, 24h)) return false;
  }
  std::string first_line;
  ParseHead(std::string_view(*buffer).substr(0, head_end + 2), &first_line, &request->headers);
  buffer->erase(0, head_end + 4);
  const size_t sp1 = first_line.find(' ');
  const size_t sp2 = first_line.rfind(' ');
  if (sp1 == std::string::npos || sp2 <= sp1) return false;
  request->method = first_line.substr(0, sp1);
  request->target = first_line.substr(sp1 + 1, sp2 - sp1 - 1);

  if (EqualsIgnoreCase(HeaderValue(request->headers, "expect"), "100-continue")) {
    if (!SendAll(fd, "HTTP/1.1 100 Continue\r\n\r\n")) return false;
  }
  if (EqualsIgnoreCase(HeaderValue(request->headers, "transfer-encoding"), "chunked")) {
    while (!DecodeChunked(*buffer, &request->body)) {
      if (!ReadMore(fd, buffer, kUpstreamTimeout)) return false;
    }
    buffer->clear();  // pipelining after a chunked body is not something our clients do
  } else {
    const std::string length = HeaderValue(request->headers, "content-length");
    const size_t n = ParseNumber(length, 10).value_or(0);
    while (buffer->size() < n) {
      if (!ReadMore(fd, buffer, kUpstreamTimeout)) return false;
    }
    request->body = buffer->substr(0, n);
    buffer->erase(0, n);
  }

  // Path-style: /bucket[/key][?query]
  ProxiedRequest& summary = request->summary;
  summary.method = request->method;
  const std::string_view target = request->target;
  const std::string_view path = target.substr(0, target.find('?'));
  const size_t key_start = path.find('/', 1);
  summary.key =
      key_start == std::string_view::npos ? "" : PercentDecode(path.substr(key_start + 1));
  summary.range = HeaderValue(request->headers, "range");
  summary.if_match = HeaderValue(request->headers, "if-match");
  summary.authorization = HeaderValue(request->headers, "authorization");
  if (request->method == "HEAD") {
    summary.kind = RequestKind::kHead;
  } else if (request->method == "GET") {
    summary.kind = summary.key.empty() ? RequestKind::kList : RequestKind::kGet;
  } else {
    summary.kind = RequestKind::kOther;
  }
  return true;
}

std::optional<Fault> FaultProxy::PickFault(const ProxiedRequest& request) {
  MutexLock lock(&mu_);
  std::optional<Fault> picked;
  for (FaultRule& rule : rules_) {
    if (rule.times == 0) continue;
    if (rule.kind && *rule.kind != request.kind) continue;
    if (!rule.key_contains.empty() && request.key.find(rule.key_contains) == std::string::npos) {
      continue;
    }
    if (rule.probability < 1.0 &&
        std::uniform_real_distribution<double>(0, 1)(rng_) >= rule.probability) {
      continue;
    }
    if (rule.times > 0) --rule.times;
    picked = rule.fault;
    break;
  }
  switch (request.kind) {
    case RequestKind::kList:
      ++counts_.list;
      break;
    case RequestKind::kGet:
      ++counts_.get;
      break;
    case RequestKind::kHead:
      ++counts_.head;
      break;
    case RequestKind::kOther:
      ++counts_.other;
      break;
  }
  if (picked) ++counts_.faulted;
  requests_.push_back(request);
  requests_.back().faulted = picked.has_value();
  return picked;
}

Result<FaultProxy::Response> FaultProxy::Forward(const Request& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError("socket");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(options_.upstream_port));
  ::inet_pton(AF_INET, options_.upstream_host.c_str(), &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Status::Unavailable("upstream connect: " + std::string(std::strerror(errno)));
  }
  std::string out = request.method + " " + request.target + " HTTP/1.1\r\n";
  for (const auto& [name, value] : request.headers) {
    if (name == "connection" || name == "expect" || name == "transfer-encoding" ||
        name == "content-length" || name == "keep-alive") {
      continue;
    }
    out += name + ": " + value + "\r\n";
  }
  if (!request.body.empty() || request.method == "PUT" || request.method == "POST") {
    out += "content-length: " + std::to_string(request.body.size()) + "\r\n";
  }
  out += "connection: close\r\n\r\n" + request.body;
  if (!SendAll(fd, out)) return Status::Unavailable("upstream send failed");

  // The upstream closes after answering (connection: close), so read to EOF.
  std::string raw;
  while (ReadMore(fd, &raw, kUpstreamTimeout)) {
  }
  if (stopping()) return Status::Cancelled("proxy stopping");
  const size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return Status::Unavailable("upstream sent no response");
  Response response;
  ParseHead(std::string_view(raw).substr(0, head_end + 2), &response.status_line,
            &response.headers);
  response.head_only = request.method == "HEAD";
  std::string_view body = std::string_view(raw).substr(head_end + 4);
  if (EqualsIgnoreCase(HeaderValue(response.headers, "transfer-encoding"), "chunked")) {
    if (!DecodeChunked(body, &response.body)) return Status::Unavailable("upstream cut a chunk");
  } else if (!response.head_only) {
    response.body = std::string(body);
  }
  return response;
}

bool FaultProxy::SendResponse(int fd, const Response& response, const Fault& fault) {
  std::string head = response.status_line + "\r\n";
  for (const auto& [name, value] : response.headers) {
    if (name == "connection" || name == "transfer-encoding" || name == "keep-alive") continue;
    if (name == "content-length" && !response.head_only) continue;
    head += name + ": " + value + "\r\n";
  }
  if (!response.head_only)
    head += "content-length: " + std::to_string(response.body.size()) + "\r\n";
  head += "\r\n";
  if (fault.delay.count() > 0 && !SleepFor(fault.delay)) return false;
  if (!SendAll(fd, head)) return false;

  const std::string_view body = response.body;
  if (!fault.cut_after_bytes || *fault.cut_after_bytes >= body.size()) return SendAll(fd, body);
  const size_t cut = *fault.cut_after_bytes;
  if (!SendAll(fd, body.substr(0, cut))) return false;
  if (fault.stall.count() > 0 && !SleepFor(fault.stall)) return false;
  if (fault.hold && !Hold()) return false;
  switch (fault.cut) {
    case Fault::Cut::kContinue:
      return SendAll(fd, body.substr(cut));
    case Fault::Cut::kReset: {
      const linger abort_on_close{1, 0};  // close() then sends RST
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof(abort_on_close));
      return false;
    }
    case Fault::Cut::kClose:
      ::shutdown(fd, SHUT_WR);
      return false;
  }
  return false;
}

void FaultProxy::ServeConnection(int fd) {
  std::string buffer;
  while (true) {
    Request request;
    if (!ReadRequest(fd, &buffer, &request)) break;
    const std::optional<Fault> fault = PickFault(request.summary);
    Response response;
    if (fault && fault->error_status != 0) {
      response.status_line = "HTTP/1.1 " + std::to_string(fault->error_status) + " " +
                             std::string(ReasonPhrase(fault->error_status));
      response.headers = {{"content-type", "application/xml"}};
      response.head_only = request.method == "HEAD";
      if (!response.head_only) {
        response.body = S3ErrorBody(fault->error_code, request.target);
      } else {
        response.headers.emplace_back("content-length", "0");
      }
    } else {
      Result<Response> forwarded = Forward(request);
      if (!forwarded.ok()) break;  // the client sees the connection drop
      response = std::move(forwarded).value();
      bool enforce;
      {
        MutexLock lock(&mu_);
        enforce = enforce_if_match_;
      }
      const std::string etag = StripQuotes(HeaderValue(response.headers, "etag"));
      if (enforce && request.method == "GET" && !request.summary.if_match.empty() &&
          !etag.empty() && StripQuotes(request.summary.if_match) != etag) {
        response = Response{"HTTP/1.1 412 Precondition Failed",
                            {{"content-type", "application/xml"}},
                            S3ErrorBody("PreconditionFailed", request.target)};
      }
    }
    if (!SendResponse(fd, response, fault.value_or(Fault{}))) break;
  }
  {
    MutexLock lock(&mu_);
    open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
  }
  ::close(fd);
}

}  // namespace millrace::testing
