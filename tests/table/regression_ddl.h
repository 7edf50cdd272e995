// The table definition of Doris's own streaming-job regression tests, verbatim: the first
// statement of a Doris user's script.
#pragma once

namespace millrace::table {

inline constexpr const char* kRegressionDdl = R"(CREATE TABLE IF NOT EXISTS t (
    `c1` int NULL,
    `c2` string NULL,
    `c3` int  NULL,
) ENGINE=OLAP
DUPLICATE KEY(`c1`)
COMMENT 'OLAP'
DISTRIBUTED BY HASH(`c1`) BUCKETS 3
PROPERTIES ("replication_allocation" = "tag.location.default: 1"))";

}  // namespace millrace::table
