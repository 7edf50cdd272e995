// Internal to the server module: the binary protocol of prepared statements — COM_STMT_EXECUTE's
// parameters, and result rows as binary values.
//
// Contract
// - ParseExecute reads a COM_STMT_EXECUTE body (after the command byte) for a statement of
//   `param_count` parameters. The parameter types are those the packet binds, else `types`
//   (the statement's previous ones), which it updates; a parameter that has long data
//   (`long_data[i]`, from COM_STMT_SEND_LONG_DATA) takes it and has no value in the packet.
//   Integers keep their signedness, FLOAT and DOUBLE become doubles, DATE / DATETIME /
//   TIMESTAMP / TIME become their text ("2024-02-29 23:59:59.000001", "-838:59:59"), every
//   other type is a string: text when it is valid UTF-8, else bytes. A truncated packet, a
//   type MySQL does not define or types never bound are INVALID_ARGUMENT naming what is wrong.
// - AppendBinaryRow appends a binary result row (0x00, the NULL bitmap, the values) of `row`
//   with each column's value encoded as its declared MySQL type says (`columns`, from
//   MySqlColumnFor).
// - Pure functions over values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/query_result.h"
#include "server/column_types.h"
#include "server/wire.h"
#include "sql/client_statement.h"

namespace millrace::server {

inline constexpr uint8_t kComStmtPrepare = 0x16;
inline constexpr uint8_t kComStmtExecute = 0x17;
inline constexpr uint8_t kComStmtSendLongData = 0x18;
inline constexpr uint8_t kComStmtClose = 0x19;
inline constexpr uint8_t kComStmtReset = 0x1a;
inline constexpr uint8_t kComStmtFetch = 0x1c;

// COM_STMT_EXECUTE flags: open a read-only cursor, fetched with COM_STMT_FETCH.
inline constexpr uint8_t kCursorTypeReadOnly = 1;
// Status flags of a cursor's answers.
inline constexpr uint16_t kServerStatusCursorExists = 0x40;
inline constexpr uint16_t kServerStatusLastRowSent = 0x80;

struct ExecuteRequest {
  uint32_t statement_id = 0;
  uint8_t flags = 0;  // cursor type
  std::vector<sql::ParamValue> params;
};

// The statement id a COM_STMT_* body starts with.
Result<uint32_t> StatementIdOf(std::string_view body);

// `types`: two bytes a parameter (type, then 0x80 when unsigned), kept between executions.
Result<ExecuteRequest> ParseExecute(std::string_view body, size_t param_count,
                                    std::vector<uint16_t>* types,
                                    const std::vector<std::optional<std::string>>& long_data);

// COM_STMT_PREPARE's OK.
std::string BuildPrepareOk(uint32_t statement_id, uint16_t columns, uint16_t params);

void AppendBinaryRow(const engine::DataChunk& chunk, size_t row,
                     const std::vector<engine::TypeId>& types,
                     const std::vector<MySqlColumn>& columns, WireWriter* out);

}  // namespace millrace::server
