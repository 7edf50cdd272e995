#include "common/logging.h"

#include <algorithm>
#include <cstdio>

#include "common/clock.h"
#include "common/strings.h"

namespace millrace {
namespace {

class StderrSink final : public LogSink {
 public:
  void Write(std::string_view line) override {
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fputc('\n', stderr);
    std::fflush(stderr);
  }
};

constexpr size_t kMinSecretLength = 4;

}  // namespace

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarning:
      return "WARN";
    case LogLevel::kError:
      return "ERROR";
  }
  return "INFO";
}

Result<LogLevel> ParseLogLevel(std::string_view text) {
  const std::string lower = ToLower(text);
  if (lower == "debug") return LogLevel::kDebug;
  if (lower == "info") return LogLevel::kInfo;
  if (lower == "warning" || lower == "warn") return LogLevel::kWarning;
  if (lower == "error") return LogLevel::kError;
  return Status::InvalidArgument("unknown log level '" + std::string(text) +
                                 "' (expected debug, info, warning or error)");
}

Logger::Logger() : sink_(std::make_unique<StderrSink>()) {}

Logger& Logger::Default() {
  static Logger logger;
  return logger;
}

void Logger::SetLevel(LogLevel level) {
  MutexLock lock(&mu_);
  level_ = level;
}

bool Logger::Enabled(LogLevel level) {
  MutexLock lock(&mu_);
  return level >= level_;
}

void Logger::SetSink(std::unique_ptr<LogSink> sink) {
  MutexLock lock(&mu_);
  sink_ = sink ? std::move(sink) : std::make_unique<StderrSink>();
}

void Logger::AddSecret(std::string_view secret) {
  if (secret.size() < kMinSecretLength) return;
  MutexLock lock(&mu_);
  if (std::find(secrets_.begin(), secrets_.end(), secret) != secrets_.end()) return;
  secrets_.emplace_back(secret);
  // Longest first, so a secret that contains another is masked whole.
  std::sort(secrets_.begin(), secrets_.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string Logger::Redact(std::string_view text) {
  MutexLock lock(&mu_);
  return RedactLocked(text);
}

std::string Logger::RedactLocked(std::string_view text) {
  std::string out(text);
  for (const std::string& secret : secrets_) {
    size_t pos = 0;
    while ((pos = out.find(secret, pos)) != std::string::npos) {
      out.replace(pos, secret.size(), "****");
      pos += 4;
    }
  }
  return out;
}

void Logger::Log(LogLevel level, std::string_view message) {
  std::string line = FormatUtc(Clock::Real()->WallNow());
  line += ' ';
  line += LogLevelName(level);
  line += ' ';
  line += message;
  MutexLock lock(&mu_);
  if (level < level_) return;
  sink_->Write(RedactLocked(line));
}

LogMessage::~LogMessage() {
  Logger::Default().Log(level_, stream_.str());
}

}  // namespace millrace
