// JSON text helpers for the small documents Millrace renders itself (views, health, errors).
#pragma once

#include <string>
#include <string_view>

namespace millrace {

// `text` as a JSON string literal, quotes included, with ", \ and control characters escaped.
std::string JsonQuote(std::string_view text);

}  // namespace millrace
