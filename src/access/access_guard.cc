#include "access/access_guard.h"

#include <algorithm>
#include <array>
#include <set>

#include "access/information_schema.h"
#include "access/internal_databases.h"
#include "access/statement_screen.h"
#include "common/strings.h"
#include "sql/lexer.h"
#include "sql/mysql_errors.h"

namespace millrace::access {
namespace {

using engine::RelationName;

// Lower-cased (schema, name): the catalog resolves names case-insensitively.
using Key = std::pair<std::string, std::string>;
Key KeyOf(std::string_view schema, std::string_view name) {
  return {ToLower(schema), ToLower(name)};
}

// Texts longer than this are parsed again each time rather than kept.
constexpr size_t kParseCacheMaxText = 4096;

std::string PrivilegeLabel(Privilege privilege) {
  return std::string(PrivilegeName(privilege));
}

}  // namespace

// What DuckDB's parser reads of a statement (it describes SELECTs only): the statement itself
// when it is one, else each query inside it (QueryParts) that parses as one. Nothing binds.
struct AccessGuard::ParsedStatement {
  std::optional<engine::ParsedFacts> select;
  std::vector<engine::ParsedFacts> queries;
};

AccessGuard::AccessGuard(const AccessControl* access, std::unique_ptr<Sandbox> sandbox,
                         AuditLog* audit, const FailPoints* fail_points,
                         std::function<bool(std::string_view)> is_external_catalog)
    : access_(access),
      sandbox_(std::move(sandbox)),
      audit_(audit),
      fail_points_(fail_points),
      is_external_catalog_(std::move(is_external_catalog)),
      parses_(kParseCacheEntries) {}

AccessGuard::~AccessGuard() = default;

Result<std::shared_ptr<const AccessGuard::ParsedStatement>> AccessGuard::Parse(
    engine::Connection& conn, std::string_view sql) const {
  const bool kept = sql.size() <= kParseCacheMaxText;
  if (kept) {
    if (auto found = parses_.Find(sql)) return found;
  }
  auto out = std::make_shared<ParsedStatement>();
  MR_ASSIGN_OR_RETURN(out->select, engine::ParseSelect(conn, sql));
  if (!out->select) {
    for (const std::string& part : QueryParts(sql)) {
      MR_ASSIGN_OR_RETURN(std::optional<engine::ParsedFacts> query,
                          engine::ParseSelect(conn, part));
      // Not a query after all: the plan's check decides.
      if (query) out->queries.push_back(std::move(*query));
    }
  }
  if (kept) parses_.Insert(std::string(sql), out);
  return std::shared_ptr<const ParsedStatement>(std::move(out));
}

// A relation a statement names, resolved in the catalog.
struct AccessGuard::Relation {
  std::string schema;
  std::string name;
  bool view = false;
  bool system = false;    // a view of DuckDB's system catalog (information_schema, pg_catalog)
  bool filtered = false;  // a view of the filtered information_schema
};

Status AccessGuard::CheckNames(sql::Session& session, std::string_view sql) {
  if (const std::optional<sql::Explained> explain = sql::SplitExplain(sql)) {
    return CheckNames(session, sql.substr(explain->statement_begin));
  }
  // Another statement: the queries inside it (CREATE TABLE AS, INSERT ... SELECT, CREATE VIEW);
  // what it writes or drops is its bound plan's target, which CheckStatement screens.
  MR_ASSIGN_OR_RETURN(std::shared_ptr<const ParsedStatement> parsed,
                      Parse(session.connection(), sql));
  std::vector<const engine::ParsedFacts*> queries;
  if (parsed->select) queries.push_back(&*parsed->select);
  for (const engine::ParsedFacts& query : parsed->queries)
    queries.push_back(&query);
  for (const engine::ParsedFacts* query : queries) {
    for (const RelationName& r : query->relations) {
      if (IsInternalDatabase(r.schema)) return sql::DatabaseAccessDeniedError(r.schema);
      if (!r.catalog.empty() && is_external_catalog_ && is_external_catalog_(r.catalog)) {
        return sql::NotSupportedError(
            "reading " + r.catalog + "." + r.schema + "." + r.name,
            r.catalog +
                " is an external catalog, whose tables jobs write into; query them in "
                "the database itself (DuckDB's postgres extension is not available here)");
      }
    }
  }
  return Status::Ok();
}

Status AccessGuard::Require(sql::Session& session, Privilege privilege, std::string_view database,
                            std::string_view table) const {
  return Require(session.info(), privilege, database, table);
}

Status AccessGuard::Require(const sql::SessionInfo& who, Privilege privilege,
                            std::string_view database, std::string_view table) const {
  if (access_->Has(who.user, privilege, database, table)) return Status::Ok();
  if (table.empty()) {
    if (privilege == Privilege::kAdmin)
      return sql::SpecificAccessDeniedError(PrivilegeLabel(privilege));
    return sql::DatabaseAccessDeniedError(who.user, who.host, database)
        .WithContext(PrivilegeLabel(privilege) + " is needed");
  }
  return sql::TableAccessDeniedError(PrivilegeLabel(privilege), who.user, who.host, database,
                                     table);
}

Result<std::optional<std::string>> AccessGuard::Scope(sql::Session& session, std::string_view sql) {
  if (StatementStart(sql) == "CREATE VIEW") return QualifyViewQuery(session, sql);
  if (access_->IsAdmin(session.info().user)) return std::optional<std::string>();
  return RouteToFilteredInformationSchema(session.connection(), sql);
}

Result<std::optional<std::string>> AccessGuard::QualifyViewQuery(sql::Session& session,
                                                                 std::string_view sql) const {
  const std::optional<size_t> begin = CreateAsQueryBegin(sql);
  if (!begin) return std::optional<std::string>();
  engine::Connection& conn = session.connection();
  const std::string_view query = sql.substr(*begin);
  MR_ASSIGN_OR_RETURN(std::optional<engine::ParsedFacts> parsed, engine::ParseSelect(conn, query));
  if (!parsed) return std::optional<std::string>();  // DuckDB refuses it when it runs
  // Each name written without a schema, resolved now as DuckDB's search path resolves it.
  engine::ParsedFacts unqualified;
  for (const RelationName& r : parsed->relations) {
    const bool cte = std::find(parsed->cte_names.begin(), parsed->cte_names.end(),
                               ToLower(r.name)) != parsed->cte_names.end();
    if (r.schema.empty() && !cte) unqualified.relations.push_back(r);
  }
  if (unqualified.relations.empty()) return std::optional<std::string>();
  MR_ASSIGN_OR_RETURN(std::vector<Relation> resolved,
                      Resolve(conn, session.database(), unqualified));
  std::map<std::string, std::string> schema_of;  // lower-cased name -> schema
  for (size_t i = 0; i < resolved.size(); ++i) {
    if (!resolved[i].system) schema_of[ToLower(unqualified.relations[i].name)] = resolved[i].schema;
  }
  MR_ASSIGN_OR_RETURN(auto catalog_rows, engine::QueryTextRows(conn, "SELECT current_database()"));
  if (catalog_rows.size() != 1 || catalog_rows[0].size() != 1) {
    return Status::Internal("current_database() returned no row");
  }
  const std::string catalog = catalog_rows[0][0];
  MR_ASSIGN_OR_RETURN(std::optional<std::string> qualified,
                      engine::RenameRelations(conn, query, [&](engine::WrittenRelation* r) {
                        if (!r->catalog.empty() || !r->schema.empty()) return false;
                        auto it = schema_of.find(ToLower(r->name));
                        if (it == schema_of.end()) return false;
                        r->catalog = catalog;
                        r->schema = it->second;
                        return true;
                      }));
  if (!qualified) return std::optional<std::string>();
  return std::optional<std::string>(std::string(sql.substr(0, *begin)) + *qualified);
}

Status AccessGuard::CheckStatement(sql::Session& session, std::string_view sql) {
  if (fail_points_ != nullptr) {
    MR_RETURN_IF_ERROR(fail_points_->Check(kGateFailPoint, session.info().user));
  }
  // EXPLAIN [ANALYZE] is checked as the statement it explains (DuckDB cannot serialize the
  // plan of an EXPLAIN).
  if (const std::optional<sql::Explained> explain = sql::SplitExplain(sql)) {
    if (explain->statement_begin == sql.size()) return sql::SyntaxError("EXPLAIN of nothing");
    return CheckStatement(session, sql.substr(explain->statement_begin));
  }
  engine::Connection& conn = session.connection();
  const std::string& user = session.info().user;
  const bool admin = access_->IsAdmin(user);

  // 1. Before anything binds it: a SELECT on its parse tree; another statement on what it
  // starts with, the table functions it names, and the queries inside it.
  MR_ASSIGN_OR_RETURN(const std::shared_ptr<const ParsedStatement> statement, Parse(conn, sql));
  const std::optional<engine::ParsedFacts>& parsed = statement->select;
  std::vector<Relation> named;
  if (parsed) {
    MR_RETURN_IF_ERROR(
        sandbox_->CheckFunctions(parsed->functions, parsed->table_functions, admin, false));
    MR_ASSIGN_OR_RETURN(named, Resolve(conn, session.database(), *parsed));
  } else {
    MR_RETURN_IF_ERROR(sandbox_->CheckStart(StatementStart(sql)));
    MR_RETURN_IF_ERROR(sandbox_->CheckCalledNames(CalledNames(sql), admin));
    for (const engine::ParsedFacts& query : statement->queries) {
      MR_RETURN_IF_ERROR(
          sandbox_->CheckFunctions(query.functions, query.table_functions, admin, false));
      MR_RETURN_IF_ERROR(Resolve(conn, session.database(), query).status());
    }
  }
  // 2. Its kind.
  MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::PreparedStatement> prepared, conn.PrepareOne(sql));
  MR_RETURN_IF_ERROR(sandbox_->CheckKind(prepared->kind()));
  if (prepared->kind() == engine::StatementKind::kTransaction) return Status::Ok();
  prepared.reset();
  // 3. Its plan.
  MR_ASSIGN_OR_RETURN(engine::PlanFacts plan, engine::PlanStatement(conn, sql));
  MR_RETURN_IF_ERROR(sandbox_->CheckPlan(plan));
  // DuckDB's metadata bound inside the filtered information_schema lists only what the user
  // may see; named alongside a system view, it would not be alone.
  bool filtered_metadata = !admin && std::any_of(named.begin(), named.end(), [](const Relation& r) {
    return r.filtered;
  }) && std::none_of(named.begin(), named.end(), [](const Relation& r) { return r.system; });
  if (filtered_metadata) {
    // Only the filtered views may bring metadata in: with each one replaced by a stub that
    // reads none, the statement must reach none (through a view, a SHOW, ...).
    MR_ASSIGN_OR_RETURN(std::optional<std::string> stubbed, StubFilteredViews(conn, sql));
    filtered_metadata = stubbed.has_value();
    if (stubbed) {
      MR_ASSIGN_OR_RETURN(engine::PlanFacts stub_plan, engine::PlanStatement(conn, *stubbed));
      MR_RETURN_IF_ERROR(
          sandbox_->CheckFunctions(stub_plan.functions, stub_plan.table_functions, admin, true));
    }
  }
  MR_RETURN_IF_ERROR(sandbox_->CheckFunctions(plan.functions, plan.table_functions, admin, true,
                                              filtered_metadata));
  MR_RETURN_IF_ERROR(
      sandbox_->CheckFunctions(plan.parsed.functions, plan.parsed.table_functions, admin, false));
  // The internal databases are the server's: no client statement, root's included, writes
  // them or reads a table of theirs, as DuckDB bound it (views seen through). Their views (the
  // routed information_schema) read DuckDB's metadata and the user's grants, never a table.
  if (plan.target && IsInternalDatabase(plan.target->object.schema)) {
    return sql::DatabaseAccessDeniedError(plan.target->object.schema);
  }
  for (const RelationName& scan : plan.scans) {
    if (IsInternalDatabase(scan.schema)) return sql::DatabaseAccessDeniedError(scan.schema);
  }
  if (plan.target && !plan.target->writes_rows()) {
    const engine::RelationName& object = plan.target->object;
    NoteDdl(session, plan.target->operation + " " + plan.target->kind + " " + object.schema +
                         (object.name.empty() ? "" : "." + object.name));
  }
  // 4. Privileges.
  if (admin) return Status::Ok();
  if (!parsed) {
    // Relations named by parse trees inside the plan (a CREATE VIEW's query).
    MR_ASSIGN_OR_RETURN(named, Resolve(conn, session.database(), plan.parsed));
    // A view over DuckDB's metadata would show it unfiltered to whoever may read the view.
    if (std::any_of(named.begin(), named.end(),
                    [](const Relation& r) { return r.system || r.filtered; })) {
      return sql::SandboxError("a view or statement over information_schema or pg_catalog",
                               "DuckDB's metadata lists every database and needs ADMIN_PRIV "
                               "there; information_schema is filtered per user in queries");
    }
  }
  MR_RETURN_IF_ERROR(CheckReads(session, named, plan));
  if (plan.target) MR_RETURN_IF_ERROR(CheckTarget(session, *plan.target));
  return Status::Ok();
}

