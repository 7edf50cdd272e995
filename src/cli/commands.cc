#include "cli/commands.h"

#include <cstdio>
#include <string_view>

#include "common/version.h"
#include "engine/database.h"

namespace millrace::cli {
namespace {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(const std::vector<std::string>& args);
};

constexpr Command kCommands[] = {
    {"serve", "run the server (MySQL protocol, HTTP, streaming jobs)", RunServe},
    {"s3", "list, print or presign objects of an S3 bucket (ls, cat, presign)", RunS3},
    {"version", "print the version", RunVersion},
};

void PrintUsage(std::FILE* out) {
  std::fprintf(out, "usage: millrace <command> [options]\n\ncommands:\n");
  for (const Command& command : kCommands) {
    std::fprintf(out, "  %-10.*s %.*s\n", static_cast<int>(command.name.size()),
                 command.name.data(), static_cast<int>(command.summary.size()),
                 command.summary.data());
  }
  std::fprintf(out, "\nRun 'millrace <command> --help' for the options of a command.\n");
}

}  // namespace

int RunVersion(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::printf("usage: millrace version\n\nPrints the Millrace and DuckDB versions.\n");
    return 0;
  }
  std::printf("millrace %s (DuckDB %s)\n", kMillraceVersion, engine::LibraryVersion().c_str());
  return 0;
}

int Main(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    PrintUsage(stdout);
    return args.empty() ? 2 : 0;
  }
  for (const Command& command : kCommands) {
    if (args[0] == command.name) {
      return command.run(std::vector<std::string>(args.begin() + 1, args.end()));
    }
  }
  std::fprintf(stderr, "millrace: unknown command '%s' (try 'millrace --help')\n", args[0].c_str());
  return 2;
}

}  // namespace millrace::cli
