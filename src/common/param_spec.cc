#include "common/param_spec.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <optional>

#include "common/strings.h"

namespace millrace {
namespace {

bool ParseInteger(std::string_view text, int64_t* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && ptr == text.data() + text.size();
}

// `text` without its unit suffix, and the unit's multiplier (1 when there is none).
struct Unit {
  std::string_view digits;
  int64_t multiplier = 1;
};

Unit SplitUnit(std::string_view text, const std::vector<std::pair<char, int64_t>>& units) {
  if (text.empty()) return {text};
  const char last = static_cast<char>(std::tolower(static_cast<unsigned char>(text.back())));
  for (const auto& [suffix, multiplier] : units) {
    if (last == suffix) return {text.substr(0, text.size() - 1), multiplier};
  }
  return {text};
}

const std::vector<std::pair<char, int64_t>>& SecondUnits() {
  static const std::vector<std::pair<char, int64_t>> kUnits = {{'s', 1}, {'m', 60}, {'h', 3600}};
  return kUnits;
}

const std::vector<std::pair<char, int64_t>>& ByteUnits() {
  static const std::vector<std::pair<char, int64_t>> kUnits = {{'k', int64_t{1} << 10},
                                                               {'m', int64_t{1} << 20},
                                                               {'g', int64_t{1} << 30},
                                                               {'t', int64_t{1} << 40}};
  return kUnits;
}

// An integer with an optional unit, times the unit, if it does not overflow.
bool ParseWithUnit(std::string_view text, const std::vector<std::pair<char, int64_t>>& units,
                   int64_t* out) {
  const Unit unit = SplitUnit(text, units);
  int64_t n = 0;
  if (!ParseInteger(unit.digits, &n) || n < 0 || n > kNoBound / unit.multiplier) return false;
  *out = n * unit.multiplier;
  return true;
}

// `n` in the largest of `units` that divides it, as the parser reads it back ("100M", "8760h").
std::string WithUnit(int64_t n, const std::vector<std::pair<char, int64_t>>& units) {
  for (size_t i = units.size(); i-- > 0;) {
    const auto [suffix, multiplier] = units[i];
    if (multiplier > 1 && n >= multiplier && n % multiplier == 0) {
      return std::to_string(n / multiplier) + static_cast<char>(std::toupper(suffix));
    }
  }
  return std::to_string(n);
}

std::string SizeText(int64_t bytes) {
  return WithUnit(bytes, ByteUnits());
}

std::string SecondsText(int64_t seconds) {
  std::string text = WithUnit(seconds, SecondUnits());
  if (!std::isdigit(static_cast<unsigned char>(text.back())))
    text.back() = std::tolower(text.back());
  return text;
}

std::string Bounds(const ParamSpec& spec, const std::function<std::string(int64_t)>& text) {
  if (spec.max != kNoBound) return " from " + text(spec.min) + " to " + text(spec.max);
  if (spec.min > 0) return " of at least " + text(spec.min);
  return "";
}

std::string Number(int64_t n) {
  return std::to_string(n);
}

}  // namespace

bool ParamNamed(const ParamSpec& spec, std::string_view key) {
  if (EqualsIgnoreCase(spec.name, key)) return true;
  return std::any_of(spec.aliases.begin(), spec.aliases.end(),
                     [&](std::string_view alias) { return EqualsIgnoreCase(alias, key); });
}

const ParamSpec* FindParam(const std::vector<ParamSpec>& specs, std::string_view key,
                           uint8_t scope) {
  for (const ParamSpec& spec : specs) {
    if (ParamNamed(spec, key) && (spec.scopes & scope) != 0) return &spec;
  }
  return nullptr;
}

std::string ParamNames(const std::vector<ParamSpec>& specs, uint8_t scope) {
  std::string names;
  for (const ParamSpec& spec : specs) {
    if ((spec.scopes & scope) != 0) names += (names.empty() ? "" : ", ") + std::string(spec.name);
  }
  return names;
}

bool IsSecretParam(const std::vector<ParamSpec>& specs, std::string_view key) {
  const ParamSpec* spec = FindParam(specs, key);
  return spec != nullptr && spec->secret;
}

std::string AcceptedValues(const ParamSpec& spec) {
  if (!spec.accepted.empty()) return std::string(spec.accepted);
  switch (spec.type) {
    case ParamType::kString:
      return "text";
    case ParamType::kBool:
      return "true or false";
    case ParamType::kInt:
      if (spec.max == kNoBound && spec.min == 0) return "a non-negative integer";
      if (spec.max == kNoBound) return "at least " + Number(spec.min);
      return "an integer" + Bounds(spec, Number);
    case ParamType::kNumber:
      return "a number" + Bounds(spec, Number);
    case ParamType::kSeconds:
      return "seconds" + Bounds(spec, SecondsText) + " (\"10\", \"10s\", \"5m\", \"1h\")";
    case ParamType::kBytes:
      return "a size" + Bounds(spec, SizeText) + " (\"1048576\", \"512M\", \"10G\")";
    case ParamType::kChoice: {
      std::string out = "one of ";
      for (size_t i = 0; i < spec.choices.size(); ++i)
        out += (i == 0 ? "" : ", ") + std::string(spec.choices[i]);
      return out;
    }
  }
  return "";
}

Result<ParamValue> ParseParamValue(const ParamSpec& spec, std::string_view value,
                                   std::string_view key) {
  ParamValue out{std::string(value)};
  bool ok = true;
  switch (spec.type) {
    case ParamType::kString:
      break;
    case ParamType::kBool: {
      const std::optional<bool> parsed = ParseBool(value);
      ok = parsed.has_value();
      out.boolean = parsed.value_or(false);
      break;
    }
    case ParamType::kInt:
      ok = ParseInteger(value, &out.integer);
      break;
    case ParamType::kSeconds:
      ok = ParseWithUnit(value, SecondUnits(), &out.integer);
      break;
    case ParamType::kBytes: {
      // "512MB" as "512M"; a bare "B" after digits is no unit.
      std::string_view text = value;
      if (text.size() > 1 && (text.back() == 'b' || text.back() == 'B') &&
          !std::isdigit(static_cast<unsigned char>(text[text.size() - 2]))) {
        text.remove_suffix(1);
      }
      ok = ParseWithUnit(text, ByteUnits(), &out.integer);
      break;
    }
    case ParamType::kNumber: {
      const std::string text(value);
      char* end = nullptr;
      out.number = std::strtod(text.c_str(), &end);
      ok = !text.empty() && end == text.c_str() + text.size() && std::isfinite(out.number) &&
           out.number >= static_cast<double>(spec.min) &&
           (spec.max == kNoBound || out.number <= static_cast<double>(spec.max));
      break;
    }
    case ParamType::kChoice:
      out.text = ToLower(value);
      ok = std::find(spec.choices.begin(), spec.choices.end(), out.text) != spec.choices.end();
      break;
  }
  const bool bounded = spec.type == ParamType::kInt || spec.type == ParamType::kSeconds ||
                       spec.type == ParamType::kBytes;
  if (ok && bounded) ok = out.integer >= spec.min && out.integer <= spec.max;
  if (!ok) {
    return Status::InvalidArgument("\"" + std::string(key.empty() ? spec.name : key) +
                                   "\" must be " + AcceptedValues(spec) + ", got '" +
                                   std::string(value) + "'");
  }
  return out;
}

Status ParamValues::Add(const ParamSpec& spec, std::string_view key, std::string_view value) {
  MR_ASSIGN_OR_RETURN(ParamValue parsed, ParseParamValue(spec, value, key));
  values_.insert_or_assign(std::string(spec.name), std::move(parsed));
  given_.emplace(spec.name);
  return Status::Ok();
}

Status ParamValues::Complete(const std::vector<ParamSpec>& specs, uint8_t scope) {
  for (const ParamSpec& spec : specs) {
    if ((spec.scopes & scope) == 0 || Given(spec.name)) continue;
    if (spec.required) {
      return Status::InvalidArgument(
          "\"" + std::string(spec.name) + "\" is required" +
          (spec.description.empty() ? "" : " (" + std::string(spec.description) + ")"));
    }
    if (spec.default_value.empty()) continue;
    MR_ASSIGN_OR_RETURN(ParamValue parsed, ParseParamValue(spec, spec.default_value));
    values_.insert_or_assign(std::string(spec.name), std::move(parsed));
  }
  return Status::Ok();
}

const ParamValue* ParamValues::Find(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

std::string ParamValues::Text(std::string_view name) const {
  const ParamValue* v = Find(name);
  return v == nullptr ? std::string() : v->text;
}

bool ParamValues::Bool(std::string_view name) const {
  const ParamValue* v = Find(name);
  return v != nullptr && v->boolean;
}

std::optional<int64_t> ParamValues::Int(std::string_view name) const {
  const ParamValue* v = Find(name);
  return v == nullptr ? std::nullopt : std::optional<int64_t>(v->integer);
}

double ParamValues::Number(std::string_view name) const {
  const ParamValue* v = Find(name);
  return v == nullptr ? 0 : v->number;
}

std::string ParamsMarkdown(const std::vector<ParamSpec>& specs, std::string_view name_header,
                           const std::vector<ParamScopeColumn>& scope_columns) {
  std::string header = "| " + std::string(name_header) + " |";
  std::string rule = "| --- |";
  for (const ParamScopeColumn& column : scope_columns) {
    header += " " + std::string(column.header) + " |";
    rule += " --- |";
  }
  std::string out = header + " default | accepted | meaning |\n" + rule + " --- | --- | --- |\n";
  for (const ParamSpec& spec : specs) {
    std::string names = "`" + std::string(spec.name) + "`";
    for (size_t i = 0; i < spec.aliases.size(); ++i)
      names += (i == 0 ? " (also `" : ", `") + std::string(spec.aliases[i]) + "`";
    if (!spec.aliases.empty()) names += ")";
    out += "| " + names + " |";
    for (const ParamScopeColumn& column : scope_columns)
      out += (spec.scopes & column.scope) != 0 ? " yes |" : " |";
    const std::string def = spec.required ? "(required)"
                            : spec.default_value.empty()
                                ? ""
                                : "`" + std::string(spec.default_value) + "`";
    out +=
        " " + def + " | " + AcceptedValues(spec) + " | " + std::string(spec.description) + " |\n";
  }
  return out;
}

}  // namespace millrace