Result<std::vector<AccessGuard::Relation>> AccessGuard::Resolve(
    engine::Connection& conn, const std::optional<std::string>& database,
    const engine::ParsedFacts& parsed) const {
  std::vector<Relation> out;
  if (parsed.relations.empty()) return out;
  const std::string current = database.value_or("main");
  // Where each relation may be, in order: an unqualified name resolves in the current database
  // first, then in main, then in the system catalog, as DuckDB's search path does. CTEs are
  // not looked up.
  std::vector<std::vector<std::string>> candidates;
  for (const RelationName& r : parsed.relations) {
    const bool is_cte = std::find(parsed.cte_names.begin(), parsed.cte_names.end(),
                                  ToLower(r.name)) != parsed.cte_names.end();
    if (r.schema.empty() && is_cte) {
      candidates.emplace_back();
    } else if (r.schema.empty()) {
      candidates.push_back({current, "main", "pg_catalog", "information_schema"});
    } else {
      candidates.push_back({r.schema});
    }
  }
  auto find = [&](const std::vector<std::vector<std::string>>& rows, const RelationName& r,
                  const std::vector<std::string>& schemas) -> const std::vector<std::string>* {
    for (const std::string& schema : schemas) {
      for (const auto& row : rows) {
        if (EqualsIgnoreCase(row[0], schema) && EqualsIgnoreCase(row[1], r.name)) return &row;
      }
    }
    return nullptr;
  };
  // Every name a table of its first schema, as DuckDB's catalog lookup finds it: that is where
  // it resolves (a view and a table of one schema cannot share a name), and the lookup costs
  // microseconds where the query below, planned and rendering every table's SQL, cost ~40% of
  // a plain statement's check. A name written with its catalog goes the query's way.
  bool all_tables = true;
  for (size_t i = 0; i < parsed.relations.size() && all_tables; ++i) {
    const RelationName& r = parsed.relations[i];
    all_tables = candidates[i].empty() ||
                 (r.catalog.empty() && conn.HasTable(candidates[i].front(), r.name));
  }
  if (all_tables) {
    for (size_t i = 0; i < parsed.relations.size(); ++i) {
      if (candidates[i].empty()) continue;
      const std::string& schema = candidates[i].front();
      out.push_back(Relation{schema, parsed.relations[i].name, false, false,
                             EqualsIgnoreCase(schema, kFilteredSchema)});
    }
    return out;
  }
  std::string names;
  for (const RelationName& r : parsed.relations) {
    names += (names.empty() ? "" : ", ") + engine::QuoteLiteral(ToLower(r.name));
  }
  // Tables first. Views only when some name is not a table of its first schema: a view and a
  // table of one schema cannot share a name, and duckdb_views() renders the SQL of every view
  // of the system catalog (~2 ms, most of what a plain query's check cost).
  MR_ASSIGN_OR_RETURN(auto rows,
                      engine::QueryTextRows(conn,
                                            "SELECT schema_name, table_name, false, false FROM "
                                            "duckdb_tables() WHERE lower(table_name) IN (" +
                                                names + ")"));
  bool need_views = false;
  for (size_t i = 0; i < parsed.relations.size() && !need_views; ++i) {
    need_views = !candidates[i].empty() &&
                 find(rows, parsed.relations[i], {candidates[i].front()}) == nullptr;
  }
  if (need_views) {
    MR_ASSIGN_OR_RETURN(auto views,
                        engine::QueryTextRows(conn,
                                              "SELECT schema_name, view_name, true, internal FROM "
                                              "duckdb_views() WHERE lower(view_name) IN (" +
                                                  names + ")"));
    rows.insert(rows.end(), std::make_move_iterator(views.begin()),
                std::make_move_iterator(views.end()));
  }
  for (size_t i = 0; i < parsed.relations.size(); ++i) {
    const RelationName& r = parsed.relations[i];
    if (candidates[i].empty()) continue;
    const std::vector<std::string>* found = find(rows, r, candidates[i]);
    if (found == nullptr) {
      return sql::NoSuchTableError(r.schema.empty() ? current : r.schema, r.name);
    }
    out.push_back(Relation{(*found)[0], (*found)[1], (*found)[2] == "true", (*found)[3] == "true",
                           EqualsIgnoreCase((*found)[0], kFilteredSchema)});
  }
  return out;
}

