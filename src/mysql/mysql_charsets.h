// The character sets of MySQL and MariaDB columns as Millrace decodes them: which character set a
// collation number belongs to, and MySQL's latin1 text as UTF-8.
//
// Contract
// - CharsetOf knows binary, latin1, ascii, utf8mb3 and utf8mb4 by their collation numbers
//   (MariaDB 10.11's and MySQL 8's utf8mb4_0900 ones); any other collation is kOther, which the
//   caller refuses. ascii, utf8mb3 and utf8mb4 are all kUtf8: their bytes are UTF-8 as stored.
// - Latin1ToUtf8 converts MySQL's latin1, which is cp1252, byte by byte; every byte has a
//   character, so it cannot fail.
// - Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace millrace::mysql {

enum class Charset { kBinary, kLatin1, kUtf8, kOther };

// The character set of a collation number.
Charset CharsetOf(uint32_t collation);

// MySQL's latin1 (cp1252) bytes as UTF-8 text.
std::string Latin1ToUtf8(std::string_view text);

}  // namespace millrace::mysql
