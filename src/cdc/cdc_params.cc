#include "cdc/cdc_params.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace millrace::cdc {
namespace {

Status Bad(std::string_view key, std::string_view value, std::string_view accepted) {
  return Status::InvalidArgument("\"" + std::string(key) + "\" must be " + std::string(accepted) +
                                 ", got '" + std::string(value) + "'");
}

constexpr std::string_view kMysqlOffsets =
    "initial, latest, a binlog position ({\"file\": \"binlog.000003\", \"pos\": \"4\"} or "
    "binlog.000003:4) or a MariaDB GTID position (domain-server-sequence[,...])";

// The parameters both forms share, then each form's own.
std::vector<ParamSpec> ConnectionParams(SourceType type) {
  const bool mysql = type == SourceType::kMysql;
  std::vector<ParamSpec> params = {
      {.name = "jdbc_url",
       .description = "the source server; query parameters are ignored",
       .accepted =
           mysql ? "jdbc:mysql://host[:port][/database]" : "jdbc:postgresql://host[:port]/database",
       .required = true},
      {.name = "user",
       .description =
           mysql ? "a user with REPLICATION SLAVE, REPLICATION CLIENT (MariaDB 10.5+: BINLOG "
                   "MONITOR) and SELECT on the tables"
                 : "a role with REPLICATION that owns the tables (or a superuser): Millrace "
                   "creates a publication for them",
       .required = true},
      {.name = "password",
       .description = "its password, masked as `***` in jobs()",
       .secret = true},
      {.name = "database",
       .description = mysql ? "the source database, if not the one in jdbc_url (one of them is "
                              "required)"
                            : "overrides the database of jdbc_url"},
  };
  if (!mysql) {
    params.push_back(
        {.name = "schema", .default_value = "public", .description = "the tables' schema"});
  }
  if (mysql) {
    params.push_back(
        {.name = "offset",
         .default_value = "initial",
         .description =
             "initial: a consistent snapshot, then changes from its binlog position; latest: "
             "changes from the end of the binlog at the job's first task; a binlog position: "
             "changes from there (it must be between transactions); a MariaDB GTID position "
             "(0-1-100[,1-2-7]): changes after those transactions",
         .accepted = kMysqlOffsets});
  } else {
    params.push_back({.name = "offset",
                      .type = ParamType::kChoice,
                      .default_value = "initial",
                      .description = "initial: a snapshot of the tables, then their changes; "
                                     "latest: changes from the job's creation on",
                      .choices = {"initial", "latest"}});
  }
  params.push_back({.name = "snapshot_split_size",
                    .type = ParamType::kInt,
                    .default_value = "8096",
                    .description = "rows per snapshot split (one task, one DuckDB transaction "
                                   "each)",
                    .min = 1,
                    .max = 10'000'000});
  params.push_back(
      {.name = "snapshot_parallelism",
       .type = ParamType::kInt,
       .default_value = "1",
       .description = mysql ? "splits read at once, each on a connection of its own"
                            : "splits read at once, each on a PostgreSQL connection of its own, "
                              "all in one snapshot; one task commits them together",
       .min = 1,
       .max = 64});
  if (mysql) {
    params.push_back({.name = "server_id",
                      .type = ParamType::kInt,
                      .description =
                          "the replica id Millrace registers with (default: 1000000 + the job's "
                          "id); it must differ from every other replica of the server (the server "
                          "ends a dump whose id another one takes)",
                      .min = 1,
                      .max = 4294967295LL});
  }
  params.push_back({.name = "driver_url",
                    .description = mysql ? "accepted and ignored: Millrace speaks the protocol "
                                           "through MariaDB Connector/C, no JDBC"
                                         : "accepted and ignored: Millrace speaks PostgreSQL's "
                                           "protocol through libpq, no JDBC"});
  params.push_back({.name = "driver_class", .description = "accepted and ignored"});
  return params;
}

std::vector<ParamSpec> MakeCdcStreamParams(SourceType type) {
  std::vector<ParamSpec> params = {
      {.name = "type",
       .description = "the source database",
       .accepted = type == SourceType::kMysql ? "mysql" : "postgres (or postgresql)",
       .required = true}};
  for (ParamSpec& p : ConnectionParams(type))
    params.push_back(p);
  params.push_back(
      {.name = "table",
       .description = type == SourceType::kMysql
                          ? "the table to copy and follow; it must have a primary key and use "
                            "InnoDB"
                          : "the table to copy and follow; it must have a primary key",
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
  for (const ParamSpec& p : FromSourceOnlyParams(type))
    params.push_back(p);
  return params;
}

}  // namespace

const std::vector<ParamSpec>& FromSourceOnlyParams(SourceType type) {
  static const std::vector<ParamSpec> kPostgres = {
      {.name = "include_tables",
       .description = "the tables to copy and follow, comma-separated (default: every table of "
                      "the schema; partitioned tables as their root)"},
      {.name = "exclude_tables", .description = "tables left out, comma-separated"},
      {.name = "publication_name",
       .description =
           "the publication to read (default: millrace_<job id>_<creation time>). If it exists "
           "it must publish every table, every kind of change (publish = insert, update, "
           "delete, truncate) and every row and column (no row filter or column list); the "
           "job's first task pauses it naming what is missing. If it does not exist, Millrace "
           "creates it for the tables. A publication named here is the user's: DROP JOB keeps "
           "it. The default one is Millrace's and is dropped with the job",
       .accepted = "a name of at most 63 bytes"},
      {.name = "slot_name",
       .description =
           "the slot the job creates and owns, dropped with the job (default: millrace_<job "
           "id>_<creation time>). It must not exist when the job starts: an existing one may be "
           "another consumer's, so the job pauses saying so (after a crash before the job's "
           "first commit, drop the leftover with pg_drop_replication_slot). A slot of the "
           "default name is Millrace's and is made again",
       .accepted = "a name of at most 63 bytes"},
  };
  static const std::vector<ParamSpec> kMysql = {
      {.name = "include_tables",
       .description = "the tables to copy and follow, comma-separated (default: every base "
                      "table of the database)"},
      {.name = "exclude_tables", .description = "tables left out, comma-separated"},
  };
  return type == SourceType::kMysql ? kMysql : kPostgres;
}

namespace {}  // namespace

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
       .description = "PROPERTIES of the tables the job creates (e.g. "
                      "table.create.properties.replication_num), kept for SHOW CREATE TABLE"},
      {.name = "load.strict_mode",
       .type = ParamType::kBool,
       .default_value = "false",
       .description = "accepted for Doris compatibility. Changes are applied whole, so a value "
                      "that does not convert into an existing target's column fails the task "
                      "either way; tables the job creates take the source's types, into which "
                      "every value converts"},
      {.name = "load.max_filter_ratio",
       .type = ParamType::kNumber,
       .default_value = "0",
       .description = "accepted for Doris compatibility: no change is filtered",
       .min = 0,
       .max = 1},
  };
  return kParams;
}

