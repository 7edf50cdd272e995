// How the console's routes answer: a JSON document, or a Status as {"error": "..."} with the
// HTTP status its code means (404 not found, 400 bad input, 403 refused, 409 wrong state,
// 500 otherwise).
#pragma once

#include <string>

#include "common/result.h"
#include "http/http_types.h"

namespace millrace::console {

http::HttpResponse Answer(const Result<std::string>& body);

}  // namespace millrace::console
