#include "common/json.h"

#include <nlohmann/json.hpp>

namespace millrace {

Result<nlohmann::json> ParseJson(std::string_view text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // what() is "[json.exception.parse_error.101] parse error at line 1, column 5: ...": the
    // bracketed id means nothing to a user, the position and the reason do.
    std::string_view why = e.what();
    if (const size_t end = why.find("] "); why.starts_with('[') && end != why.npos) {
      why.remove_prefix(end + 2);
    }
    return Status::InvalidArgument("not valid JSON: " + std::string(why));
  }
}

std::string RenderJson(const nlohmann::json& value) {
  // error_handler_t::replace: keys and values can be arbitrary bytes (file names), and the
  // default handler throws on invalid UTF-8.
  return value.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

std::string JsonQuote(std::string_view text) {
  return RenderJson(nlohmann::json(text));
}

}  // namespace millrace