Status AccessGuard::CheckReads(sql::Session& session, const std::vector<Relation>& named,
                               const engine::PlanFacts& plan) const {
  std::set<Key> direct;   // tables named in the statement
  std::set<Key> covered;  // tables read through a named view the user may read
  for (const Relation& r : named) {
    if (r.system || r.filtered || IsInternalDatabase(r.schema)) continue;
    MR_RETURN_IF_ERROR(Require(session, Privilege::kSelect, r.schema, r.name));
    if (!r.view) {
      direct.insert(KeyOf(r.schema, r.name));
      continue;
    }
    MR_ASSIGN_OR_RETURN(engine::PlanFacts view_plan,
                        engine::PlanStatement(session.connection(),
                                              "SELECT * FROM " + engine::QuoteIdentifier(r.schema) +
                                                  "." + engine::QuoteIdentifier(r.name)));
    for (const RelationName& scan : view_plan.scans)
      covered.insert(KeyOf(scan.schema, scan.name));
  }
  // UPDATE, DELETE and MERGE (INSERT ... ON CONFLICT) read the table they write.
  const bool writes_own_table =
      plan.target && plan.target->writes_rows() && plan.target->operation != "INSERT";
  for (const RelationName& scan : plan.scans) {
    const Key key = KeyOf(scan.schema, scan.name);
    if (direct.contains(key) || covered.contains(key)) continue;
    // LOAD_PRIV covers the scan of the table written.
    if (writes_own_table && key == KeyOf(plan.target->object.schema, plan.target->object.name)) {
      continue;
    }
    MR_RETURN_IF_ERROR(Require(session, Privilege::kSelect, scan.schema, scan.name));
  }
  return Status::Ok();
}

