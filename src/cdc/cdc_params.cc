#include "cdc/cdc_params.h"

#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace millrace::cdc {
namespace {

Status Bad(std::string_view key, std::string_view value, std::string_view accepted) {
  return Status::InvalidArgument("\"" + std::string(key) + "\" = \"" + std::string(value) +
                                 "\" is not valid; expected " + std::string(accepted));
}

Result<int64_t> PositiveInt(std::string_view key, std::string_view value, int64_t max) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n < 1 || n > max) {
    return Bad(key, value, "an integer from 1 to " + std::to_string(max));
  }
  return n;
}

// The parameters both forms share, then each form's own.
std::vector<ParamSpec> ConnectionParams(SourceType type) {
  const bool mysql = type == SourceType::kMysql;
  std::vector<ParamSpec> params = {
      {.name = "jdbc_url",
       .description =
           mysql ? "jdbc:mysql://host[:port][/database]" : "jdbc:postgresql://host[:port]/database",
       .required = true},
      {.name = "user",
       .description = mysql ? "the MySQL user (REPLICATION SLAVE, REPLICATION CLIENT, SELECT)"
                            : "the PostgreSQL user (REPLICATION, and owner of the tables or "
                              "superuser)",
       .required = true},
      {.name = "password", .description = "its password (masked in jobs())", .secret = true},
      {.name = "database", .description = "the database, if not the one in jdbc_url"},
  };
  if (!mysql) {
    params.push_back(
        {.name = "schema", .default_value = "public", .description = "the tables' schema"});
  }
  params.push_back(
      {.name = "offset",
       .default_value = "initial",
       .description =
           mysql ? "initial: a snapshot of the tables, then their changes; latest: only changes "
                   "from now on; {\"file\": \"binlog.000003\", \"pos\": \"4\"} or "
                   "binlog.000003:4: changes from that binlog position; 0-1-100 (MariaDB's GTID "
                   "position): changes after those transactions"
                 : "initial: a snapshot of the tables, then their changes; latest: only changes "
                   "from now on"});
  params.push_back({.name = "snapshot_split_size",
                    .default_value = "8096",
                    .description = "rows per snapshot split (one task each)"});
  params.push_back(
      {.name = "snapshot_parallelism",
       .default_value = "1",
       .description =
           "splits read at once (1 to 64), each on a connection of its own, in one task"});
  if (mysql) {
    params.push_back({.name = "server_id",
                      .description = "the replica id Millrace registers with (1 to 4294967295, "
                                     "unique among the server's replicas; default: 1000000 + the "
                                     "job's id)"});
  }
  params.push_back({.name = "driver_url",
                    .description = mysql
                                       ? "accepted and ignored (no JDBC: Millrace uses Connector/C)"
                                       : "accepted and ignored (no JDBC: Millrace uses libpq)"});
  params.push_back({.name = "driver_class", .description = "accepted and ignored"});
  return params;
}

std::vector<ParamSpec> MakeCdcStreamParams(SourceType type) {
  std::vector<ParamSpec> params = {{.name = "type",
                                    .default_value = "",
                                    .description = "the source database: postgres or mysql",
                                    .required = true}};
  for (ParamSpec& p : ConnectionParams(type))
    params.push_back(p);
  params.push_back({.name = "table",
                    .default_value = "",
                    .description = "the table to copy and follow",
                    .required = true});
  return params;
}

std::vector<ParamSpec> MakeFromSourceParams(SourceType type) {
  std::vector<ParamSpec> params = {{.name = "type",
                                    .default_value = "",
                                    .description = "set from FROM's source name",
                                    .required = true}};
  for (ParamSpec& p : ConnectionParams(type))
    params.push_back(p);
  params.push_back(
      {.name = "include_tables",
       .default_value = "",
       .description = type == SourceType::kMysql
                          ? "tables to copy and follow, comma-separated (default: every base table "
                            "of the database)"
                          : "tables to copy and follow, comma-separated (default: every table of "
                            "the schema)"});
  params.push_back({.name = "exclude_tables",
                    .default_value = "",
                    .description = "tables left out, comma-separated"});
  if (type == SourceType::kPostgres) {
    params.push_back({.name = "publication_name",
                      .default_value = "",
                      .description =
                          "the publication to read; made for the tables when missing (default: "
                          "millrace_<job id>_<create time>, dropped with the job)"});
    params.push_back({.name = "slot_name",
                      .default_value = "",
                      .description = "the replication slot the job makes and owns (default: "
                                     "millrace_<job id>_<create time>); must not exist yet"});
  }
  return params;
}

}  // namespace

