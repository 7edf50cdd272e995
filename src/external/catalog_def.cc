#include "external/catalog_def.h"

#include <cctype>

#include "common/strings.h"

namespace millrace::external {
namespace {

constexpr uint8_t kBothScopes = kJdbcScope | kPostgresqlScope;
constexpr std::string_view kJdbcPrefix = "jdbc:postgresql://";

uint8_t ScopeOf(std::string_view type) {
  return type == "postgresql" ? kPostgresqlScope : kJdbcScope;
}

// The URL's parameters PostgreSQL's JDBC driver takes that libpq can honour, as libpq names
// them; any other is refused rather than ignored (an ssl setting dropped silently would send a
// password in clear).
Status ApplyUrlParameter(std::string_view key, std::string_view value, pg::ConnectParams* out) {
  if (key == "sslmode") {
    static constexpr std::string_view kModes[] = {"disable", "allow",     "prefer",
                                                  "require", "verify-ca", "verify-full"};
    for (std::string_view mode : kModes) {
      if (EqualsIgnoreCase(value, mode)) {
        out->sslmode = std::string(mode);
        return Status::Ok();
      }
    }
    return Status::InvalidArgument(
        "jdbc_url parameter sslmode must be disable, allow, prefer, require, verify-ca or "
        "verify-full, got '" +
        std::string(value) + "'");
  }
  if (key == "ssl") {
    const std::optional<bool> on = ParseBool(value);
    if (!on) {
      return Status::InvalidArgument("jdbc_url parameter ssl must be true or false, got '" +
                                     std::string(value) + "'");
    }
    if (out->sslmode.empty() || !*on) out->sslmode = *on ? "require" : "disable";
    return Status::Ok();
  }
  if (key == "connectTimeout") {
    const std::optional<int64_t> seconds = ParseInt64(value);
    if (!seconds || *seconds < 1 || *seconds > 3600) {
      return Status::InvalidArgument(
          "jdbc_url parameter connectTimeout must be seconds from 1 to 3600, got '" +
          std::string(value) + "'");
    }
    out->connect_timeout = std::chrono::seconds(*seconds);
    return Status::Ok();
  }
  return Status::InvalidArgument("jdbc_url parameter " + std::string(key) +
                                 " is not supported here (supported: sslmode, ssl, "
                                 "connectTimeout; give user and password as properties)");
}

// jdbc:postgresql://host[:port][/database][?key=value&...]: one host (IPv6 in brackets).
Status ParseJdbcUrl(std::string_view url, pg::ConnectParams* out) {
  if (!url.starts_with(kJdbcPrefix)) {
    const size_t scheme_end = url.find("://");
    const std::string scheme(url.substr(0, scheme_end == std::string_view::npos ? 0 : scheme_end));
    return Status::InvalidArgument(
        "jdbc_url must be jdbc:postgresql://host:port/database" +
        (scheme.empty() ? std::string() : " (got a " + scheme + ": URL)") +
        ": only PostgreSQL and the engines that speak its protocol can be written here");
  }
  std::string_view rest = url.substr(kJdbcPrefix.size());
  std::string_view query;
  if (const size_t q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  std::string_view authority = rest;
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    authority = rest.substr(0, slash);
    out->database = std::string(rest.substr(slash + 1));
  }
  if (authority.find(',') != std::string_view::npos) {
    return Status::InvalidArgument("jdbc_url names several hosts; give one");
  }
  if (authority.find('@') != std::string_view::npos) {
    return Status::InvalidArgument(
        "jdbc_url holds credentials before its host; give user and password as properties");
  }
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return Status::InvalidArgument("jdbc_url has an IPv6 host without its closing ']'");
    }
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Status::InvalidArgument("jdbc_url has a malformed host");
      port = after.substr(1);
    }
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return Status::InvalidArgument("jdbc_url names no host");
  out->host = std::string(host);
  if (!port.empty()) {
    const std::optional<int64_t> number = ParseInt64(port);
    if (!number || *number < 1 || *number > 65535) {
      return Status::InvalidArgument("jdbc_url's port must be 1 to 65535, got '" +
                                     std::string(port) + "'");
    }
    out->port = static_cast<int>(*number);
  }
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    const std::string_view key = pair.substr(0, eq);
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    MR_RETURN_IF_ERROR(ApplyUrlParameter(key, value, out));
  }
  return Status::Ok();
}

// `text` in double quotes, a quote inside doubled (as the statements' lexer reads it back).
std::string DoubleQuoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string ExternalCatalog::type() const {
  const auto it = properties.find("type");
  return it == properties.end() ? std::string() : ToLower(it->second);
}

