#include "common/strings.h"

#include <utf8cpp/utf8.h>

#include <algorithm>
#include <charconv>
#include <iterator>

namespace millrace {

// Written out rather than std::tolower/std::toupper: those depend on the locale and are
// undefined for negative chars, and every caller here wants plain ASCII folding.
char ToLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

char ToUpper(char c) {
  return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}

std::string ToLower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    c = ToLower(c);
  return out;
}

std::string ToUpper(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    c = ToUpper(c);
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ToLower(a[i]) != ToLower(b[i])) return false;
  }
  return true;
}

bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && EqualsIgnoreCase(text.substr(0, prefix.size()), prefix);
}

bool ContainsIgnoreCase(std::string_view text, std::string_view needle) {
  return std::search(text.begin(), text.end(), needle.begin(), needle.end(),
                     [](char a, char b) { return ToLower(a) == ToLower(b); }) != text.end() ||
         needle.empty();
}

std::optional<bool> ParseBool(std::string_view text) {
  const std::string lower = ToLower(text);
  if (lower == "true" || lower == "1") return true;
  if (lower == "false" || lower == "0") return false;
  return std::nullopt;
}

std::optional<int64_t> ParseInt64(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

void AppendZeroPadded(uint64_t value, int width, std::string* out) {
  char digits[24];
  const char* end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
  const auto n = static_cast<int>(end - digits);
  if (n < width) out->append(static_cast<size_t>(width - n), '0');
  out->append(digits, static_cast<size_t>(end - digits));
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && IsAsciiSpace(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && IsAsciiSpace(text.back()))
    text.remove_suffix(1);
  return text;
}

std::string Quoted(std::string_view text, char quote) {
  std::string out(1, quote);
  for (char c : text) {
    out.push_back(c);
    if (c == quote) out.push_back(quote);
  }
  return out + quote;
}

std::string Backquoted(std::string_view name) {
  return Quoted(name, '`');
}

std::vector<std::string_view> SplitString(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  size_t begin = 0;
  while (true) {
    const size_t end = text.find(separator, begin);
    if (end == std::string_view::npos) break;
    pieces.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  pieces.push_back(text.substr(begin));
  return pieces;
}

std::string ToValidUtf8(std::string_view text) {
  if (utf8::is_valid(text.begin(), text.end())) return std::string(text);
  std::string out;
  out.reserve(text.size());
  utf8::replace_invalid(text.begin(), text.end(), std::back_inserter(out));
  return out;
}

std::string_view Utf8Prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  // Back off continuation bytes (10xxxxxx) to the start of the character they belong to.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
    --end;
  return text.substr(0, end);
}

}  // namespace millrace
