// Privileges in Doris's model: what a grant gives and on which object.
//
// Model
// - Six privileges, named as Doris names them: SELECT_PRIV (read), LOAD_PRIV (INSERT, UPDATE,
//   DELETE, and jobs), ALTER_PRIV, CREATE_PRIV, DROP_PRIV, ADMIN_PRIV (users, grants, local(),
//   CHECKPOINT; at *.* it implies every other privilege everywhere).
// - A grant names an object at one of three levels: `*.*` (global), `db.*` (database) or
//   `db.tbl` (table or view). A privilege held at a level holds for everything below it.
//   Database and table names compare case-insensitively, as DuckDB resolves them.
// - Objects of an external catalog (external/catalog_def.h) are named as in Doris: `ctl.*.*`
//   (the catalog), `ctl.db.*`, `ctl.db.tbl`. `*.*` (or `*.*.*`) covers every catalog;
//   `internal.db.tbl` is `db.tbl`. A catalog's grants never cover the embedded databases, nor
//   the server itself.
// - MySQL's names are accepted as aliases when parsing (ParsePrivilegeName).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace millrace::access {

enum class Privilege : uint8_t {
  kSelect = 1 << 0,
  kLoad = 1 << 1,
  kAlter = 1 << 2,
  kCreate = 1 << 3,
  kDrop = 1 << 4,
  kAdmin = 1 << 5,
};

// A set of privileges (a bit per Privilege).
class PrivilegeSet {
 public:
  constexpr PrivilegeSet() = default;
  constexpr explicit PrivilegeSet(uint8_t bits) : bits_(bits) {}
  static constexpr PrivilegeSet All() { return PrivilegeSet(0x3f); }

  constexpr bool Has(Privilege p) const { return (bits_ & static_cast<uint8_t>(p)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr uint8_t bits() const { return bits_; }
  void Add(Privilege p) { bits_ |= static_cast<uint8_t>(p); }
  void Add(PrivilegeSet s) { bits_ |= s.bits_; }
  void Remove(PrivilegeSet s) { bits_ &= static_cast<uint8_t>(~s.bits_); }
  friend constexpr bool operator==(PrivilegeSet a, PrivilegeSet b) { return a.bits_ == b.bits_; }

 private:
  uint8_t bits_ = 0;
};

// "SELECT_PRIV", "LOAD_PRIV", ...
std::string_view PrivilegeName(Privilege p);
// The names of a set, in declaration order, comma-separated ("SELECT_PRIV,LOAD_PRIV").
std::string PrivilegeNames(PrivilegeSet set);
// Doris names (SELECT_PRIV...) and MySQL aliases, case-insensitively: SELECT; INSERT, UPDATE,
// DELETE, LOAD -> LOAD_PRIV; ALTER; CREATE, CREATE VIEW -> CREATE_PRIV; DROP; ADMIN, SUPER,
// GRANT OPTION -> ADMIN_PRIV; ALL, ALL PRIVILEGES -> every privilege but ADMIN_PRIV (as in
// MySQL, where ALL excludes GRANT OPTION); USAGE -> no privilege. Words of a multi-word name
// may be separated by any blanks. nullopt when unknown.
std::optional<PrivilegeSet> ParsePrivilegeName(std::string_view name);

// The name Doris gives the embedded catalog: `internal.db.tbl` is `db.tbl`.
inline constexpr std::string_view kInternalCatalog = "internal";

// The object of a grant. An empty catalog is the embedded one: there an empty database means
// `*.*` and an empty table `db.*`. A catalog's object (`catalog` set) with an empty database
// is `ctl.*.*`, with an empty table `ctl.db.*`.
struct GrantObject {
  std::string database;
  std::string table;
  std::string catalog;  // "": the embedded catalog (or *.*)

  // "*.*", "db.*", "db.tbl", "ctl.*.*", "ctl.db.*" or "ctl.db.tbl" (names as stored; no
  // quoting).
  std::string ToString() const;
  // True when a privilege on this object holds for `database`.`table` of the embedded catalog
  // (table may be empty: the database itself, which only *.* and db.* cover; an empty database
  // is the server, which only *.* covers).
  bool Covers(std::string_view database, std::string_view table) const {
    return CoversIn("", database, table);
  }
  // The same for an object of `catalog` ("": the embedded one); with an empty database, the
  // catalog itself (which *.* and ctl.*.* cover).
  bool CoversIn(std::string_view catalog, std::string_view database, std::string_view table) const;
  // The same object, names compared case-insensitively.
  bool SameAs(const GrantObject& other) const;
  bool global() const { return catalog.empty() && database.empty(); }
};

struct Grant {
  std::string user;  // user name (the host part is the user's)
  GrantObject object;
  PrivilegeSet privileges;
};

}  // namespace millrace::access
