// ASCII string helpers: case folding, case-insensitive comparison and trimming.
//
// Contract
// - ASCII only: 'A'-'Z' and 'a'-'z' fold into each other; every other byte (UTF-8 sequences
//   included) is left as it is. The result never depends on the process locale, so SQL
//   keywords, property names, HTTP header names and log levels compare the same everywhere.
// - Whitespace is the C locale's: space, \t, \n, \v, \f and \r.
// - Pure functions; safe to call from any thread. Returned views point into the argument.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace millrace {

char ToLower(char c);
char ToUpper(char c);
std::string ToLower(std::string_view text);
std::string ToUpper(std::string_view text);

// True when `a` and `b` have the same length and equal bytes after folding ASCII case.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
// True when `text` begins with `prefix`, ignoring ASCII case.
bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix);
// True when `needle` occurs in `text`, ignoring ASCII case.
bool ContainsIgnoreCase(std::string_view text, std::string_view needle);

// The whole of `text` as a decimal integer (an optional '-' and digits); nullopt otherwise.
std::optional<int64_t> ParseInt64(std::string_view text);
// "true" or "1" as true, "false" or "0" as false, in any case (Doris's boolean properties and
// parameters); nullopt for anything else.
std::optional<bool> ParseBool(std::string_view text);

bool IsAsciiSpace(char c);
// `text` without leading and trailing whitespace.
std::string_view Trim(std::string_view text);
// The pieces of `text` between `separator`s (one piece when there is none; empty pieces kept).
std::vector<std::string_view> SplitString(std::string_view text, char separator);
// `bytes` as lower-case hexadecimal digits, two a byte.
std::string HexEncode(std::string_view bytes);
// Appends `value` in decimal, zero-padded to `width` digits (more when it has more), as
// printf's "%0<width>" would, without parsing a format: dates and times written per value.
void AppendZeroPadded(uint64_t value, int width, std::string* out);
// `text` between `quote`s, a quote inside doubled: MySQL's and Doris's 'strings',
// "double-quoted" property values and `names`.
std::string Quoted(std::string_view text, char quote);
// `name` in backquotes, a backquote doubled: an identifier as MySQL and Doris write it.
std::string Backquoted(std::string_view name);
// `text` with every byte sequence that is not UTF-8 replaced by U+FFFD: text from a file (a
// value, a column name quoted in a reader's error) made fit for a VARCHAR.
std::string ToValidUtf8(std::string_view text);
// The longest prefix of UTF-8 `text` of at most `max_bytes` that does not split a character.
std::string_view Utf8Prefix(std::string_view text, size_t max_bytes);

}  // namespace millrace
