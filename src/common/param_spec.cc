#include "common/param_spec.h"

#include <algorithm>

#include "common/strings.h"

namespace millrace {

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

}  // namespace millrace
