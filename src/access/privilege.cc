#include "access/privilege.h"

#include <array>

#include "common/strings.h"

namespace millrace::access {
namespace {

constexpr std::array<Privilege, 6> kPrivileges = {Privilege::kSelect, Privilege::kLoad,
                                                  Privilege::kAlter,  Privilege::kCreate,
                                                  Privilege::kDrop,   Privilege::kAdmin};

PrivilegeSet Only(Privilege p) {
  return PrivilegeSet(static_cast<uint8_t>(p));
}

// Every privilege but ADMIN_PRIV: what MySQL's ALL gives.
PrivilegeSet AllButAdmin() {
  PrivilegeSet set = PrivilegeSet::All();
  set.Remove(Only(Privilege::kAdmin));
  return set;
}

// The name with runs of blanks made one space ("ALL   PRIVILEGES" -> "ALL PRIVILEGES").
std::string NormalizeBlanks(std::string_view name) {
  std::string out;
  for (char c : Trim(name)) {
    if (IsAsciiSpace(c)) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string_view PrivilegeName(Privilege p) {
  switch (p) {
    case Privilege::kSelect:
      return "SELECT_PRIV";
    case Privilege::kLoad:
      return "LOAD_PRIV";
    case Privilege::kAlter:
      return "ALTER_PRIV";
    case Privilege::kCreate:
      return "CREATE_PRIV";
    case Privilege::kDrop:
      return "DROP_PRIV";
    case Privilege::kAdmin:
      return "ADMIN_PRIV";
  }
  return "UNKNOWN_PRIV";
}

std::string PrivilegeNames(PrivilegeSet set) {
  std::string out;
  for (Privilege p : kPrivileges) {
    if (!set.Has(p)) continue;
    if (!out.empty()) out += ',';
    out += PrivilegeName(p);
  }
  return out;
}

std::optional<PrivilegeSet> ParsePrivilegeName(std::string_view name) {
  const std::string normalized = NormalizeBlanks(name);
  for (Privilege p : kPrivileges) {
    if (EqualsIgnoreCase(normalized, PrivilegeName(p))) return Only(p);
  }
  struct Alias {
    std::string_view name;
    PrivilegeSet set;
  };
  const Alias kAliases[] = {
      {"SELECT", Only(Privilege::kSelect)},
      {"INSERT", Only(Privilege::kLoad)},
      {"UPDATE", Only(Privilege::kLoad)},
      {"DELETE", Only(Privilege::kLoad)},
      {"LOAD", Only(Privilege::kLoad)},
      {"ALTER", Only(Privilege::kAlter)},
      {"CREATE", Only(Privilege::kCreate)},
      {"CREATE VIEW", Only(Privilege::kCreate)},
      {"DROP", Only(Privilege::kDrop)},
      {"ADMIN", Only(Privilege::kAdmin)},
      {"SUPER", Only(Privilege::kAdmin)},
      {"GRANT OPTION", Only(Privilege::kAdmin)},
      {"ALL", AllButAdmin()},
      {"ALL PRIVILEGES", AllButAdmin()},
      {"USAGE", PrivilegeSet()},
  };
  for (const Alias& alias : kAliases) {
    if (EqualsIgnoreCase(normalized, alias.name)) return alias.set;
  }
  return std::nullopt;
}

std::string GrantObject::ToString() const {
  if (global()) return "*.*";
  const std::string prefix = catalog.empty() ? "" : catalog + ".";
  if (database.empty()) return prefix + "*.*";
  return prefix + database + "." + (table.empty() ? std::string("*") : table);
}

bool GrantObject::CoversIn(std::string_view cat, std::string_view db, std::string_view tbl) const {
  if (global()) return true;
  if (!EqualsIgnoreCase(catalog, cat)) return false;
  if (database.empty()) return true;  // ctl.*.*
  if (!EqualsIgnoreCase(database, db)) return false;
  if (table.empty()) return true;
  return !tbl.empty() && EqualsIgnoreCase(table, tbl);
}

bool GrantObject::SameAs(const GrantObject& other) const {
  return EqualsIgnoreCase(catalog, other.catalog) && EqualsIgnoreCase(database, other.database) &&
         EqualsIgnoreCase(table, other.table);
}

}  // namespace millrace::access