Status AccessGuard::CheckTarget(sql::Session& session, const engine::PlanTarget& target) const {
  const RelationName& object = target.object;
  if (target.writes_rows()) return Require(session, Privilege::kLoad, object.schema, object.name);
  Privilege privilege = Privilege::kCreate;
  if (target.operation == "DROP") privilege = Privilege::kDrop;
  if (target.operation == "ALTER") privilege = Privilege::kAlter;
  // An index changes its table; dropping one names only the index, so it is checked on the
  // database.
  if (target.kind == "INDEX") {
    return target.operation == "DROP"
               ? Require(session, Privilege::kDrop, object.schema, "")
               : Require(session, Privilege::kAlter, object.schema, object.name);
  }
  return Require(session, privilege, object.schema, target.kind == "SCHEMA" ? "" : object.name);
}

Status AccessGuard::CheckJobQuery(engine::Connection& conn, const sql::SessionInfo& who,
                                  const std::string& database, std::string_view select,
                                  std::string_view source) const {
  if (fail_points_ != nullptr) MR_RETURN_IF_ERROR(fail_points_->Check(kGateFailPoint, who.user));
  // Read by DuckDB's parser only: the source's columns are known once a file is, so the
  // statement cannot be bound here.
  MR_ASSIGN_OR_RETURN(std::optional<engine::ParsedFacts> parsed, engine::ParseSelect(conn, select));
  if (!parsed || parsed->statements != 1) {
    return sql::SyntaxError("a job's SELECT must be one query");
  }
  const bool admin = access_->IsAdmin(who.user);
  MR_RETURN_IF_ERROR(
      sandbox_->CheckFunctions(parsed->functions, parsed->table_functions, admin, false));
  std::erase_if(parsed->relations, [&](const RelationName& r) {
    return r.schema.empty() && EqualsIgnoreCase(r.name, source);
  });
  MR_ASSIGN_OR_RETURN(
      std::vector<Relation> named,
      Resolve(conn, database.empty() ? std::nullopt : std::optional(database), *parsed));
  for (const Relation& r : named) {
    if (IsInternalDatabase(r.schema)) return sql::DatabaseAccessDeniedError(r.schema);
    // A job's rows outlive the grants of whoever reads its target: no metadata in them.
    if (r.system || r.filtered) {
      return sql::SandboxError("a job reading information_schema or pg_catalog",
                               "a job's SELECT reads its source and tables");
    }
    MR_RETURN_IF_ERROR(Require(who, Privilege::kSelect, r.schema, r.name));
  }
  return Status::Ok();
}

