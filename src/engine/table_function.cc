#include "engine/table_function.h"

#include <duckdb.h>

#include "engine/table_function_adapter.h"

namespace millrace::engine {
namespace {

// What DuckDB keeps between the bind, init and function callbacks.
struct BindData {
  TableFunctionArgs args;
  std::vector<ColumnDef> columns;
};

struct ScanState {
  std::unique_ptr<TableScan> scan;
};

// extra_info owns a shared_ptr so the function lives as long as DuckDB's catalog entry.
struct FunctionHolder {
  std::shared_ptr<TableFunction> function;
};

template <typename T>
void DeleteAs(void* p) {
  std::unique_ptr<T> owned(static_cast<T*>(p));
}

void Bind(duckdb_bind_info info) {
  auto* holder = static_cast<FunctionHolder*>(duckdb_bind_get_extra_info(info));
  std::map<std::string, std::string, std::less<>> values;
  for (const std::string& name : holder->function->parameter_names()) {
    duckdb_value value = duckdb_bind_get_named_parameter(info, name.c_str());
    if (value == nullptr) continue;
    char* text = duckdb_get_varchar(value);
    if (text != nullptr) values[name] = text;
    duckdb_free(text);
    duckdb_destroy_value(&value);
  }
  duckdb_client_context context = nullptr;
  duckdb_table_function_get_client_context(info, &context);
  const uint64_t connection_id = duckdb_client_context_get_connection_id(context);
  duckdb_destroy_client_context(&context);
  auto data =
      std::make_unique<BindData>(BindData{TableFunctionArgs(std::move(values), connection_id), {}});
  auto columns = holder->function->Bind(data->args);
  if (!columns.ok()) {
    duckdb_bind_set_error(info, columns.status().message().c_str());
    return;
  }
  data->columns = std::move(columns).value();
  for (const ColumnDef& column : data->columns) {
    duckdb_logical_type type = duckdb_create_logical_type(static_cast<duckdb_type>(column.type));
    duckdb_bind_add_result_column(info, column.name.c_str(), type);
    duckdb_destroy_logical_type(&type);
  }
  duckdb_bind_set_bind_data(info, data.release(), DeleteAs<BindData>);
}

void Init(duckdb_init_info info) {
  auto* holder = static_cast<FunctionHolder*>(duckdb_init_get_extra_info(info));
  auto* data = static_cast<BindData*>(duckdb_init_get_bind_data(info));
  auto scan = holder->function->Scan(data->args);
  if (!scan.ok()) {
    duckdb_init_set_error(info, scan.status().message().c_str());
    return;
  }
  auto state = std::make_unique<ScanState>(ScanState{std::move(scan).value()});
  duckdb_init_set_init_data(info, state.release(), DeleteAs<ScanState>);
  duckdb_init_set_max_threads(info, 1);
}

void Produce(duckdb_function_info info, duckdb_data_chunk output) {
  auto* state = static_cast<ScanState*>(duckdb_function_get_init_data(info));
  OutputChunk out(output);
  auto rows = state->scan->Fill(out);
  if (!rows.ok()) {
    duckdb_function_set_error(info, rows.status().message().c_str());
    duckdb_data_chunk_set_size(output, 0);
    return;
  }
  duckdb_data_chunk_set_size(output, *rows);
}

duckdb_vector VectorOf(void* chunk, size_t col) {
  return duckdb_data_chunk_get_vector(static_cast<duckdb_data_chunk>(chunk), col);
}

template <typename T>
void Store(void* chunk, size_t col, size_t row, T value) {
  static_cast<T*>(duckdb_vector_get_data(VectorOf(chunk, col)))[row] = value;
}

}  // namespace

std::optional<std::string> TableFunctionArgs::Get(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

size_t OutputChunk::capacity() const {
  return duckdb_vector_size();
}

void OutputChunk::SetNull(size_t col, size_t row) {
  duckdb_vector vec = VectorOf(chunk_, col);
  duckdb_vector_ensure_validity_writable(vec);
  duckdb_validity_set_row_invalid(duckdb_vector_get_validity(vec), row);
}

void OutputChunk::SetBool(size_t col, size_t row, bool value) {
  Store(chunk_, col, row, value);
}

void OutputChunk::SetInt64(size_t col, size_t row, int64_t value) {
  Store(chunk_, col, row, value);
}

void OutputChunk::SetDouble(size_t col, size_t row, double value) {
  Store(chunk_, col, row, value);
}

void OutputChunk::SetString(size_t col, size_t row, std::string_view value) {
  duckdb_vector_assign_string_element_len(VectorOf(chunk_, col), row, value.data(), value.size());
}

void OutputChunk::SetTimestamp(size_t col, size_t row, int64_t epoch_micros) {
  Store(chunk_, col, row, epoch_micros);
}

Status RegisterTableFunctionOn(void* duckdb_conn, std::shared_ptr<TableFunction> function) {
  const std::string name = function->name();
  duckdb_table_function tf = duckdb_create_table_function();
  duckdb_table_function_set_name(tf, name.c_str());
  duckdb_logical_type varchar = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
  for (const std::string& param : function->parameter_names()) {
    duckdb_table_function_add_named_parameter(tf, param.c_str(), varchar);
  }
  duckdb_destroy_logical_type(&varchar);
  auto holder = std::make_unique<FunctionHolder>(FunctionHolder{std::move(function)});
  duckdb_table_function_set_extra_info(tf, holder.release(), DeleteAs<FunctionHolder>);
  duckdb_table_function_set_bind(tf, Bind);
  duckdb_table_function_set_init(tf, Init);
  duckdb_table_function_set_function(tf, Produce);
  const duckdb_state state =
      duckdb_register_table_function(static_cast<duckdb_connection>(duckdb_conn), tf);
  duckdb_destroy_table_function(&tf);
  if (state == DuckDBError) {
    return Status::AlreadyExists("cannot register table function '" + name +
                                 "': the name is taken");
  }
  return Status::Ok();
}

}  // namespace millrace::engine
