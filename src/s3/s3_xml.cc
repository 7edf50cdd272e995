#include "s3/s3_xml.h"

#include <charconv>
#include <cstring>
#include <ctime>
#include <pugixml.hpp>

#include "s3/sigv4.h"

namespace millrace::s3 {
namespace {

// Reads `count` decimal digits at text[*pos]; -1 when any is not a digit.
int Digits(std::string_view text, size_t* pos, size_t count) {
  if (*pos + count > text.size()) return -1;
  int value = 0;
  for (size_t i = 0; i < count; ++i) {
    const char c = text[*pos + i];
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  *pos += count;
  return value;
}

bool Expect(std::string_view text, size_t* pos, std::string_view literal) {
  if (text.substr(*pos, literal.size()) != literal) return false;
  *pos += literal.size();
  return true;
}

Result<Clock::WallTime> FromUtcFields(int year, int month, int day, int hour, int minute,
                                      int second, std::string_view text) {
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 ||
      minute < 0 || minute > 59 || second < 0 || second > 60) {
    return Status::DataLoss("invalid time '" + std::string(text) + "'");
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string ChildText(const pugi::xml_node& node, const char* name) {
  return node.child(name).text().as_string();
}

}  // namespace

std::string StripQuotes(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return std::string(etag);
}

Result<Clock::WallTime> ParseIso8601(std::string_view text) {
  size_t pos = 0;
  const int year = Digits(text, &pos, 4);
  const bool dash1 = Expect(text, &pos, "-");
  const int month = Digits(text, &pos, 2);
  const bool dash2 = Expect(text, &pos, "-");
  const int day = Digits(text, &pos, 2);
  const bool t = Expect(text, &pos, "T");
  const int hour = Digits(text, &pos, 2);
  const bool colon1 = Expect(text, &pos, ":");
  const int minute = Digits(text, &pos, 2);
  const bool colon2 = Expect(text, &pos, ":");
  const int second = Digits(text, &pos, 2);
  if (!dash1 || !dash2 || !t || !colon1 || !colon2) {
    return Status::DataLoss("invalid time '" + std::string(text) + "'");
  }
  std::chrono::milliseconds fraction{0};
  if (Expect(text, &pos, ".")) {
    int scale = 100;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      fraction += std::chrono::milliseconds((text[pos] - '0') * scale);
      scale /= 10;
      ++pos;
    }
  }
  if (!Expect(text, &pos, "Z") || pos != text.size()) {
    return Status::DataLoss("invalid time '" + std::string(text) + "'");
  }
  MR_ASSIGN_OR_RETURN(Clock::WallTime whole,
                      FromUtcFields(year, month, day, hour, minute, second, text));
  return whole + fraction;
}

Result<Clock::WallTime> ParseHttpDate(std::string_view text) {
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  // "Mon, 12 Oct 2009 17:50:30 GMT": the weekday is redundant and not checked.
  size_t pos = text.find(", ");
  if (pos == std::string_view::npos)
    return Status::DataLoss("invalid HTTP date '" + std::string(text) + "'");
  pos += 2;
  const int day = Digits(text, &pos, 2);
  const bool space1 = Expect(text, &pos, " ");
  int month = 0;
  for (int i = 0; i < 12; ++i) {
    if (text.substr(pos, 3) == kMonths[i]) month = i + 1;
  }
  pos += 3;
  const bool space2 = Expect(text, &pos, " ");
  const int year = Digits(text, &pos, 4);
  const bool space3 = Expect(text, &pos, " ");
  const int hour = Digits(text, &pos, 2);
  const bool colon1 = Expect(text, &pos, ":");
  const int minute = Digits(text, &pos, 2);
  const bool colon2 = Expect(text, &pos, ":");
  const int second = Digits(text, &pos, 2);
  if (!space1 || !space2 || !space3 || !colon1 || !colon2 || !Expect(text, &pos, " GMT")) {
    return Status::DataLoss("invalid HTTP date '" + std::string(text) + "'");
  }
  return FromUtcFields(year, month, day, hour, minute, second, text);
}

ErrorDocument ParseErrorDocument(std::string_view body) {
  ErrorDocument out;
  pugi::xml_document doc;
  if (!doc.load_buffer(body.data(), body.size())) return out;
  const pugi::xml_node error = doc.child("Error");
  out.code = ChildText(error, "Code");
  out.message = ChildText(error, "Message");
  return out;
}

Result<ListPage> ParseListObjectsV2(std::string_view body) {
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_buffer(body.data(), body.size());
  if (!parsed) {
    return Status::DataLoss(std::string("malformed ListObjectsV2 response: ") +
                            parsed.description() + " at byte " + std::to_string(parsed.offset));
  }
  const pugi::xml_node root = doc.child("ListBucketResult");
  if (!root) return Status::DataLoss("malformed ListObjectsV2 response: no ListBucketResult");
  const bool url_encoded = ChildText(root, "EncodingType") == "url";

  ListPage page;
  const std::string truncated = ChildText(root, "IsTruncated");
  page.truncated = truncated == "true";
  page.next_continuation_token = ChildText(root, "NextContinuationToken");
  for (const pugi::xml_node contents : root.children("Contents")) {
    ObjectInfo info;
    const std::string key = ChildText(contents, "Key");
    info.key = url_encoded ? UriDecode(key, /*plus_is_space=*/true) : key;
    info.etag = StripQuotes(ChildText(contents, "ETag"));
    const std::string size = ChildText(contents, "Size");
    auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), info.size);
    if (info.key.empty() || size.empty() || ec != std::errc() || end != size.data() + size.size()) {
      return Status::DataLoss("malformed ListObjectsV2 response: entry '" + info.key +
                              "' has no key or a bad size '" + size + "'");
    }
    MR_ASSIGN_OR_RETURN(info.last_modified, ParseIso8601(ChildText(contents, "LastModified")));
    page.objects.push_back(std::move(info));
  }
  if (page.truncated && page.next_continuation_token.empty()) {
    return Status::DataLoss(
        "malformed ListObjectsV2 response: truncated without NextContinuationToken");
  }
  return page;
}

}  // namespace millrace::s3
