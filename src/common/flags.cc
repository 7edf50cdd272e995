#include "common/flags.h"

#include <charconv>
#include <cstdlib>
#include <sstream>

namespace millrace {

EnvLookup ProcessEnv() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

std::vector<std::string> ParsedFlags::GetAll(std::string_view name) const {
  auto it = all_.find(name);
  if (it != all_.end()) return it->second;
  if (auto value = Get(name)) return {*value};
  return {};
}

std::optional<std::string> ParsedFlags::Get(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string ParsedFlags::GetOr(std::string_view name, std::string fallback) const {
  auto value = Get(name);
  return value ? *value : std::move(fallback);
}

bool ParsedFlags::GetBool(std::string_view name) const {
  auto value = Get(name);
  return value && (*value == "true" || *value == "1" || *value == "yes");
}

Result<int64_t> ParsedFlags::GetInt(std::string_view name, int64_t min, int64_t max) const {
  auto value = Get(name);
  if (!value) return Status::InvalidArgument("--" + std::string(name) + " is required");
  int64_t parsed = 0;
  const char* end = value->data() + value->size();
  auto [ptr, ec] = std::from_chars(value->data(), end, parsed);
  if (ec != std::errc() || ptr != end || parsed < min || parsed > max) {
    return Status::InvalidArgument("--" + std::string(name) + " must be an integer from " +
                                   std::to_string(min) + " to " + std::to_string(max) + ", got '" +
                                   *value + "'");
  }
  return parsed;
}

Result<double> ParsedFlags::GetDouble(std::string_view name, double min, double max) const {
  auto value = Get(name);
  if (!value) return Status::InvalidArgument("--" + std::string(name) + " is required");
  double parsed = 0;
  const char* end = value->data() + value->size();
  auto [ptr, ec] = std::from_chars(value->data(), end, parsed);
  // `!(a <= b)` also refuses NaN.
  if (ec != std::errc() || ptr != end || !(parsed >= min && parsed <= max)) {
    std::ostringstream range;
    range << min << " to " << max;
    return Status::InvalidArgument("--" + std::string(name) + " must be a number from " +
                                   range.str() + ", got '" + *value + "'");
  }
  return parsed;
}

Result<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                               const std::vector<FlagSpec>& specs, const EnvLookup& env) {
  ParsedFlags parsed;
  auto find_spec = [&](std::string_view name) -> const FlagSpec* {
    for (const FlagSpec& spec : specs) {
      if (spec.name == name) return &spec;
    }
    return nullptr;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      parsed.help_ = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      parsed.positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name.resize(eq);
    }
    const FlagSpec* spec = find_spec(name);
    if (spec == nullptr) return Status::InvalidArgument("unknown flag --" + name);
    if (spec->is_bool) {
      parsed.values_[name] = inline_value.value_or("true");
      continue;
    }
    if (inline_value) {
      parsed.values_[name] = *inline_value;
    } else if (i + 1 < args.size()) {
      parsed.values_[name] = args[++i];
    } else {
      return Status::InvalidArgument("flag --" + name + " needs a value");
    }
    if (spec->repeatable) parsed.all_[name].push_back(parsed.values_[name]);
  }
  for (const FlagSpec& spec : specs) {
    if (parsed.values_.count(spec.name) != 0) continue;
    if (!spec.env.empty()) {
      if (auto value = env(spec.env); value && !value->empty()) {
        parsed.values_[spec.name] = *value;
        if (spec.repeatable) {
          std::vector<std::string>& all = parsed.all_[spec.name];
          for (std::string_view rest = *value; !rest.empty();) {
            const size_t colon = rest.find(':');
            if (colon != 0) all.emplace_back(rest.substr(0, colon));
            if (colon == std::string_view::npos) break;
            rest.remove_prefix(colon + 1);
          }
        }
        continue;
      }
    }
    if (!spec.default_value.empty()) parsed.values_[spec.name] = spec.default_value;
  }
  return parsed;
}

std::string FlagsHelp(const std::vector<FlagSpec>& specs) {
  size_t width = 0;
  for (const FlagSpec& spec : specs)
    width = std::max(width, spec.name.size());
  std::string out;
  for (const FlagSpec& spec : specs) {
    out += "  --" + spec.name + std::string(width - spec.name.size() + 2, ' ') + spec.help;
    if (!spec.default_value.empty()) out += " (default: " + spec.default_value + ")";
    if (!spec.env.empty()) out += " [env " + spec.env + "]";
    out += '\n';
  }
  return out;
}

}  // namespace millrace