Status AccessGuard::CheckTableFunction(sql::Session& session, std::string_view name) {
  // local() reads the server's own disk: ADMIN_PRIV, as in Doris.
  if (EqualsIgnoreCase(name, "local")) {
    return Require(session, Privilege::kAdmin, "", "");
  }
  return Status::Ok();
}

Status AccessGuard::CheckObject(sql::Session& session, sql::ObjectAction action,
                                std::string_view database, std::string_view table) {
  if (IsInternalDatabase(database)) return sql::DatabaseAccessDeniedError(database);
  const sql::SessionInfo& info = session.info();
  switch (action) {
    case sql::ObjectAction::kShow:
    case sql::ObjectAction::kUse:
      if (access_->HasAny(info.user, database, table)) return Status::Ok();
      if (table.empty()) return sql::DatabaseAccessDeniedError(info.user, info.host, database);
      return sql::TableAccessDeniedError(PrivilegeLabel(Privilege::kSelect), info.user, info.host,
                                         database, table);
    case sql::ObjectAction::kCreate:
      NoteDdl(session, "CREATE DATABASE " + std::string(database));
      return Require(session, Privilege::kCreate, database, table);
    case sql::ObjectAction::kDrop:
      NoteDdl(session, "DROP DATABASE " + std::string(database));
      return Require(session, Privilege::kDrop, database, table);
  }
  return Status::Ok();
}

