// What Millrace can learn about a statement before DuckDB binds it, when DuckDB's parser
// describes only SELECTs (json_serialize_sql). Binding runs a table function's bind, and a
// file reader's bind opens its files: a statement must not reach the binder with one that the
// sandbox would refuse. The lexer finds the parts; DuckDB's parser reads them.
//
// Contract
// - StatementStart: the leading keywords that say what a statement is ("COPY",
//   "CREATE SECRET", "INSERT"), upper case, skipping OR REPLACE, TEMP/TEMPORARY, PERSISTENT,
//   UNIQUE and FORCE.
// - CalledNames: every bare or quoted name directly followed by '(' (lower case): what may be a
//   function call. Conservative: a type such as VARCHAR(10) is listed too.
// - QueryParts: the texts of the queries inside a statement, each a SELECT DuckDB's parser
//   reads: the query of an INSERT, CREATE TABLE ... AS and CREATE VIEW ... AS; the FROM list
//   of an UPDATE and the USING list of a DELETE (as SELECT * FROM <list>); every parenthesized
//   subquery. A part the lexer misjudges fails to parse and is left to the plan's check.
// - Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace millrace::access {

std::string StatementStart(std::string_view sql);
std::vector<std::string> CalledNames(std::string_view sql);
std::vector<std::string> QueryParts(std::string_view sql);
// The offset where the query of CREATE ... AS <query> (a table or a view) begins; nullopt for
// another statement.
std::optional<size_t> CreateAsQueryBegin(std::string_view sql);

}  // namespace millrace::access
