// JSON text, read and written through one library (nlohmann-json), so that what Millrace
// renders (views, health, offsets) parses back to the same value with the parser it uses for
// what users give it (offsets, jsonpaths).
//
// Contract
// - ParseJson returns the document `text` holds (RFC 8259: strict syntax, strings in UTF-8),
//   or INVALID_ARGUMENT "not valid JSON: <where and why>". The library's exceptions never
//   leave it. Callers add what the text was (WithContext), e.g. the property's name.
// - RenderJson and JsonQuote never throw. Strings are written as UTF-8 (non-ASCII is not
//   \u-escaped); ", \ and control characters are escaped (\n, \t, ..., \u0001). A string that
//   is not valid UTF-8 has each bad byte rendered as U+FFFD: the output is always valid JSON,
//   but such a string does not read back byte for byte (valid UTF-8 does).
// - Thread-safety: pure functions.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "common/result.h"

namespace millrace {

Result<nlohmann::json> ParseJson(std::string_view text);

// `value` as compact JSON text.
std::string RenderJson(const nlohmann::json& value);

// `text` as a JSON string literal, quotes included.
std::string JsonQuote(std::string_view text);

}  // namespace millrace
