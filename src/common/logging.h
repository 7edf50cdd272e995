// Logging with levels that never prints a secret.
//
// Contract
// - MR_LOG(kInfo) << "text"; writes one line "<UTC time> <LEVEL> <text>" to the logger's sink
//   (stderr by default) when the level is enabled.
// - Secrets: every string registered with Logger::AddSecret (secret keys, session tokens,
//   passwords) is replaced by "****" in every line before it reaches the sink. Components
//   register a secret as soon as they learn it, so a later message that echoes it is masked.
// - Thread-safety: Logger methods may be called concurrently; lines are never interleaved.
// - The process logger (Logger::Default) is the one deliberate global: a logger threaded
//   through every constructor buys nothing and costs every signature.
#pragma once

#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"

namespace millrace {

enum class LogLevel : int { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

std::string_view LogLevelName(LogLevel level);
// Accepts debug|info|warning|warn|error, case-insensitive.
Result<LogLevel> ParseLogLevel(std::string_view text);

class LogSink {
 public:
  virtual ~LogSink() = default;
  virtual void Write(std::string_view line) = 0;
};

class Logger {
 public:
  Logger();
  static Logger& Default();

  void SetLevel(LogLevel level) EXCLUDES(mu_);
  bool Enabled(LogLevel level) EXCLUDES(mu_);
  // Replaces the sink; nullptr restores stderr.
  void SetSink(std::unique_ptr<LogSink> sink) EXCLUDES(mu_);
  // Registers a value that must never be printed. Values shorter than 4 characters are
  // ignored: masking "a" everywhere would garble logs and protects nothing.
  void AddSecret(std::string_view secret) EXCLUDES(mu_);
  // Returns `text` with every registered secret masked.
  std::string Redact(std::string_view text) EXCLUDES(mu_);

  void Log(LogLevel level, std::string_view message) EXCLUDES(mu_);

 private:
  std::string RedactLocked(std::string_view text) REQUIRES(mu_);

  Mutex mu_;
  LogLevel level_ GUARDED_BY(mu_) = LogLevel::kInfo;
  std::unique_ptr<LogSink> sink_ GUARDED_BY(mu_);
  std::vector<std::string> secrets_ GUARDED_BY(mu_);
};

// Collects one line and hands it to the logger when destroyed.
class LogMessage {
 public:
  explicit LogMessage(LogLevel level) : level_(level) {}
  ~LogMessage();
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;
  std::ostream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};

}  // namespace millrace

#define MR_LOG(level)                                                        \
  if (!::millrace::Logger::Default().Enabled(::millrace::LogLevel::level)) { \
  } else                                                                     \
    ::millrace::LogMessage(::millrace::LogLevel::level).stream()
