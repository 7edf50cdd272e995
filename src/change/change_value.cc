#include "change/change_value.h"

#include <nlohmann/json.hpp>

namespace millrace::change {

std::string ValueSql(const TypeMapping& mapping, std::string_view expr) {
  const std::string e(expr);
  switch (mapping.form) {
    case ValueForm::kBytea:
      return "unhex(substr(" + e + ", 3))";
    case ValueForm::kInterval:
      return "CAST(replace(" + e + ", '+', '') AS INTERVAL)";
    case ValueForm::kArray:
      return "CAST(CAST(" + e + " AS JSON) AS " + mapping.duckdb_type + ")";
    case ValueForm::kCast:
      if (mapping.duckdb_type == "VARCHAR") return e;
      return "CAST(" + e + " AS " + mapping.duckdb_type + ")";
  }
  return e;
}

Result<std::string> StageText(const TypeMapping& mapping, std::string_view text) {
  if (mapping.form == ValueForm::kArray) return ArrayToJson(text);
  return std::string(text);
}

Result<std::string> ArrayToJson(std::string_view text) {
  auto bad = [&](const char* why) {
    return Status::InvalidArgument("array value '" + std::string(text.substr(0, 80)) + "': " + why);
  };
  // An array with explicit bounds prints them first: [0:2]={...}.
  if (!text.empty() && text[0] == '[') {
    const size_t eq = text.find('=');
    if (eq == std::string_view::npos) return bad("malformed bounds");
    text.remove_prefix(eq + 1);
  }
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return bad("not {...}");
  nlohmann::json out = nlohmann::json::array();
  size_t i = 1;
  const size_t end = text.size() - 1;
  if (i == end) return out.dump();
  while (i <= end) {
    if (text[i] == '{') return bad("multi-dimensional arrays are not supported");
    std::string element;
    bool quoted = false;
    if (text[i] == '"') {
      quoted = true;
      ++i;
      while (i < end && text[i] != '"') {
        if (text[i] == '\\' && i + 1 < end) ++i;
        element += text[i++];
      }
      if (i >= end) return bad("unterminated quoted element");
      ++i;  // the closing quote
    } else {
      while (i < end && text[i] != ',')
        element += text[i++];
    }
    if (!quoted && element == "NULL") {
      out.push_back(nullptr);
    } else {
      out.push_back(element);
    }
    if (i == end) break;
    if (text[i] != ',') return bad("expected ','");
    ++i;
  }
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace millrace::change
