// MySqlSession's prepared-statement commands (mysql_session.h): COM_STMT_PREPARE, _EXECUTE,
// _FETCH, _SEND_LONG_DATA, _CLOSE and _RESET over sql::Session::Prepare / ExecutePrepared.
#include "common/logging.h"
#include "server/binary_protocol.h"
#include "server/mysql_session.h"
#include "sql/mysql_errors.h"

namespace millrace::server {

Status MySqlSession::HandlePrepare(std::string_view sql) {
  env_.metrics->queries->Add();
  Result<std::unique_ptr<sql::ClientStatement>> prepared = session_->Prepare(sql);
  if (!prepared.ok()) {
    WriteError(session_->RecordError(prepared.status()));
    return Status::Ok();
  }
  const sql::ClientStatement& statement = **prepared;
  const uint32_t id = next_statement_id_++;
  const size_t params = statement.parameter_count();
  const std::vector<engine::PreparedStatement::Column>& columns = statement.columns();
  channel_->Write(
      BuildPrepareOk(id, static_cast<uint16_t>(columns.size()), static_cast<uint16_t>(params)));
  const bool deprecate_eof = (capabilities_ & kClientDeprecateEof) != 0;
  const std::string schema = session_->database().value_or("");
  if (params > 0) {
    // A parameter's type is the client's to choose: each is announced as a string.
    for (size_t i = 0; i < params; ++i)
      channel_->Write(BuildColumnDefinition("", "?", MySqlColumnFor({engine::TypeId::kVarchar})));
    if (!deprecate_eof) channel_->Write(BuildEof(StatusFlags(false)));
  }
  if (!columns.empty()) {
    for (const engine::PreparedStatement::Column& c : columns)
      channel_->Write(BuildColumnDefinition(schema, c.name, MySqlColumnFor(c.type)));
    if (!deprecate_eof) channel_->Write(BuildEof(StatusFlags(false)));
  }
  Prepared entry;
  entry.statement = std::move(prepared).value();
  entry.long_data.resize(params);
  statements_.emplace(id, std::move(entry));
  return Status::Ok();
}

Status MySqlSession::HandleExecute(std::string_view body) {
  env_.metrics->queries->Add();
  MR_ASSIGN_OR_RETURN(const uint32_t id, StatementIdOf(body));
  auto it = statements_.find(id);
  if (it == statements_.end()) {
    env_.metrics->query_errors->Add();
    WriteError(sql::kErUnknownStmtHandler, "HY000",
               "Unknown prepared statement handler (" + std::to_string(id) +
                   ") given to mysqld_stmt_execute");
    return Status::Ok();
  }
  Prepared& prepared = it->second;
  Result<ExecuteRequest> request = ParseExecute(body, prepared.statement->parameter_count(),
                                                &prepared.types, prepared.long_data);
  if (!request.ok()) {
    // The packet does not describe the statement's parameters: the stream cannot be trusted.
    env_.metrics->protocol_errors->Add();
    WriteError(sql::kErMalformedPacket, "HY000", request.status().message());
    return request.status();
  }
  // Long data is for one execution.
  for (auto& data : prepared.long_data)
    data.reset();
  RunningStatement running(env_.metrics->running);
  StatementWatch watch(this);
  Result<sql::StatementResult> result =
      session_->ExecutePrepared(*prepared.statement, request->params);
  if (!result.ok()) {
    WriteError(result.status());
    return Status::Ok();
  }
  if (result->rows == nullptr) {
    channel_->Write(BuildOk(static_cast<uint64_t>(result->affected_rows), StatusFlags(false)));
    return Status::Ok();
  }
  if ((request->flags & kCursorTypeReadOnly) != 0) {
    // The columns now, the rows at each COM_STMT_FETCH; the end of the metadata is marked
    // even under CLIENT_DEPRECATE_EOF, carrying SERVER_STATUS_CURSOR_EXISTS.
    auto cursor = std::make_unique<Cursor>();
    cursor->statement_id = id;
    cursor->result = std::move(result).value();
    cursor->stream = WriteColumns(cursor->result);
    cursor_ = std::move(cursor);
    WriteEndOfRows(StatusFlags(false) | kServerStatusCursorExists);
    return Status::Ok();
  }
  bool failed = false;
  return SendResultSet(*result, /*more=*/false, &failed, /*binary=*/true);
}

Status MySqlSession::HandleFetch(std::string_view body) {
  WireReader r(body);
  uint32_t id = 0;
  uint32_t count = 0;
  if (!r.Int4(&id) || !r.Int4(&count)) {
    env_.metrics->protocol_errors->Add();
    WriteError(sql::kErMalformedPacket, "HY000", "COM_STMT_FETCH is shorter than its 8 bytes");
    return Status::InvalidArgument("COM_STMT_FETCH is shorter than its 8 bytes");
  }
  if (cursor_ == nullptr || cursor_->statement_id != id) {
    WriteError(sql::kErStmtHasNoOpenCursor, "HY000",
               "The statement (" + std::to_string(id) + ") has no open cursor.");
    return Status::Ok();
  }
  bool failed = false;
  MR_RETURN_IF_ERROR(WriteRows(cursor_->stream, count, /*binary=*/true, &failed));
  if (failed) {
    CloseCursor();
    return Status::Ok();
  }
  if (!cursor_->stream.done) {
    WriteEndOfRows(StatusFlags(false) | kServerStatusCursorExists);
    return Status::Ok();
  }
  CloseCursor();
  WriteEndOfRows(StatusFlags(false) | kServerStatusLastRowSent);
  return Status::Ok();
}

void MySqlSession::CloseCursor() {
  cursor_.reset();
}

void MySqlSession::WriteEndOfRows(uint16_t flags) {
  channel_->Write((capabilities_ & kClientDeprecateEof) != 0
                      ? BuildOk(0, flags, /*eof_header=*/true)
                      : BuildEof(flags));
}

Status MySqlSession::HandleSendLongData(std::string_view body) {
  WireReader r(body);
  uint32_t id = 0;
  uint16_t param = 0;
  if (!r.Int4(&id) || !r.Int2(&param)) {
    env_.metrics->protocol_errors->Add();
    return Status::InvalidArgument("COM_STMT_SEND_LONG_DATA is shorter than its header");
  }
  auto it = statements_.find(id);
  // MySQL answers nothing, not even for an unknown statement or parameter: the error comes
  // with the execution.
  if (it == statements_.end() || param >= it->second.long_data.size()) return Status::Ok();
  std::optional<std::string>& data = it->second.long_data[param];
  if (!data) data.emplace();
  data->append(r.Rest());
  return Status::Ok();
}

void MySqlSession::HandleClose(std::string_view body) {
  Result<uint32_t> id = StatementIdOf(body);
  if (!id.ok()) return;
  if (cursor_ != nullptr && cursor_->statement_id == *id) CloseCursor();
  statements_.erase(*id);
}

void MySqlSession::HandleReset(std::string_view body) {
  Result<uint32_t> id = StatementIdOf(body);
  auto it = id.ok() ? statements_.find(*id) : statements_.end();
  if (it == statements_.end()) {
    WriteError(sql::kErUnknownStmtHandler, "HY000",
               "Unknown prepared statement handler given to mysqld_stmt_reset");
    return;
  }
  for (auto& data : it->second.long_data)
    data.reset();
  if (cursor_ != nullptr && cursor_->statement_id == *id) CloseCursor();
  channel_->Write(BuildOk(0, StatusFlags(false)));
}

}  // namespace millrace::server
