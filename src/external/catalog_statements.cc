#include "external/catalog_statements.h"

#include "common/clock.h"
#include "common/strings.h"
#include "sql/mysql_errors.h"
#include "sql/session.h"
#include "sql/statement_support.h"

namespace millrace::external {
namespace {

using access::Privilege;
using sql::Cursor;
using sql::StatementResult;

std::string TimeText(int64_t micros) {
  return FormatUtc(Clock::WallTime(std::chrono::microseconds(micros)));
}

const std::vector<sql::ValuesColumn> kCatalogsColumns = {
    {"CatalogId", "BIGINT"},  {"CatalogName", "VARCHAR"}, {"Type", "VARCHAR"},
    {"IsCurrent", "VARCHAR"}, {"CreateTime", "VARCHAR"},  {"LastUpdateTime", "VARCHAR"},
    {"Comment", "VARCHAR"}};

// Each value given to a secret property of `tokens` replaced by '***'.
std::string MaskSecrets(std::string_view sql, const std::vector<sql::Token>& tokens) {
  std::string out;
  size_t copied = 0;
  for (size_t i = 0; i + 2 < tokens.size(); ++i) {
    const sql::Token& key = tokens[i];
    if (key.kind != sql::TokenKind::kString && key.kind != sql::TokenKind::kQuotedIdent) continue;
    if (tokens[i + 1].Text(sql) != "=") continue;
    if (!IsSecretParam(CatalogPropertySpecs(), sql::Unquote(sql, key))) continue;
    const sql::Token& value = tokens[i + 2];
    out += std::string(sql.substr(copied, value.begin - copied)) + "'***'";
    copied = value.begin + value.Text(sql).size();
  }
  return out + std::string(sql.substr(copied));
}

class CatalogStatementHandler final : public sql::StatementHandler {
 public:
  enum class Kind { kCreate, kAlter, kDrop, kShowCatalogs, kShowCreate };

  CatalogStatementHandler(Kind kind, size_t keywords, ExternalCatalogs* catalogs,
                          access::AccessControl* access)
      : kind_(kind), keywords_(keywords), catalogs_(catalogs), access_(access) {}

  Result<StatementResult> Execute(const sql::StatementContext& ctx) override {
    Cursor c(ctx, keywords_);
    c.Conceal();  // the statement may hold a password
    const std::string& me = ctx.session.info().user;
    switch (kind_) {
      case Kind::kCreate:
        return Create(c, me);
      case Kind::kAlter:
        return Alter(c, me);
      case Kind::kDrop:
        return Drop(c, me);
      case Kind::kShowCatalogs:
        return ShowCatalogs(ctx, c, me);
      case Kind::kShowCreate:
        return ShowCreate(ctx, c, me);
    }
    return Status::Internal("unhandled statement on catalogs");
  }

  std::string ForLog(std::string_view sql, const std::vector<sql::Token>& tokens) const override {
    return MaskSecrets(sql, tokens);
  }

 private:
  // `privilege` on catalog `name` (at *.* or name.*.*).
  Status Require(const std::string& user, Privilege privilege, const std::string& name) const {
    if (access_->HasIn(user, privilege, name, "", "")) return Status::Ok();
    return sql::SpecificAccessDeniedError(access::PrivilegeName(privilege));
  }

  static Result<bool> IfClause(Cursor& c, std::string_view second) {
    if (!c.Accept("IF")) return false;
    if (second == "NOT") MR_RETURN_IF_ERROR(c.Expect("NOT"));
    MR_RETURN_IF_ERROR(c.Expect("EXISTS"));
    return true;
  }

  static Result<CatalogProperties> Properties(Cursor& c) {
    MR_RETURN_IF_ERROR(c.Expect("PROPERTIES"));
    MR_ASSIGN_OR_RETURN(sql::PropertyList given, sql::ParseProperties(c));
    return NormalizeProperties(given);
  }

  Result<StatementResult> Create(Cursor& c, const std::string& me) {
    MR_ASSIGN_OR_RETURN(const bool if_not_exists, IfClause(c, "NOT"));
    MR_ASSIGN_OR_RETURN(std::string name, c.Identifier("a catalog name"));
    MR_RETURN_IF_ERROR(Require(me, Privilege::kCreate, name));
    std::string comment;
    if (c.Accept("COMMENT")) {
      MR_ASSIGN_OR_RETURN(comment, c.Quoted("a comment in quotes"));
    }
    if (c.Accept("WITH")) {
      return sql::NotSupportedError("CREATE CATALOG ... WITH RESOURCE",
                                    "give the catalog's PROPERTIES");
    }
    MR_ASSIGN_OR_RETURN(CatalogProperties properties, Properties(c));
    MR_RETURN_IF_ERROR(c.ExpectEnd());
    MR_RETURN_IF_ERROR(catalogs_->Create(std::move(name), std::move(comment), std::move(properties),
                                         if_not_exists));
    return sql::Ok();
  }