namespace {

// `args` read against `specs` ("what" names the call or clause in errors): an unknown key, a bad
// value or a missing required one is INVALID_ARGUMENT. A spec name ending in '*' is a prefix
// whose keys are accepted as they are.
Result<ParamValues> ReadParams(std::string_view what, const std::vector<ParamSpec>& specs,
                               const sql::DorisArgs& args) {
  ParamValues values;
  for (const auto& entry : args) {
    const std::string& key = entry.first;
    const std::string& value = entry.second;
    const bool prefixed = std::any_of(specs.begin(), specs.end(), [&](const ParamSpec& spec) {
      return spec.name.ends_with('*') && key.starts_with(spec.name.substr(0, spec.name.size() - 1));
    });
    if (prefixed) continue;
    const ParamSpec* spec = FindParam(specs, key);
    if (spec == nullptr) {
      return Status::InvalidArgument(std::string(what) + ": unknown parameter \"" + key +
                                     "\"; supported: " + ParamNames(specs));
    }
    MR_RETURN_IF_ERROR(values.Add(*spec, key, value).WithContext(what));
  }
  MR_RETURN_IF_ERROR(values.Complete(specs).WithContext(what));
  return values;
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
void ReadSnapshotParams(const ParamValues& values, int64_t* split_size, int* parallelism) {
  *split_size = values.Int("snapshot_split_size").value_or(*split_size);
  *parallelism = static_cast<int>(values.Int("snapshot_parallelism").value_or(*parallelism));
}

// jdbc_url, database, user and password into `connect` (pg:: or mysql::ConnectParams);
// "database" overrides the URL's.
template <typename Connect>
Status ReadConnection(std::string_view what, const ParamValues& values, std::string_view scheme,
                      int default_port, Connect* connect) {
  MR_ASSIGN_OR_RETURN(JdbcTarget target,
                      ParseJdbcUrl(values.Text("jdbc_url"), scheme, default_port));
  connect->host = target.host;
  connect->port = target.port;
  connect->database = values.Given("database") ? values.Text("database") : target.database;
  if (connect->database.empty()) {
    return Status::InvalidArgument(std::string(what) +
                                   ": no database: give \"database\" or end jdbc_url with "
                                   "/database");
  }
  connect->user = values.Text("user");
  connect->password = values.Text("password");
  return Status::Ok();
}

// What both forms share: the connection, snapshot and offset parameters.
Result<PgSourceSpec> ReadPgSource(std::string_view what, const ParamValues& values) {
  PgSourceSpec spec;
  MR_RETURN_IF_ERROR(ReadConnection(what, values, "postgresql", 5432, &spec.connect));
  spec.schema = values.Text("schema");
  spec.initial = values.Text("offset") == "initial";
  ReadSnapshotParams(values, &spec.split_size, &spec.parallelism);
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
  MR_ASSIGN_OR_RETURN(ParamValues values,
                      ReadParams("cdc_stream", CdcStreamParams(SourceType::kPostgres), args));
  MR_ASSIGN_OR_RETURN(PgSourceSpec spec, ReadPgSource("cdc_stream", values));
  spec.tables = {values.Text("table")};
  if (spec.tables.front().empty()) return Bad("table", "", "a table name");
  return spec;
}

Result<PgSourceSpec> ParseFromPostgresArgs(const sql::DorisArgs& args) {
  MR_ASSIGN_OR_RETURN(ParamValues values,
                      ReadParams("FROM POSTGRES", FromSourceParams(SourceType::kPostgres), args));
  MR_ASSIGN_OR_RETURN(PgSourceSpec spec, ReadPgSource("FROM POSTGRES", values));
  spec.whole_database = true;
  spec.tables = SplitNames(values.Text("include_tables"));
  spec.exclude_tables = SplitNames(values.Text("exclude_tables"));
  spec.publication_name = values.Text("publication_name");
  spec.slot_name = values.Text("slot_name");
  for (const std::string* name : {&spec.publication_name, &spec.slot_name}) {
    // PostgreSQL folds unquoted names; Millrace quotes them, so they are taken as written.
    if (name->size() > 63)
      return Bad(name == &spec.slot_name ? "slot_name" : "publication_name", *name,
                 "a name of at most 63 bytes");
  }
  return spec;
}

Result<TargetDatabaseSpec> ParseToDatabaseArgs(const sql::DorisArgs& args) {
  MR_ASSIGN_OR_RETURN(ParamValues values, ReadParams("TO DATABASE", ToDatabaseParams(), args));
  TargetDatabaseSpec spec;
  constexpr std::string_view kCreatePrefix = "table.create.properties.";
  for (const auto& [key, value] : args) {
    if (key.starts_with(kCreatePrefix))
      spec.create_properties[key.substr(kCreatePrefix.size())] = value;
  }
  spec.strict_mode = values.Bool("load.strict_mode");
  spec.max_filter_ratio = values.Number("load.max_filter_ratio");
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
  constexpr std::string_view kAccepted = kMysqlOffsets;
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
  MR_ASSIGN_OR_RETURN(ParamValues values, ReadParams(what, specs, args));
  MysqlSourceSpec spec;
  spec.whole_database = whole_database;
  MR_RETURN_IF_ERROR(ReadConnection(what, values, "mysql", 3306, &spec.connect));
  MR_RETURN_IF_ERROR(ParseMysqlOffset(values.Text("offset"), &spec));
  ReadSnapshotParams(values, &spec.split_size, &spec.parallelism);
  if (const std::optional<int64_t> id = values.Int("server_id")) {
    spec.server_id = static_cast<uint32_t>(*id);
  }
  if (whole_database) {
    spec.tables = SplitNames(values.Text("include_tables"));
    spec.exclude_tables = SplitNames(values.Text("exclude_tables"));
  } else {
    spec.tables = {values.Text("table")};
    if (spec.tables.front().empty()) return Bad("table", "", "a table name");
  }
  return spec;
}

std::vector<const std::vector<ParamSpec>*> ChangeStreamParamTables() {
  std::vector<const std::vector<ParamSpec>*> tables;
  for (SourceType type : {SourceType::kPostgres, SourceType::kMysql}) {
    tables.push_back(&CdcStreamParams(type));
    tables.push_back(&FromSourceParams(type));
  }
  tables.push_back(&ToDatabaseParams());
  return tables;
}

std::string CdcParamsMarkdown(const std::vector<ParamSpec>& specs) {
  return ParamsMarkdown(specs, "parameter");
}

}  // namespace millrace::cdc
