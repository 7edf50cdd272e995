#include "testing/s3rver.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstring>
#include <regex>
#include <thread>

#include "common/clock.h"
#include "s3/s3_transport.h"
#include "testing/test_paths.h"
#include "testing/wait_for.h"

namespace millrace::testing {
namespace {

using std::chrono::milliseconds;

}  // namespace

Result<std::unique_ptr<S3rver>> S3rver::Start(const std::vector<std::string>& buckets) {
  std::unique_ptr<S3rver> server(new S3rver());
  const std::string data = server->dir_.Join("data");
  const std::string log = server->dir_.Join("s3rver.log");
  if (::mkdir(data.c_str(), 0755) != 0) return Status::IoError("cannot create " + data);
  std::vector<std::string> argv = {"node",        testing::NpmPath("s3rver/bin/s3rver.js"),
                                   "--directory", data,
                                   "--address",   "127.0.0.1",
                                   "--port",      "0",
                                   "--silent",    "--service-endpoint",
                                   "localhost"};
  for (const std::string& bucket : buckets) {
    argv.push_back("--configure-bucket");
    argv.push_back(bucket);
  }
  MR_ASSIGN_OR_RETURN(server->pid_,
                      SpawnProcess(argv, {"NODE_OPTIONS=--openssl-legacy-provider"}, log, log));

  // s3rver prints "S3rver listening on 127.0.0.1:<port>" once it accepts connections.
  const std::regex listening(R"(listening on 127\.0\.0\.1:(\d+))");
  bool exited = false;
  int wait_status = 0;
  const bool done = WaitFor(
      [&] {
        std::smatch match;
        const std::string output = ReadFile(log);
        if (std::regex_search(output, match, listening)) {
          server->port_ = static_cast<uint16_t>(std::stoi(match[1].str()));
          return true;
        }
        exited = ::waitpid(server->pid_, &wait_status, WNOHANG) == server->pid_;
        return exited;
      },
      std::chrono::seconds(30));
  if (exited) {
    server->pid_ = -1;
    return Status::Unavailable("s3rver exited with status " +
                               std::to_string(ExitCode(wait_status)) + ": " + ReadFile(log));
  }
  if (!done) return Status::DeadlineExceeded("s3rver did not start within 30 s: " + ReadFile(log));
  server->endpoint_ = "http://127.0.0.1:" + std::to_string(server->port_);
  MR_ASSIGN_OR_RETURN(server->transport_, s3::S3Transport::Create(server->Config(), Clock::Real()));
  return server;
}

S3rver::~S3rver() {
  transport_.reset();
  if (pid_ <= 0) return;
  int wait_status = 0;
  ::kill(pid_, SIGTERM);
  if (!WaitForExit(pid_, std::chrono::seconds(5), &wait_status)) {
    ::kill(pid_, SIGKILL);
    WaitForExit(pid_, std::chrono::seconds(5), &wait_status);
  }
}

s3::S3Config S3rver::Config() const {
  s3::S3Config config;
  config.endpoint = endpoint_;
  config.region = "us-east-1";
  config.use_path_style = true;
  config.credentials = {kAccessKey, kSecretKey, ""};
  config.retry.max_attempts = 4;
  config.retry.base_backoff = milliseconds(20);
  config.retry.max_backoff = milliseconds(200);
  config.retry.total_budget = std::chrono::seconds(10);
  config.retry.connect_timeout = std::chrono::seconds(2);
  config.retry.request_timeout = std::chrono::seconds(10);
  return config;
}

s3::S3Config S3rver::VirtualHostConfig() const {
  s3::S3Config config = Config();
  config.endpoint = "http://s3.localhost:" + std::to_string(port_);
  config.use_path_style = false;
  return config;
}

Status S3rver::Send(const std::string& op, const std::string& method, const std::string& bucket,
                    const std::string& key, uint64_t size,
                    std::function<size_t(char* buf, size_t len)> reader) {
  s3::S3Call call{.op = op, .method = method, .bucket = bucket, .key = key};
  call.body_reader = std::move(reader);
  call.body_size = size;
  const s3::HttpResponse response = transport_->Send(call, {});
  if (response.error == s3::TransportError::kNone && response.ok_status()) return Status::Ok();
  return transport_->Classify(call, response).status;
}

Status S3rver::CreateBucket(const std::string& bucket) {
  return Send("CreateBucket", "PUT", bucket, "", 0, nullptr);
}

Status S3rver::PutObject(const std::string& bucket, const std::string& key, std::string_view data) {
  return PutGenerated(bucket, key, data.size(), [data](uint64_t offset, char* buf, size_t len) {
    std::memcpy(buf, data.data() + offset, len);
  });
}

Status S3rver::PutGenerated(const std::string& bucket, const std::string& key, uint64_t size,
                            const std::function<void(uint64_t, char*, size_t)>& fill) {
  auto offset = std::make_shared<uint64_t>(0);
  return Send("PutObject", "PUT", bucket, key, size, [=](char* buf, size_t len) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(len, size - *offset));
    fill(*offset, buf, n);
    *offset += n;
    return n;
  });
}

Status S3rver::PutObjects(const std::string& bucket,
                          const std::vector<std::pair<std::string, std::string>>& objects) {
  constexpr size_t kWriters = 4;
  std::vector<Status> results(kWriters);
  std::vector<std::thread> writers;
  for (size_t w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (size_t i = w; i < objects.size() && results[w].ok(); i += kWriters) {
        results[w] = PutObject(bucket, objects[i].first, objects[i].second);
      }
    });
  }
  for (std::thread& writer : writers)
    writer.join();
  for (const Status& status : results)
    MR_RETURN_IF_ERROR(status);
  return Status::Ok();
}

Status S3rver::DeleteObject(const std::string& bucket, const std::string& key) {
  return Send("DeleteObject", "DELETE", bucket, key, 0, nullptr);
}

}  // namespace millrace::testing
