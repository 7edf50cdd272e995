// Test support: a statement run on a router's session as a client runs it, its rows as text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "sql/session.h"

namespace millrace::sql {

using TextRows = std::vector<std::vector<std::string>>;

// The rows of `sql` run on `session` (cells as text, NULL as "NULL"; none for a statement
// answered by OK), or its error.
inline Result<TextRows> SessionRows(Session& session, std::string_view sql) {
  MR_ASSIGN_OR_RETURN(StatementResult result, session.Execute(sql));
  TextRows rows;
  if (result.rows == nullptr) return rows;
  while (true) {
    MR_ASSIGN_OR_RETURN(auto chunk, result.rows->Next());
    if (chunk == nullptr) break;
    for (size_t r = 0; r < chunk->size(); ++r) {
      std::vector<std::string> row;
      for (size_t c = 0; c < chunk->column_count(); ++c)
        row.push_back(chunk->IsNull(c, r) ? "NULL" : chunk->GetText(c, r));
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace millrace::sql
