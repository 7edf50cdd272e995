// Parsing of S3 response documents (pugixml) and of the time formats S3 uses. Internal to the
// s3 module.
//
// Contract
// - ParseListObjectsV2 turns a ListBucketResult document into a ListPage; keys are URL-decoded
//   when the document says <EncodingType>url</EncodingType>. A document that is not XML or
//   lacks the expected elements is DATA_LOSS.
// - ParseErrorDocument never fails: a body that is not an S3 <Error> yields empty fields.
// - Times: ISO 8601 "2009-10-12T17:50:30.000Z" (listings) and RFC 7231 IMF-fixdate
//   "Mon, 12 Oct 2009 17:50:30 GMT" (Last-Modified headers), both UTC.
#pragma once

#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"
#include "s3/s3_client.h"

namespace millrace::s3 {

struct ErrorDocument {
  std::string code;     // "NoSuchKey"; "" when the body is not an S3 error document
  std::string message;  // "The specified key does not exist."
};

ErrorDocument ParseErrorDocument(std::string_view body);
Result<ListPage> ParseListObjectsV2(std::string_view body);

Result<Clock::WallTime> ParseIso8601(std::string_view text);
Result<Clock::WallTime> ParseHttpDate(std::string_view text);

// "\"abc\"" -> "abc"; S3 quotes ETags in headers and listings.
std::string StripQuotes(std::string_view etag);

}  // namespace millrace::s3