  Result<StatementResult> Alter(Cursor& c, const std::string& me) {
    MR_ASSIGN_OR_RETURN(const std::string name, c.Identifier("a catalog name"));
    MR_RETURN_IF_ERROR(Require(me, Privilege::kAlter, name));
    if (c.Accept("MODIFY")) {
      MR_RETURN_IF_ERROR(c.Expect("COMMENT"));
      MR_ASSIGN_OR_RETURN(std::string comment, c.Quoted("a comment in quotes"));
      MR_RETURN_IF_ERROR(c.ExpectEnd());
      MR_RETURN_IF_ERROR(catalogs_->SetComment(name, std::move(comment)));
      return sql::Ok();
    }
    if (c.Accept("RENAME")) {
      return sql::NotSupportedError("ALTER CATALOG ... RENAME",
                                    "jobs name their target by its catalog; drop and create it");
    }
    MR_RETURN_IF_ERROR(c.Expect("SET"));
    MR_ASSIGN_OR_RETURN(const CatalogProperties changes, Properties(c));
    MR_RETURN_IF_ERROR(c.ExpectEnd());
    MR_RETURN_IF_ERROR(catalogs_->SetProperties(name, changes));
    return sql::Ok();
  }

  Result<StatementResult> Drop(Cursor& c, const std::string& me) {
    MR_ASSIGN_OR_RETURN(const bool if_exists, IfClause(c, "EXISTS"));
    MR_ASSIGN_OR_RETURN(const std::string name, c.Identifier("a catalog name"));
    MR_RETURN_IF_ERROR(Require(me, Privilege::kDrop, name));
    MR_RETURN_IF_ERROR(c.ExpectEnd());
    MR_RETURN_IF_ERROR(catalogs_->Drop(name, if_exists));
    return sql::Ok();
  }

  // A user sees the catalogs it holds a privilege in (any, at *.* included).
  Result<StatementResult> ShowCatalogs(const sql::StatementContext& ctx, Cursor& c,
                                       const std::string& me) {
    MR_ASSIGN_OR_RETURN(const sql::ShowFilter filter, sql::ParseFilter(c));
    std::vector<std::vector<std::string>> rows = {{"0", sql::Quote("internal"),
                                                   sql::Quote("internal"), sql::Quote("yes"),
                                                   "NULL", "NULL", sql::Quote("")}};
    int64_t id = 0;
    for (const ExternalCatalog& catalog : catalogs_->List()) {
      ++id;  // its place among all catalogs, whoever looks
      if (access_->HasAnyIn(me, catalog.name, "", "")) {
        rows.push_back({std::to_string(id), sql::Quote(catalog.name), sql::Quote(catalog.type()),
                        sql::Quote(""), sql::Quote(TimeText(catalog.create_time_us)),
                        sql::Quote(TimeText(catalog.update_time_us)), sql::Quote(catalog.comment)});
      }
    }
    std::string base = sql::ValuesTable(kCatalogsColumns, rows);
    sql::ShowFilter where = filter;
    if (filter.like) {
      // Doris filters SHOW CATALOGS by name, not by its first column.
      base = "SELECT * FROM (" + base + ") WHERE \"CatalogName\" ILIKE " +
             sql::Quote(*filter.like) + " ESCAPE '\\'";
      where.like.reset();
    }
    std::vector<std::string> names;
    for (const sql::ValuesColumn& column : kCatalogsColumns)
      names.push_back(column.name);
    return sql::ShowQuery(ctx.session, base, names, where, "\"CatalogId\"");
  }

  Result<StatementResult> ShowCreate(const sql::StatementContext& ctx, Cursor& c,
                                     const std::string& me) {
    MR_ASSIGN_OR_RETURN(const std::string name, c.Identifier("a catalog name"));
    MR_RETURN_IF_ERROR(c.ExpectEnd());
    if (!access_->HasAnyIn(me, name, "", "")) {
      return sql::SpecificAccessDeniedError(
          "SELECT_PRIV,LOAD_PRIV,ALTER_PRIV,CREATE_PRIV,"
          "DROP_PRIV,ADMIN_PRIV");
    }
    const std::optional<ExternalCatalog> catalog = catalogs_->Find(name);
    if (!catalog) return Status::NotFound("catalog " + name + " does not exist");
    return ctx.session.ExecuteDuckDb(
        sql::ValuesTable({{"Catalog", "VARCHAR"}, {"CreateCatalog", "VARCHAR"}},
                         {{sql::Quote(catalog->name), sql::Quote(ShowCreateCatalog(*catalog))}}));
  }

  const Kind kind_;
  const size_t keywords_;
  ExternalCatalogs* const catalogs_;
  access::AccessControl* const access_;
};

}  // namespace

void RegisterCatalogStatements(sql::Router* router, ExternalCatalogs* catalogs,
                               access::AccessControl* access) {
  using Kind = CatalogStatementHandler::Kind;
  const std::vector<std::pair<std::vector<std::string>, Kind>> statements = {
      {{"CREATE", "CATALOG"}, Kind::kCreate},
      {{"CREATE", "EXTERNAL", "CATALOG"}, Kind::kCreate},
      {{"ALTER", "CATALOG"}, Kind::kAlter},
      {{"DROP", "CATALOG"}, Kind::kDrop},
      {{"SHOW", "CATALOGS"}, Kind::kShowCatalogs},
      {{"SHOW", "CREATE", "CATALOG"}, Kind::kShowCreate},
  };
  for (const auto& [keywords, kind] : statements) {
    router->RegisterStatement(keywords, std::make_shared<CatalogStatementHandler>(
                                            kind, keywords.size(), catalogs, access));
  }
}

}  // namespace millrace::external
