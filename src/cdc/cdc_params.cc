#include "cdc/cdc_params.h"

#include <charconv>

#include "common/strings.h"

namespace millrace::cdc {
namespace {

Status Bad(std::string_view key, std::string_view value, std::string_view accepted) {
  return Status::InvalidArgument("cdc_stream: \"" + std::string(key) + "\" = \"" +
                                 std::string(value) + "\" is not valid; expected " +
                                 std::string(accepted));
}

Result<int64_t> PositiveInt(std::string_view key, std::string_view value, int64_t max) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n < 1 || n > max) {
    return Bad(key, value, "an integer from 1 to " + std::to_string(max));
  }
  return n;
}

}  // namespace

const std::vector<CdcParamSpec>& CdcStreamParams() {
  static const std::vector<CdcParamSpec> kParams = {
      {"type", "", "the source database: postgres", true},
      {"jdbc_url", "", "jdbc:postgresql://host[:port]/database", true},
      {"user", "", "the PostgreSQL user (REPLICATION, and owner of the table or superuser)", true},
      {"password", "", "its password (masked in jobs())", false, true},
      {"database", "", "the database, if not the one in jdbc_url"},
      {"schema", "public", "the table's schema"},
      {"table", "", "the table to copy and follow", true},
      {"offset", "initial",
       "initial: a snapshot of the table, then its changes; latest: only changes from now on"},
      {"snapshot_split_size", "8096", "rows per snapshot split (one task each)"},
      {"snapshot_parallelism", "1", "splits read at once; only 1 is supported so far"},
      {"driver_url", "", "accepted and ignored (no JDBC: Millrace uses libpq)"},
      {"driver_class", "", "accepted and ignored"},
  };
  return kParams;
}

Result<JdbcTarget> ParseJdbcUrl(std::string_view url) {
  constexpr std::string_view kPrefix = "jdbc:postgresql://";
  if (url.substr(0, kPrefix.size()) != kPrefix) {
    return Bad("jdbc_url", url, "jdbc:postgresql://host[:port]/database");
  }
  std::string_view rest = url.substr(kPrefix.size());
  rest = rest.substr(0, rest.find('?'));
  JdbcTarget target;
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) target.database = std::string(rest.substr(slash + 1));
  const size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(']') == std::string_view::npos) {
    int value = 0;
    std::string_view digits = authority.substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || end != digits.data() + digits.size() || value < 1 || value > 65535) {
      return Bad("jdbc_url", url, "a port from 1 to 65535");
    }
    target.port = value;
    authority = authority.substr(0, colon);
  }
  if (authority.size() > 2 && authority.front() == '[' && authority.back() == ']') {
    authority = authority.substr(1, authority.size() - 2);
  }
  if (authority.empty()) return Bad("jdbc_url", url, "a host after jdbc:postgresql://");
  target.host = std::string(authority);
  return target;
}

Result<PgSourceSpec> ParseCdcStreamArgs(const sql::DorisArgs& args) {
  const auto& specs = CdcStreamParams();
  for (const auto& [key, value] : args) {
    bool known = false;
    for (const CdcParamSpec& spec : specs)
      known = known || spec.name == key;
    if (!known) {
      std::string names;
      for (const CdcParamSpec& spec : specs)
        names += (names.empty() ? "" : ", ") + std::string(spec.name);
      return Status::InvalidArgument("cdc_stream: unknown parameter \"" + key +
                                     "\"; supported: " + names);
    }
  }
  for (const CdcParamSpec& spec : specs) {
    if (spec.required && args.find(spec.name) == args.end()) {
      return Status::InvalidArgument("cdc_stream: \"" + std::string(spec.name) +
                                     "\" is required (" + std::string(spec.description) + ")");
    }
  }
  auto get = [&](std::string_view key) -> std::string {
    auto it = args.find(key);
    if (it != args.end()) return it->second;
    for (const CdcParamSpec& spec : specs) {
      if (spec.name == key) return std::string(spec.default_value);
    }
    return "";
  };
  const std::string type = ToLower(get("type"));
  if (type != "postgres" && type != "postgresql") {
    return Bad("type", get("type"), "postgres (MySQL change streams are not supported yet)");
  }
  PgSourceSpec spec;
  MR_ASSIGN_OR_RETURN(JdbcTarget target, ParseJdbcUrl(get("jdbc_url")));
  spec.connect.host = target.host;
  spec.connect.port = target.port;
  spec.connect.database = args.count("database") ? get("database") : target.database;
  if (spec.connect.database.empty()) {
    return Status::InvalidArgument(
        "cdc_stream: no database: give \"database\" or end jdbc_url "
        "with /database");
  }
  spec.connect.user = get("user");
  spec.connect.password = get("password");
  spec.schema = get("schema");
  spec.table = get("table");
  if (spec.table.empty()) return Bad("table", "", "a table name");
  const std::string offset = ToLower(get("offset"));
  if (offset != "initial" && offset != "latest") {
    return Bad("offset", get("offset"), "initial or latest");
  }
  spec.initial = offset == "initial";
  MR_ASSIGN_OR_RETURN(spec.split_size,
                      PositiveInt("snapshot_split_size", get("snapshot_split_size"), 10'000'000));
  MR_ASSIGN_OR_RETURN(const int64_t parallelism,
                      PositiveInt("snapshot_parallelism", get("snapshot_parallelism"), 64));
  if (parallelism != 1) {
    return Bad("snapshot_parallelism", get("snapshot_parallelism"),
               "1 (splits are read one at a time so far)");
  }
  spec.parallelism = static_cast<int>(parallelism);
  return spec;
}

}  // namespace millrace::cdc
