// Internal to the sql module: the MySQL statements the router answers itself (USE, SHOW ...,
// DESC, CREATE/DROP DATABASE, SET of session variables), registered as StatementHandlers.
#pragma once

namespace millrace::sql {

class Router;

void RegisterBuiltinStatements(Router& router);
// The statements about tables (table_metadata_statements.cc), registered by the above.
void RegisterTableMetadataStatements(Router& router);

}  // namespace millrace::sql
