// Version of the build.
#pragma once

namespace millrace {

inline constexpr const char* kMillraceVersion = "0.1.0";

}  // namespace millrace
