// Parser for the streaming-job statements, in the Doris grammar (SPEC section 2):
//
//   CREATE JOB name ON STREAMING [PROPERTIES (...)] [COMMENT 'text'] DO INSERT INTO ...
//   CREATE JOB name [PROPERTIES (...)] ON STREAMING [COMMENT 'text'] DO INSERT INTO ...
//   CREATE JOB name ON STREAMING [PROPERTIES (...)] [COMMENT 'text']
//       FROM POSTGRES (...) TO DATABASE db [(...)]            (a whole database's changes)
//   PAUSE JOB WHERE jobname = 'name'
//   RESUME JOB WHERE jobname = 'name'
//   DROP JOB [IF EXISTS] WHERE jobname = 'name'
//   ALTER JOB name [PROPERTIES (...)] [[DO] INSERT INTO ... | FROM ... TO DATABASE ...]
//   ALTER JOB name RETRY FILE 'key' [, 'key' ...]
//   ALTER JOB name RETRY ALL
//
// Contract
// - Keywords are case-insensitive. A property value is a quoted string or a bare number.
// - Errors are INVALID_ARGUMENT naming what was expected and what was found, with the byte
//   offset, e.g. "CREATE JOB: expected ON STREAMING at offset 18, found 'ONN'".
// - The job's body (the INSERT, or FROM ... TO DATABASE) is analyzed by AnalyzeInsert: its
//   target table, optional column list, and exactly one S3(...), local(...) or cdc_stream(...)
//   call, whose byte range lets the task substitute the batch reader. The database form is a
//   change stream whose source properties (keys lower-cased, "type" set from the source's
//   name) stand where the call's arguments do, the parenthesis as the call's byte range.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/result.h"
#include "job/job_properties.h"
#include "load/file_params.h"
#include "sql/doris_table_functions.h"

namespace millrace::job {

struct CreateJobStatement {
  std::string name;
  PropertyMap properties;
  std::string comment;
  std::string insert_sql;  // the text after DO, or the FROM ... TO DATABASE form
};

enum class JobControl { kPause, kResume, kDrop };

struct ControlJobStatement {
  JobControl action;
  std::string name;
  bool if_exists = false;  // DROP JOB IF EXISTS
};

struct AlterJobStatement {
  std::string name;
  PropertyMap properties;
  std::string insert_sql;  // "" when the statement does not change it
  // ALTER JOB name RETRY FILE 'key' [, 'key'...] | RETRY ALL: load quarantined files again.
  std::vector<std::string> retry_files;
  bool retry_all = false;
};

using JobStatement = std::variant<CreateJobStatement, ControlJobStatement, AlterJobStatement>;

// True when the text starts with CREATE JOB, PAUSE JOB, RESUME JOB, DROP JOB or ALTER JOB.
bool IsJobStatement(std::string_view sql);
Result<JobStatement> ParseJobStatement(std::string_view sql);

struct InsertAnalysis {
  std::string target_table;  // as written, e.g. shop.events or "shop"."events"
  size_t target_begin = 0;   // its offset in the INSERT text
  // Its parts, unquoted: [database.]table, or catalog.schema.table (an external catalog's).
  std::vector<std::string> target_parts;
  std::vector<std::string> columns;
  load::SourceKind source = load::SourceKind::kS3;
  sql::DorisArgs args;      // of the S3()/local() call
  size_t select_begin = 0;  // offset of the SELECT
  size_t call_begin = 0;    // byte range of the call in the INSERT text
  size_t call_end = 0;
  // FROM <source> (...) TO DATABASE <db> (...): the database (also target_table) and its
  // properties; empty for an INSERT.
  std::string to_database;
  sql::DorisArgs to_args;
};

Result<InsertAnalysis> AnalyzeInsert(std::string_view insert_sql);

// The parameter tables of a change stream's calls (cdc_stream(...), FROM <source> (...)), whose
// secrets are masked as S3()'s are (cdc::ChangeStreamParamTables, wired by the server).
using ParamTables = std::vector<const std::vector<ParamSpec>*>;

// The INSERT text with the values its call's parameter table (load::FileFunctionParams, or
// `change_stream_params` for a change stream) declares secret replaced by "***".
std::string MaskSecrets(std::string_view insert_sql, const InsertAnalysis& analysis,
                        const ParamTables& change_stream_params);
// The same with each secret replaced by a placeholder naming its property, ${s3.secret_key},
// ${s3.session_token} or ${password}: SHOW CREATE JOB, whose output a user fills in.
std::string PlaceholderSecrets(std::string_view insert_sql, const InsertAnalysis& analysis,
                               const ParamTables& change_stream_params);

}  // namespace millrace::job
