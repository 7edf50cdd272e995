#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "cli/commands.h"
#include "common/logging.h"
#include "common/server_config.h"
#include "engine/database.h"

namespace millrace::cli {
namespace {

Status EnsureDirectory(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return Status::IoError("cannot create data directory '" + path + "': " + ec.message());
  return Status::Ok();
}

// Blocks SIGINT/SIGTERM in every thread (call before starting any) and returns the set, so
// that one thread can wait for them with sigwait.
sigset_t BlockShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

}  // namespace

int RunServe(const std::vector<std::string>& args) {
  const EnvLookup env = ProcessEnv();
  auto flags = ParseFlags(args, ServerConfig::Flags(), env);
  if (!flags.ok()) {
    std::fprintf(stderr, "millrace serve: %s\n", flags.status().message().c_str());
    return 2;
  }
  if (flags->help()) {
    std::printf("usage: millrace serve [options]\n\n%s",
                FlagsHelp(ServerConfig::Flags()).c_str());
    return 0;
  }
  auto config = ServerConfig::FromFlags(*flags, env);
  if (!config.ok()) {
    std::fprintf(stderr, "millrace serve: %s\n", config.status().message().c_str());
    return 2;
  }
  Logger::Default().SetLevel(ParseLogLevel(config->log_level).value_or(LogLevel::kInfo));

  if (Status status = EnsureDirectory(config->data_dir); !status.ok()) {
    std::fprintf(stderr, "millrace serve: %s\n", status.message().c_str());
    return 1;
  }
  const sigset_t signals = BlockShutdownSignals();

  engine::DatabaseOptions options;
  options.path = config->DatabasePath();
  options.memory_limit = config->memory_limit;
  options.threads = config->threads;
  auto db = engine::Database::Open(options);
  if (!db.ok()) {
    std::fprintf(stderr, "millrace serve: %s\n", db.status().message().c_str());
    return 1;
  }
  MR_LOG(kInfo) << "database open at " << options.path;
  MR_LOG(kInfo) << "the SQL server is not part of this build yet: serve holds the database "
                   "open and waits for SIGTERM or SIGINT";

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  MR_LOG(kInfo) << "received " << strsignal(signal_number) << ", shutting down";
  db->reset();  // closes the database cleanly (checkpoint) before exit
  MR_LOG(kInfo) << "stopped";
  return 0;
}

}  // namespace millrace::cli