Result<SourceType> ParseSourceType(const sql::DorisArgs& args) {
  auto it = args.find("type");
  const std::string type = it == args.end() ? "" : ToLower(it->second);
  if (type == "postgres" || type == "postgresql") return SourceType::kPostgres;
  if (type == "mysql") return SourceType::kMysql;
  if (it == args.end()) {
    return Status::InvalidArgument(
        "\"type\" is required (the source database: postgres or "
        "mysql)");
  }
  return Bad("type", it->second, "postgres or mysql");
}

const std::vector<ParamSpec>& CdcStreamParams(SourceType type) {
  static const std::vector<ParamSpec> kPostgres = MakeCdcStreamParams(SourceType::kPostgres);
  static const std::vector<ParamSpec> kMysql = MakeCdcStreamParams(SourceType::kMysql);
  return type == SourceType::kMysql ? kMysql : kPostgres;
}

const std::vector<ParamSpec>& FromSourceParams(SourceType type) {
  static const std::vector<ParamSpec> kPostgres = MakeFromSourceParams(SourceType::kPostgres);
  static const std::vector<ParamSpec> kMysql = MakeFromSourceParams(SourceType::kMysql);
  return type == SourceType::kMysql ? kMysql : kPostgres;
}

const std::vector<ParamSpec>& ToDatabaseParams() {
  static const std::vector<ParamSpec> kParams = {
      {.name = "table.create.properties.*",
       .default_value = "",
       .description = "PROPERTIES of the tables the job creates, e.g. "
                      "\"table.create.properties.replication_num\""},
      {.name = "load.strict_mode",
       .default_value = "false",
       .description =
           "accepted for Doris compatibility (true or false): changes are applied whole, so a "
           "value "
           "that does not convert into an existing table's column fails the task either way"},
      {.name = "load.max_filter_ratio",
       .default_value = "0",
       .description = "accepted for Doris compatibility (0 to 1): no change is filtered"},
  };
  return kParams;
}

namespace {

// Checks `args` against `specs` ("what" names the call or clause in errors).
Status CheckParams(std::string_view what, const std::vector<ParamSpec>& specs,
                   const sql::DorisArgs& args) {
  for (const auto& [key, value] : args) {
    bool known = false;
    for (const ParamSpec& spec : specs) {
      const bool prefix = spec.name.ends_with('*');
      known = known || spec.name == key ||
              (prefix && key.starts_with(spec.name.substr(0, spec.name.size() - 1)));
    }
    if (!known) {
      std::string names;
      for (const ParamSpec& spec : specs)
        names += (names.empty() ? "" : ", ") + std::string(spec.name);
      return Status::InvalidArgument(std::string(what) + ": unknown parameter \"" + key +
                                     "\"; supported: " + names);
    }
  }
  for (const ParamSpec& spec : specs) {
    if (spec.required && args.find(spec.name) == args.end()) {
      return Status::InvalidArgument(std::string(what) + ": \"" + std::string(spec.name) +
                                     "\" is required (" + std::string(spec.description) + ")");
    }
  }
  return Status::Ok();
}

// The value of `key`, or its declared default.
std::string Get(const std::vector<ParamSpec>& specs, const sql::DorisArgs& args,
                std::string_view key) {
  auto it = args.find(key);
  if (it != args.end()) return it->second;
  for (const ParamSpec& spec : specs) {
    if (spec.name == key) return std::string(spec.default_value);
  }
  return "";
}

std::vector<std::string> SplitNames(const std::string& list) {
  std::vector<std::string> names;
  size_t begin = 0;
  while (begin <= list.size()) {
    size_t comma = list.find(',', begin);
    if (comma == std::string::npos) comma = list.size();
    std::string name(Trim(std::string_view(list).substr(begin, comma - begin)));
    if (!name.empty()) names.push_back(std::move(name));
    begin = comma + 1;
  }
  return names;
}

// snapshot_split_size and snapshot_parallelism.
template <typename Get>
Status ParseSnapshotParams(const Get& get, int64_t* split_size, int* parallelism) {
  MR_ASSIGN_OR_RETURN(*split_size,
                      PositiveInt("snapshot_split_size", get("snapshot_split_size"), 10'000'000));
  MR_ASSIGN_OR_RETURN(const int64_t n,
                      PositiveInt("snapshot_parallelism", get("snapshot_parallelism"), 64));
  *parallelism = static_cast<int>(n);
  return Status::Ok();
}

// jdbc_url, database, user and password into `connect` (pg:: or mysql::ConnectParams);
// `database_given`: "database" overrides the URL's.
template <typename Get, typename Connect>
Status ParseConnection(std::string_view what, const Get& get, bool database_given,
                       std::string_view scheme, int default_port, Connect* connect) {
  MR_ASSIGN_OR_RETURN(JdbcTarget target, ParseJdbcUrl(get("jdbc_url"), scheme, default_port));
  connect->host = target.host;
  connect->port = target.port;
  connect->database = database_given ? get("database") : target.database;
  if (connect->database.empty()) {
    return Status::InvalidArgument(std::string(what) +
                                   ": no database: give \"database\" or end jdbc_url with "
                                   "/database");
  }
  connect->user = get("user");
  connect->password = get("password");
  return Status::Ok();
}

// What both forms share: the connection, snapshot and offset parameters.
Result<PgSourceSpec> ParseSource(std::string_view what, const std::vector<ParamSpec>& specs,
                                 const sql::DorisArgs& args) {
  MR_RETURN_IF_ERROR(CheckParams(what, specs, args));
  auto get = [&](std::string_view key) { return Get(specs, args, key); };
  PgSourceSpec spec;
  MR_RETURN_IF_ERROR(
      ParseConnection(what, get, args.count("database") > 0, "postgresql", 5432, &spec.connect));
  spec.schema = get("schema");
  const std::string offset = ToLower(get("offset"));
  if (offset != "initial" && offset != "latest") {
    return Bad("offset", get("offset"), "initial or latest");
  }
  spec.initial = offset == "initial";
  MR_RETURN_IF_ERROR(ParseSnapshotParams(get, &spec.split_size, &spec.parallelism));
  return spec;
}

}  // namespace

