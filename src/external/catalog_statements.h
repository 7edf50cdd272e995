// Doris's statements on external catalogs, on the SQL router:
//
//   CREATE [EXTERNAL] CATALOG [IF NOT EXISTS] name [COMMENT 'text'] PROPERTIES ("k" = "v", ...)
//   ALTER CATALOG name SET PROPERTIES ("k" = "v", ...)
//   ALTER CATALOG name MODIFY COMMENT 'text'
//   DROP CATALOG [IF EXISTS] name
//   SHOW CATALOGS [LIKE 'pattern' | WHERE condition]
//   SHOW CREATE CATALOG name
//
// Contract
// - Privileges as Doris checks them: CREATE CATALOG needs CREATE_PRIV, ALTER CATALOG ALTER_PRIV
//   and DROP CATALOG DROP_PRIV, each held at *.* (grants on a catalog's own objects are not
//   kept yet); without it, MySQL error 1227 naming the privilege. SHOW CATALOGS lists the
//   external catalogs to a user holding any privilege at *.*, and always `internal`; SHOW
//   CREATE CATALOG needs a privilege at *.*.
// - SHOW CATALOGS has Doris's columns: CatalogId (0 for internal, then 1.. by name),
//   CatalogName, Type, IsCurrent ("yes" for internal: a session's statements resolve in it),
//   CreateTime, LastUpdateTime (UTC), Comment. SHOW CREATE CATALOG: Catalog, CreateCatalog
//   (external_catalog.h's ShowCreateCatalog: the password as "*XXX").
// - These statements carry a password: they are logged with their property values masked
//   (StatementHandler::ForLog), and a parse error names what was expected without quoting
//   the statement.
#pragma once

#include "access/access_control.h"
#include "external/external_catalogs.h"
#include "sql/session.h"

namespace millrace::external {

// Routes the statements on external catalogs of every session of `router` to `catalogs`,
// checking privileges with `access`; both must outlive the router's sessions.
void RegisterCatalogStatements(sql::Router* router, ExternalCatalogs* catalogs,
                               access::AccessControl* access);

}  // namespace millrace::external