bool AccessGuard::Visible(sql::Session& session, std::string_view database,
                          std::string_view table) {
  return access_->HasAny(session.info().user, database, table);
}

bool AccessGuard::MayManageSessions(sql::Session& session) {
  return access_->IsAdmin(session.info().user);
}

void AccessGuard::NoteDdl(sql::Session& session, std::string action) {
  MutexLock lock(&mu_);
  pending_ddl_[session.connection().id()] = std::move(action);
}

void AccessGuard::Executed(sql::Session& session, std::string_view statement,
                           const Status& outcome) {
  std::optional<std::string> ddl;
  {
    MutexLock lock(&mu_);
    auto it = pending_ddl_.find(session.connection().id());
    if (it != pending_ddl_.end()) {
      ddl = std::move(it->second);
      pending_ddl_.erase(it);
    }
  }
  if (audit_ == nullptr) return;
  // Millrace's own statements, by the keywords the router routes them by.
  struct Audited {
    std::array<std::string_view, 3> keywords;  // the leading ones; empty from the first unused
    std::string_view kind;
  };
  static constexpr std::array<Audited, 16> kAudited = {{
      {{"CREATE", "USER"}, "USER"},
      {{"ALTER", "USER"}, "USER"},
      {{"DROP", "USER"}, "USER"},
      {{"SET", "PASSWORD"}, "USER"},
      {{"GRANT"}, "GRANT"},
      {{"REVOKE"}, "GRANT"},
      {{"CREATE", "JOB"}, "JOB"},
      {{"ALTER", "JOB"}, "JOB"},
      {{"PAUSE", "JOB"}, "JOB"},
      {{"RESUME", "JOB"}, "JOB"},
      {{"DROP", "JOB"}, "JOB"},
      // A dry run reads the job's source and tables: who looked is on record.
      {{"EXPLAIN", "CREATE", "JOB"}, "JOB"},
      {{"CREATE", "CATALOG"}, "CATALOG"},
      {{"CREATE", "EXTERNAL", "CATALOG"}, "CATALOG"},
      {{"ALTER", "CATALOG"}, "CATALOG"},
      {{"DROP", "CATALOG"}, "CATALOG"},
  }};
  const std::vector<sql::Token> tokens = sql::SignificantTokens(statement);
  std::string kind;
  std::string action;
  for (const Audited& a : kAudited) {
    bool match = true;
    std::string words;
    for (size_t i = 0; i < a.keywords.size() && !a.keywords[i].empty() && match; ++i) {
      match = i < tokens.size() && sql::IsKeyword(statement, tokens[i], a.keywords[i]);
      words += (i == 0 ? "" : " ") + std::string(a.keywords[i]);
    }
    if (!match) continue;
    kind = a.kind;
    action = std::move(words);
    break;
  }
  if (kind.empty() && ddl) {
    kind = "DDL";
    action = std::move(*ddl);
  }
  if (kind.empty()) return;
  const sql::SessionInfo& info = session.info();
  audit_->Record(AuditEvent{0, info.user, info.host, kind, action,
                            session.router().LoggableStatement(statement),
                            outcome.ok() ? "" : outcome.message()});
}

}  // namespace millrace::access