const std::vector<ParamSpec>& CatalogPropertySpecs() {
  static const std::vector<ParamSpec> kSpecs = {
      {.name = "type",
       .type = ParamType::kChoice,
       .description = "jdbc (a jdbc_url) or postgresql (host, port and database)",
       .scopes = kBothScopes,
       .choices = {"jdbc", "postgresql"},
       .required = true},
      {.name = "jdbc_url",
       .description = "where the database is, as PostgreSQL's JDBC driver writes it; parameters "
                      "sslmode, ssl and connectTimeout are honoured",
       .scopes = kJdbcScope,
       .accepted = "jdbc:postgresql://host[:port][/database][?sslmode=...]",
       .required = true},
      {.name = "host",
       .description = "the PostgreSQL server's host name or address",
       .scopes = kPostgresqlScope,
       .required = true},
      {.name = "port",
       .type = ParamType::kInt,
       .default_value = "5432",
       .description = "the PostgreSQL server's port",
       .scopes = kPostgresqlScope,
       .min = 1,
       .max = 65535},
      {.name = "database",
       .description = "the database the catalog's schemas are in",
       .scopes = kPostgresqlScope,
       .required = true},
      {.name = "user",
       .description = "the PostgreSQL role Millrace writes as",
       .scopes = kBothScopes,
       .required = true},
      {.name = "password",
       .description = "that role's password; sealed at rest, shown as *XXX",
       .scopes = kBothScopes,
       .secret = true},
      {.name = "driver_url",
       .description = "accepted and ignored: Millrace connects with libpq, not a JDBC driver",
       .scopes = kJdbcScope},
      {.name = "driver_class",
       .description = "accepted and ignored, as driver_url",
       .scopes = kJdbcScope},
      {.name = "test_connection",
       .type = ParamType::kBool,
       .default_value = "true",
       .description = "CREATE and ALTER connect once and fail when they cannot (Doris's "
                      "property of the same name)",
       .scopes = kBothScopes},
  };
  return kSpecs;
}

Result<CatalogProperties> NormalizeProperties(
    const std::vector<std::pair<std::string, std::string>>& given) {
  CatalogProperties out;
  for (const auto& [key, value] : given) {
    if (!out.emplace(ToLower(key), value).second) {
      return Status::InvalidArgument("property \"" + key + "\" is given twice");
    }
  }
  return out;
}

Result<CatalogEndpoint> ParseCatalog(const CatalogProperties& properties) {
  const std::vector<ParamSpec>& specs = CatalogPropertySpecs();
  const auto type = properties.find("type");
  if (type == properties.end()) {
    return Status::InvalidArgument("property \"type\" is required (jdbc or postgresql)");
  }
  MR_ASSIGN_OR_RETURN(const ParamValue type_value,
                      ParseParamValue(*FindParam(specs, "type"), type->second, "type"));
  const uint8_t scope = ScopeOf(type_value.text);
  ParamValues values;
  for (const auto& [key, value] : properties) {
    const ParamSpec* spec = FindParam(specs, key);
    if (spec == nullptr) {
      return Status::InvalidArgument("unknown property \"" + key +
                                     "\" (supported: " + ParamNames(specs, scope) + ")");
    }
    if ((spec->scopes & scope) == 0) {
      return Status::InvalidArgument("property \"" + key + "\" is not taken by a catalog of type " +
                                     type_value.text + " (it takes: " + ParamNames(specs, scope) +
                                     ")");
    }
    MR_RETURN_IF_ERROR(values.Add(*spec, key, value));
  }
  MR_RETURN_IF_ERROR(values.Complete(specs, scope));
  CatalogEndpoint endpoint;
  endpoint.params.user = values.Text("user");
  endpoint.params.password = values.Text("password");
  endpoint.test_connection = values.Bool("test_connection");
  if (scope == kJdbcScope) {
    MR_RETURN_IF_ERROR(ParseJdbcUrl(values.Text("jdbc_url"), &endpoint.params));
  } else {
    endpoint.params.host = values.Text("host");
    endpoint.params.port = static_cast<int>(values.Int("port").value_or(5432));
    endpoint.params.database = values.Text("database");
  }
  if (endpoint.params.database.empty()) endpoint.params.database = endpoint.params.user;
  return endpoint;
}

Status CheckCatalogName(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 64 && std::isalpha(static_cast<unsigned char>(name[0]));
  for (char c : name)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok) {
    return Status::InvalidArgument("catalog name '" + std::string(name) +
                                   "' must start with a letter and hold only letters, digits "
                                   "and '_', at most 64 characters");
  }
  for (std::string_view reserved : {"internal", "system", "temp", "memory"}) {
    if (EqualsIgnoreCase(name, reserved)) {
      return Status::InvalidArgument("catalog name '" + std::string(name) + "' is reserved");
    }
  }
  return Status::Ok();
}

std::string ShowCreateCatalog(const ExternalCatalog& catalog) {
  std::string out = "CREATE CATALOG `" + catalog.name + "`";
  if (!catalog.comment.empty()) out += " COMMENT " + DoubleQuoted(catalog.comment);
  out += " PROPERTIES (";
  bool first = true;
  for (const auto& [key, value] : catalog.properties) {
    const bool secret = IsSecretParam(CatalogPropertySpecs(), key);
    out += std::string(first ? "\n" : ",\n") + DoubleQuoted(key) + " = " +
           DoubleQuoted(secret ? "*XXX" : value);
    first = false;
  }
  return out + "\n)";
}

}  // namespace millrace::external