Result<JdbcTarget> ParseJdbcUrl(std::string_view url, std::string_view scheme, int default_port) {
  const std::string prefix = "jdbc:" + std::string(scheme) + "://";
  if (url.substr(0, prefix.size()) != prefix) {
    return Bad("jdbc_url", url, prefix + "host[:port]/database");
  }
  std::string_view rest = url.substr(prefix.size());
  rest = rest.substr(0, rest.find('?'));
  JdbcTarget target;
  target.port = default_port;
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
  if (authority.empty()) return Bad("jdbc_url", url, "a host after " + prefix);
  target.host = std::string(authority);
  return target;
}

Result<PgSourceSpec> ParseCdcStreamArgs(const sql::DorisArgs& args) {
  const auto& specs = CdcStreamParams(SourceType::kPostgres);
  MR_ASSIGN_OR_RETURN(PgSourceSpec spec, ParseSource("cdc_stream", specs, args));
  spec.tables = {Get(specs, args, "table")};
  if (spec.tables.front().empty()) return Bad("table", "", "a table name");
  return spec;
}

Result<PgSourceSpec> ParseFromPostgresArgs(const sql::DorisArgs& args) {
  const auto& specs = FromSourceParams(SourceType::kPostgres);
  MR_ASSIGN_OR_RETURN(PgSourceSpec spec, ParseSource("FROM POSTGRES", specs, args));
  spec.whole_database = true;
  spec.tables = SplitNames(Get(specs, args, "include_tables"));
  spec.exclude_tables = SplitNames(Get(specs, args, "exclude_tables"));
  spec.publication_name = Get(specs, args, "publication_name");
  spec.slot_name = Get(specs, args, "slot_name");
  for (const std::string* name : {&spec.publication_name, &spec.slot_name}) {
    // PostgreSQL folds unquoted names; Millrace quotes them, so they are taken as written.
    if (name->size() > 63)
      return Bad(*name == spec.slot_name ? "slot_name" : "publication_name", *name,
                 "a name of at most 63 bytes");
  }
  return spec;
}

Result<TargetDatabaseSpec> ParseToDatabaseArgs(const sql::DorisArgs& args) {
  const auto& specs = ToDatabaseParams();
  MR_RETURN_IF_ERROR(CheckParams("TO DATABASE", specs, args));
  TargetDatabaseSpec spec;
  constexpr std::string_view kCreatePrefix = "table.create.properties.";
  for (const auto& [key, value] : args) {
    if (key.starts_with(kCreatePrefix))
      spec.create_properties[key.substr(kCreatePrefix.size())] = value;
  }
  const std::string strict = ToLower(Get(specs, args, "load.strict_mode"));
  if (strict != "true" && strict != "false")
    return Bad("load.strict_mode", strict, "true or false");
  spec.strict_mode = strict == "true";
  const std::string ratio = Get(specs, args, "load.max_filter_ratio");
  double value = -1;
  auto [end, ec] = std::from_chars(ratio.data(), ratio.data() + ratio.size(), value);
  if (ec != std::errc() || end != ratio.data() + ratio.size() || value < 0 || value > 1) {
    return Bad("load.max_filter_ratio", ratio, "a number from 0 to 1");
  }
  spec.max_filter_ratio = value;
  return spec;
}

