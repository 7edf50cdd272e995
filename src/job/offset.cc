#include "job/offset.h"

#include "common/json.h"

namespace millrace::job {

Result<Offset> Offset::Parse(std::string_view json) {
  if (json.empty()) return Offset();
  auto parsed = ParseJson(json);
  if (!parsed.ok()) return parsed.status().WithContext("offset '" + std::string(json) + "'");
  if (!parsed->is_object()) {
    return Status::InvalidArgument("offset '" + std::string(json) + "' is not a JSON object");
  }
  return Offset(std::move(parsed).value());
}

Offset Offset::FileName(std::string_view key) {
  if (key.empty()) return Offset();
  return Offset().With(kFileNamePart, std::string(key));
}

std::string Offset::ToJson() const {
  if (parts_.empty()) return "";
  // nlohmann's object keeps keys sorted, so the text is canonical.
  return RenderJson(parts_);
}

std::string Offset::Text(std::string_view name) const {
  auto it = parts_.find(name);
  if (it == parts_.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

Offset Offset::With(std::string_view name, nlohmann::json value) const {
  nlohmann::json parts = parts_;
  parts[std::string(name)] = std::move(value);
  return Offset(std::move(parts));
}

}  // namespace millrace::job
