#include "testing/test_paths.h"

namespace millrace::testing {
namespace {

std::string Join(std::string_view root, std::string_view relative) {
  std::string path(root);
  if (!relative.empty()) {
    path += '/';
    path += relative;
  }
  return path;
}

}  // namespace

std::string SourcePath(std::string_view relative) {
  return Join(MILLRACE_SOURCE_DIR, relative);
}
std::string NpmPath(std::string_view relative) {
  return Join(MILLRACE_NPM_DIR, relative);
}
std::string BinaryPath(std::string_view relative) {
  return Join(MILLRACE_BINARY_DIR, relative);
}
std::string MillraceBinary() {
  return BinaryPath("millrace");
}

}  // namespace millrace::testing
