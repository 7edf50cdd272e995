#include "job/job_events.h"

#include <nlohmann/json.hpp>

#include "job/job_service.h"

namespace millrace::job {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// An object key as S3 event notifications carry it: URL-encoded, '+' for a space.
Result<std::string> DecodeKey(std::string_view encoded) {
  std::string out;
  out.reserve(encoded.size());
  for (size_t i = 0; i < encoded.size(); ++i) {
    const char c = encoded[i];
    if (c == '+') {
      out += ' ';
    } else if (c != '%') {
      out += c;
    } else if (i + 2 < encoded.size() && HexDigit(encoded[i + 1]) >= 0 &&
               HexDigit(encoded[i + 2]) >= 0) {
      out += static_cast<char>(HexDigit(encoded[i + 1]) * 16 + HexDigit(encoded[i + 2]));
      i += 2;
    } else {
      return Status::InvalidArgument("object key \"" + std::string(encoded) +
                                     "\" has a bad %-escape");
    }
  }
  return out;
}

EventAnswer JsonAnswer(int status, nlohmann::json body) {
  return EventAnswer{status, body.dump() + "\n"};
}

}  // namespace

Result<std::vector<std::string>> ParseS3Events(std::string_view body) {
  const nlohmann::json doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::InvalidArgument("the body is not a JSON object");
  }
  auto records = doc.find("Records");
  if (records == doc.end() || !records->is_array()) {
    return Status::InvalidArgument(
        "the body has no \"Records\" array (an S3 event notification; AWS SNS's envelope is not "
        "read)");
  }
  std::vector<std::string> locations;
  for (size_t i = 0; i < records->size(); ++i) {
    const nlohmann::json& record = (*records)[i];
    const std::string where = "record " + std::to_string(i);
    if (!record.is_object()) return Status::InvalidArgument(where + " is not an object");
    const std::string event = record.value("eventName", "");
    // "s3:ObjectCreated:Put" (RGW, MinIO) or "ObjectCreated:Put" (AWS).
    if (event.find("ObjectCreated") == std::string::npos) continue;
    const nlohmann::json* s3 = record.contains("s3") ? &record["s3"] : nullptr;
    if (s3 == nullptr || !s3->is_object() || !s3->contains("bucket") ||
        !(*s3)["bucket"].is_object() ||
        !(*s3)["bucket"].value("name", nlohmann::json()).is_string() || !s3->contains("object") ||
        !(*s3)["object"].is_object() ||
        !(*s3)["object"].value("key", nlohmann::json()).is_string()) {
      return Status::InvalidArgument(where + " lacks s3.bucket.name or s3.object.key");
    }
    const std::string bucket = (*s3)["bucket"]["name"].get<std::string>();
    auto key = DecodeKey((*s3)["object"]["key"].get<std::string>());
    if (!key.ok()) return key.status().WithContext(where);
    locations.push_back("s3://" + bucket + "/" + *key);
  }
  return locations;
}

EventIntake::EventIntake(JobService* service, MetricsRegistry* metrics) : service_(service) {
  if (metrics == nullptr) return;
  received_ = metrics->AddCounter("millrace_events_received_total",
                                  "Events received: local files landed (inotify) and objects "
                                  "of S3 event notifications");
  matched_ = metrics->AddCounter("millrace_events_matched_total", "Events that woke a job");
  rejected_ = metrics->AddCounter("millrace_events_rejected_total",
                                  "S3 event notifications refused: no job has their secret");
  unmatched_ = metrics->AddCounter(
      "millrace_events_unmatched_total",
      "Objects of authenticated S3 event notifications that no job of the secret reads");
}

void EventIntake::Local(const std::string& path, bool directory) {
  Count(received_);
  if (service_->Wake(path, directory) > 0) Count(matched_);
}

EventAnswer EventIntake::S3(std::string_view body, std::string_view secret) {
  auto locations = ParseS3Events(body);
  if (!locations.ok()) {
    return JsonAnswer(400, {{"error", locations.status().message()}});
  }
  Count(received_, static_cast<int64_t>(locations->size()));
  const JobService::ObjectWakeups woken = service_->WakeForObjects(*locations, secret);
  if (!woken.authenticated) {
    Count(rejected_);
    return JsonAnswer(403, {{"error", "no job has this event secret (s3.event_secret)"}});
  }
  Count(matched_, woken.matched);
  Count(unmatched_, woken.unmatched);
  return JsonAnswer(200, {{"matched", woken.matched}, {"unmatched", woken.unmatched}});
}

}  // namespace millrace::job