namespace {

// True for MySQL's GTID set form: uuid:interval[:interval...], comma-separated, an interval
// being n or n-m.
bool IsMysqlGtidSet(const std::string& value) {
  const std::vector<std::string> sets = SplitNames(value);
  if (sets.empty()) return false;
  for (const std::string& set : sets) {
    const size_t colon = set.find(':');
    if (colon != 36 || colon + 1 >= set.size()) return false;
    for (size_t i = 0; i < colon; ++i) {
      const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
      if (dash != (set[i] == '-') || (!dash && !std::isxdigit(static_cast<unsigned char>(set[i]))))
        return false;
    }
    for (size_t i = colon + 1; i < set.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(set[i])) && set[i] != '-' && set[i] != ':')
        return false;
    }
  }
  return true;
}

// "offset" of a MySQL source: initial, latest, a binlog position or a MariaDB GTID position.
Status ParseMysqlOffset(const std::string& value, MysqlSourceSpec* spec) {
  const std::string lower = ToLower(value);
  if (lower == "initial" || lower == "latest") {
    spec->start =
        lower == "initial" ? MysqlSourceSpec::Start::kInitial : MysqlSourceSpec::Start::kLatest;
    return Status::Ok();
  }
  constexpr std::string_view kAccepted =
      "initial, latest, a binlog position ({\"file\": \"binlog.000003\", \"pos\": \"4\"} or "
      "binlog.000003:4) or a MariaDB GTID position (domain-server-sequence[,...])";
  spec->start = MysqlSourceSpec::Start::kPosition;
  std::string file;
  std::string pos;
  if (!value.empty() && value.front() == '{') {
    const nlohmann::json parsed = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_object() || !parsed.contains("file") || !parsed.contains("pos") ||
        !parsed["file"].is_string()) {
      return Bad("offset", value, kAccepted);
    }
    file = parsed["file"].get<std::string>();
    pos = parsed["pos"].is_string() ? parsed["pos"].get<std::string>() : parsed["pos"].dump();
  } else if (const size_t colon = value.rfind(':');
             colon != std::string::npos && value.find('.') != std::string::npos) {
    file = value.substr(0, colon);
    pos = value.substr(colon + 1);
  } else if (IsMysqlGtidSet(value)) {
    return Status::NotSupported(
        "\"offset\" = \"" + value +
        "\" is a MySQL GTID set; starting from one is not supported yet: give the binlog file "
        "and position (SHOW MASTER STATUS) or \"latest\"");
  } else {
    // domain-server-sequence, comma-separated: three unsigned numbers each.
    for (const std::string& gtid : SplitNames(value)) {
      int parts = 0;
      for (std::string_view rest = gtid; !rest.empty(); ++parts) {
        const size_t dash = rest.find('-');
        const std::string_view number = rest.substr(0, dash);
        uint64_t n = 0;
        auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), n);
        if (number.empty() || ec != std::errc() || end != number.data() + number.size()) {
          return Bad("offset", value, kAccepted);
        }
        rest = dash == std::string_view::npos ? std::string_view() : rest.substr(dash + 1);
      }
      if (parts != 3) return Bad("offset", value, kAccepted);
    }
    if (value.empty()) return Bad("offset", value, kAccepted);
    spec->position.gtid = value;
    return Status::Ok();
  }
  uint64_t position = 0;
  auto [end, ec] = std::from_chars(pos.data(), pos.data() + pos.size(), position);
  if (file.empty() || ec != std::errc() || end != pos.data() + pos.size() || position < 4) {
    return Bad("offset", value, kAccepted);
  }
  spec->position.position = mysql::BinlogPosition{file, position};
  return Status::Ok();
}

}  // namespace

Result<MysqlSourceSpec> ParseMysqlArgs(const sql::DorisArgs& args, bool whole_database) {
  const auto& specs =
      whole_database ? FromSourceParams(SourceType::kMysql) : CdcStreamParams(SourceType::kMysql);
  const std::string_view what = whole_database ? "FROM MYSQL" : "cdc_stream";
  MR_RETURN_IF_ERROR(CheckParams(what, specs, args));
  auto get = [&](std::string_view key) { return Get(specs, args, key); };
  MysqlSourceSpec spec;
  spec.whole_database = whole_database;
  MR_RETURN_IF_ERROR(
      ParseConnection(what, get, args.count("database") > 0, "mysql", 3306, &spec.connect));
  MR_RETURN_IF_ERROR(ParseMysqlOffset(get("offset"), &spec));
  MR_RETURN_IF_ERROR(ParseSnapshotParams(get, &spec.split_size, &spec.parallelism));
  if (const std::string id = get("server_id"); !id.empty()) {
    MR_ASSIGN_OR_RETURN(const int64_t n, PositiveInt("server_id", id, 4294967295LL));
    spec.server_id = static_cast<uint32_t>(n);
  }
  if (whole_database) {
    spec.tables = SplitNames(get("include_tables"));
    spec.exclude_tables = SplitNames(get("exclude_tables"));
  } else {
    spec.tables = {get("table")};
    if (spec.tables.front().empty()) return Bad("table", "", "a table name");
  }
  return spec;
}

}  // namespace millrace::cdc
