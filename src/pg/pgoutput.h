// The messages of PostgreSQL's pgoutput plugin (logical replication protocol version 1), and
// a decoder for them.
//
// Contract
// - DecodePgOutput reads one message (the payload of one XLogData). Begin, Commit, Relation,
//   Type, Insert, Update, Delete and Truncate are decoded; Origin and logical decoding messages
//   ('O', 'M') decode to Ignored. A message that is cut short or has an unknown tag is
//   DATA_LOSS naming the tag and what was missing.
// - Tuple values are the text output of their type (the protocol sends text unless binary was
//   asked for, which Millrace does not); an UNCHANGED value is a TOASTed value the UPDATE did
//   not touch: the subscriber keeps what it has.
// - Thread-safety: pure functions over values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "change/change_value.h"
#include "common/result.h"
#include "pg/lsn.h"

namespace millrace::pg {

struct BeginMessage {
  Lsn final_lsn = 0;           // the commit's LSN
  int64_t commit_time_us = 0;  // since 2000-01-01
  uint32_t xid = 0;
};

struct CommitMessage {
  Lsn commit_lsn = 0;
  Lsn end_lsn = 0;  // the end of the commit record: the position to resume after
  int64_t commit_time_us = 0;
};

struct RelationColumn {
  bool key = false;  // part of the replica identity
  std::string name;
  uint32_t type_oid = 0;
  int32_t type_modifier = -1;
};

struct RelationMessage {
  uint32_t oid = 0;
  std::string schema;
  std::string name;
  char replica_identity = 'd';  // d default, n nothing, f full, i index
  std::vector<RelationColumn> columns;
};

struct TypeMessage {
  uint32_t oid = 0;
  std::string schema;
  std::string name;
};

struct InsertMessage {
  uint32_t relation = 0;
  change::Tuple row;
};

struct UpdateMessage {
  uint32_t relation = 0;
  // 'K': the old key (the key changed); 'O': the whole old row (REPLICA IDENTITY FULL); 0: none.
  char old_kind = 0;
  change::Tuple old_row;
  change::Tuple row;
};

struct DeleteMessage {
  uint32_t relation = 0;
  char old_kind = 'K';  // 'K' key columns only, 'O' the whole row
  change::Tuple old_row;
};

struct TruncateMessage {
  std::vector<uint32_t> relations;
  bool cascade = false;
  bool restart_identity = false;
};

struct IgnoredMessage {
  char tag = 0;
};

using PgOutputMessage =
    std::variant<BeginMessage, CommitMessage, RelationMessage, TypeMessage, InsertMessage,
                 UpdateMessage, DeleteMessage, TruncateMessage, IgnoredMessage>;

Result<PgOutputMessage> DecodePgOutput(std::string_view data);

}  // namespace millrace::pg
