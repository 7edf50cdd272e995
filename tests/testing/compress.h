// Test data compressed in each format the loaders read (load::Compression), by the real
// libraries, for tests that stage compressed files.
#pragma once

#include <string>

#include "load/file_params.h"

namespace millrace::testing {

std::string Compress(load::Compression compression, const std::string& in);

}  // namespace millrace::testing
