// Doris's load labels: `INSERT INTO t WITH LABEL l ...` loads once per label and database.
//
// Contract
// - A label is recorded (kLabelTableDdl, created by the job catalog, version 5) in the
//   transaction of the INSERT it names, before the INSERT runs: a second INSERT with a label
//   already recorded in its database is refused with Doris's "Label [l] has already been used"
//   (MySQL 1105) and loads nothing; two at once are decided by the table's primary key (one
//   fails and rolls back). An INSERT that fails leaves no label, so it can be run again.
// - SHOW LOAD [FROM db] [WHERE LABEL = 'l'] lists the labels of a database on the tables the
//   user may see (LabelRowsSql).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace millrace::table {

inline constexpr std::string_view kLabelTableDdl =
    "CREATE TABLE __millrace.load_labels (database_name VARCHAR NOT NULL, label VARCHAR NOT "
    "NULL, table_name VARCHAR NOT NULL, user_name VARCHAR NOT NULL, create_time_us BIGINT NOT "
    "NULL, PRIMARY KEY (database_name, label))";

// The statement recording `label`; it fails on a label already recorded.
std::string RecordLabelSql(std::string_view database, std::string_view label,
                           std::string_view table, std::string_view user, int64_t now_us);
// The query of SHOW LOAD: Doris's columns for the labels of `database` on `tables` (all of
// them, or the one named `label` when not empty).
std::string LabelRowsSql(std::string_view database, std::string_view label,
                         const std::vector<std::string>& tables);
// The tables the labels of `database` name (one column).
std::string LabelTablesSql(std::string_view database);

}  // namespace millrace::table
