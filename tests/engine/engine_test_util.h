// Helpers shared by the engine tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/database.h"

namespace millrace::engine {

// Runs `sql` and returns every cell as text, row by row.
inline std::vector<std::vector<std::string>> QueryRows(Connection& conn, const std::string& sql) {
  std::vector<std::vector<std::string>> rows;
  auto result = conn.Query(sql);
  EXPECT_TRUE(result.ok()) << sql << ": " << result.status().ToString();
  if (!result.ok()) return rows;
  while (true) {
    auto chunk = (*result)->Next();
    EXPECT_TRUE(chunk.ok()) << chunk.status().ToString();
    if (!chunk.ok() || *chunk == nullptr) break;
    for (size_t r = 0; r < (*chunk)->size(); ++r) {
      std::vector<std::string> row;
      for (size_t c = 0; c < (*chunk)->column_count(); ++c)
        row.push_back((*chunk)->GetText(c, r));
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

// The single value of a one-row, one-column query, as text.
inline std::string QueryValue(Connection& conn, const std::string& sql) {
  auto rows = QueryRows(conn, sql);
  if (rows.size() != 1 || rows[0].size() != 1) {
    ADD_FAILURE() << sql << " returned " << rows.size() << " rows";
    return "";
  }
  return rows[0][0];
}

inline std::unique_ptr<Database> OpenOrDie(const DatabaseOptions& options) {
  auto db = Database::Open(options);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::move(db).value() : nullptr;
}

inline std::unique_ptr<Connection> ConnectOrDie(Database& db) {
  auto conn = db.Connect();
  EXPECT_TRUE(conn.ok()) << conn.status().ToString();
  return conn.ok() ? std::move(conn).value() : nullptr;
}

}  // namespace millrace::engine
