#include "job/job_properties.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/json.h"
#include "common/strings.h"
#include "job/offset.h"

namespace millrace::job {
namespace {

std::string SupportedKeys() {
  std::string out;
  for (const ParamSpec& spec : JobPropertySpecs()) {
    if (!out.empty()) out += ", ";
    out += spec.name;
  }
  return out;
}

Status BadValue(std::string_view key, std::string_view value, std::string_view accepted) {
  return Status::InvalidArgument("property \"" + std::string(key) + "\" must be " +
                                 std::string(accepted) + ", got '" + std::string(value) + "'");
}

bool ParseInt(std::string_view text, int64_t* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

// "10", "10s", "5m", "1h" -> seconds.
bool ParseSeconds(std::string_view text, int64_t* out) {
  int64_t unit = 1;
  if (!text.empty()) {
    switch (ToLower(text.back())) {
      case 's':
        unit = 1;
        text.remove_suffix(1);
        break;
      case 'm':
        unit = 60;
        text.remove_suffix(1);
        break;
      case 'h':
        unit = 3600;
        text.remove_suffix(1);
        break;
      default:
        break;
    }
  }
  int64_t n = 0;
  if (!ParseInt(text, &n) || n < 1 || n > 86400 * 365) return false;
  *out = n * unit;
  return true;
}

// "10G", "512MB", "1048576" -> bytes.
bool ParseBytes(std::string_view text, int64_t* out) {
  std::string lower = ToLower(text);
  if (lower.size() > 1 && lower.back() == 'b' &&
      !std::isdigit(static_cast<unsigned char>(lower[lower.size() - 2]))) {
    lower.pop_back();
  }
  int64_t unit = 1;
  if (!lower.empty()) {
    switch (lower.back()) {
      case 'k':
        unit = 1LL << 10;
        lower.pop_back();
        break;
      case 'm':
        unit = 1LL << 20;
        lower.pop_back();
        break;
      case 'g':
        unit = 1LL << 30;
        lower.pop_back();
        break;
      case 't':
        unit = 1LL << 40;
        lower.pop_back();
        break;
      default:
        break;
    }
  }
  int64_t n = 0;
  if (!ParseInt(lower, &n) || n < 1 || n > (INT64_MAX / unit)) return false;
  *out = n * unit;
  return true;
}

}  // namespace

const std::vector<ParamSpec>& JobPropertySpecs() {
  static const std::vector<ParamSpec> kSpecs = {
      {.name = "max_interval",
       .default_value = "10",
       .description = "seconds between polls when no new file was found",
       .accepted = "seconds (\"10\", \"10s\", \"5m\")"},
      {.name = "s3.max_batch_files",
       .default_value = "256",
       .description =
           "most files in one task (a change stream: most changes, whole source transactions)",
       .accepted = "an integer from 1 to 100000"},
      {.name = "s3.max_batch_bytes",
       .default_value = "10G",
       .description = "most bytes in one task (the file that crosses it is included)",
       .accepted = "a size from 100M to 10G (\"104857600\", \"512M\", \"10G\")"},
      {.name = "offset",
       .default_value = "",
       .description = "start after this key; also settable by ALTER",
       .accepted = "{\"fileName\":\"key\"}"},
      {.name = "s3.ingestion_mode",
       .default_value = "STREAMING",
       .description = "ONCE: load what matches now, then the job is FINISHED",
       .accepted = "STREAMING or ONCE"},
      {.name = "late_files",
       .default_value = "load",
       .description =
           "load: files that appear below the offset are still loaded, exactly once; ignore: they "
           "are skipped and counted",
       .accepted = "load or ignore"},
      {.name = "reconcile_interval",
       .default_value = "300",
       .description = "seconds between reconciliation listings that find late files",
       .accepted = "seconds"},
      {.name = "on_error",
       .default_value = "pause",
       .description = "after a task exhausts its retries: pause the job, or quarantine the failing "
                      "file and go "
                      "on",
       .accepted = "pause or skip_file"},
      {.name = "session.insert_max_filter_ratio",
       .default_value = "0",
       .description = "share of rows that may be filtered before the task fails",
       .accepted = "a number from 0 to 1"},
      {.name = "session.enable_insert_strict",
       .default_value = "true",
       .description =
           "strict: a row with a value that cannot convert is filtered; not strict: the value "
           "becomes NULL",
       .accepted = "true or false"},
      {.name = "session.insert_timeout",
       .default_value = "14400",
       .description = "Doris's bound on one load statement: checked, not yet enforced (a task's "
                      "size is bounded "
                      "by s3.max_batch_files and s3.max_batch_bytes)",
       .accepted = "seconds, a positive integer"},
      {.name = "session.query_timeout",
       .default_value = "900",
       .description =
           "Doris's bound on one query: checked, not yet enforced, as session.insert_timeout",
       .accepted = "seconds, a positive integer"},
      {.name = "cdc.wal_retention_warning",
       .default_value = "1G",
       .description =
           "change streams: JobRuntimeMsg warns when the replication slot of a PAUSED job holds "
           "more WAL than this on the source",
       .accepted = "a size (\"1048576\", \"512M\", \"10G\")"},
  };
  return kSpecs;
}

const std::vector<IgnoredSessionVariable>& IgnoredSessionVariables() {
  // Real Doris session variables a Doris script may set on a job, which mean nothing here.
  static const std::vector<IgnoredSessionVariable> kIgnored = {
      {"exec_mem_limit", "memory is bounded server-wide (--memory-limit)"},
      {"max_execution_time", "a query bound, as session.query_timeout"},
      {"time_zone", "files' timestamps are read as written; DuckDB's TIMESTAMP has no zone"},
      {"sql_mode", "the job's INSERT is checked when it is created"},
      {"workload_group", "one server, no workload groups"},
      {"enable_profile", "Doris's query profile; see the job's metrics"},
      {"profile_level", "Doris's query profile; see the job's metrics"},
      {"batch_size", "a Doris execution tuning"},
      {"parallel_pipeline_task_num", "DuckDB's threads are set server-wide (--threads)"},
      {"parallel_fragment_exec_instance_num", "DuckDB's threads are set server-wide (--threads)"},
      {"send_batch_parallelism", "a Doris execution tuning"},
      {"runtime_filter_mode", "a Doris planner tuning"},
      {"enable_nereids_planner", "a Doris planner choice"},
      {"enable_nereids_dml", "a Doris planner choice"},
      {"enable_fallback_to_original_planner", "a Doris planner choice"},
      {"enable_insert_value_auto_cast", "the INSERT casts as DuckDB does"},
      {"insert_visible_timeout_ms", "a task's rows are visible when its commit returns"},
      {"enable_unique_key_partial_update", "a UNIQUE KEY load replaces whole rows"},
      {"enable_memtable_on_sink_node", "a Doris storage tuning"},
      {"enable_single_replica_insert", "one server, one replica"},
      {"group_commit", "each task commits its batch in one transaction"},
      {"skip_delete_sign", "a query option of Doris's"},
      {"skip_delete_bitmap", "a query option of Doris's"},
      {"skip_storage_engine_merge", "a query option of Doris's"},
      {"read_csv_empty_line_as_null", "a blank CSV line holds no record here"},
      {"enable_strict_consistency_dml", "a Doris storage tuning"},
      {"dml_plan_retry_times", "a Doris planner tuning"},
  };
  return kIgnored;
}

Result<JobProperties> JobProperties::Parse(const PropertyMap& values) {
  JobProperties p;
  for (const auto& entry : values) {
    const std::string& key = entry.first;
    const std::string& value = entry.second;
    const auto& specs = JobPropertySpecs();
    auto spec =
        std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == key; });
    // Doris passes keys starting with "__" through (its own internal ones).
    if (spec == specs.end() && key.starts_with("__")) continue;
    // session.<variable>: a real Doris session variable, in any case, as Doris checks them.
    if (spec == specs.end() && key.starts_with(kSessionPrefix)) {
      const std::string variable = ToLower(std::string_view(key).substr(kSessionPrefix.size()));
      spec = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) {
        return s.name == std::string(kSessionPrefix) + variable;
      });
      const auto& ignored = IgnoredSessionVariables();
      if (spec == specs.end() &&
          std::none_of(ignored.begin(), ignored.end(),
                       [&](const IgnoredSessionVariable& v) { return v.name == variable; })) {
        return Status::InvalidArgument(
            "Invalid session variable, [" + variable +
            "] (not a Doris session variable Millrace knows; docs/jobs.md lists them)");
      }
      if (spec == specs.end()) continue;  // accepted, and means nothing here
    }
    if (spec == specs.end()) {
      return Status::InvalidArgument("Invalid properties: [" + key + "]. Supported keys are " +
                                     SupportedKeys() + " (unknown job property \"" + key + "\")");
    }
    bool ok = true;
    if (key == "max_interval") {
      ok = ParseSeconds(value, &p.max_interval_seconds);
    } else if (key == "s3.max_batch_files") {
      ok = ParseInt(value, &p.max_batch_files) && p.max_batch_files >= 1 &&
           p.max_batch_files <= 100000;
    } else if (key == "s3.max_batch_bytes") {
      // Doris's bounds (StreamingJobProperties).
      ok = ParseBytes(value, &p.max_batch_bytes) && p.max_batch_bytes >= 100LL << 20 &&
           p.max_batch_bytes <= 10LL << 30;
    } else if (key == "cdc.wal_retention_warning") {
      ok = ParseBytes(value, &p.wal_retention_warning_bytes);
    } else if (key == "offset") {
      auto offset = ParseOffset(value);
      if (!offset.ok()) return offset.status();
      p.offset = *offset;
      p.has_offset = true;
    } else if (key == "s3.ingestion_mode") {
      const std::string mode = ToLower(value);
      ok = mode == "streaming" || mode == "once";
      p.ingestion_mode = mode == "once" ? IngestionMode::kOnce : IngestionMode::kStreaming;
    } else if (key == "late_files") {
      const std::string mode = ToLower(value);
      ok = mode == "load" || mode == "ignore";
      p.late_files = mode == "ignore" ? LateFiles::kIgnore : LateFiles::kLoad;
    } else if (key == "reconcile_interval") {
      ok = ParseSeconds(value, &p.reconcile_interval_seconds);
    } else if (key == "on_error") {
      const std::string mode = ToLower(value);
      ok = mode == "pause" || mode == "skip_file";
      p.on_error = mode == "skip_file" ? OnError::kSkipFile : OnError::kPause;
    } else if (spec->name == "session.insert_timeout" || spec->name == "session.query_timeout") {
      int64_t seconds = 0;
      ok = ParseInt(value, &seconds) && seconds >= 1;
    } else if (spec->name == "session.insert_max_filter_ratio") {
      char* end = nullptr;
      const std::string text(value);
      p.max_filter_ratio = std::strtod(text.c_str(), &end);
      ok = !text.empty() && end == text.c_str() + text.size() && p.max_filter_ratio >= 0 &&
           p.max_filter_ratio <= 1;
    } else if (spec->name == "session.enable_insert_strict") {
      const std::optional<bool> strict = ParseBool(value);
      ok = strict.has_value();
      p.strict = strict.value_or(p.strict);
    }
    if (!ok) return BadValue(key, value, spec->accepted);
  }
  p.given = values;
  return p;
}

Result<JobProperties> JobProperties::Merge(const PropertyMap& changes) const {
  PropertyMap merged = given;
  for (const auto& [key, value] : changes)
    merged[key] = value;
  return Parse(merged);
}

std::string JobProperties::ToJson() const {
  // nlohmann's object is a std::map too: the keys stay in the order of `given`.
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : given)
    out[key] = value;
  return RenderJson(out);
}

Result<std::string> ParseOffset(std::string_view value) {
  // Doris's own words first (StreamingJobProperties): "Invalid format for offset" for an empty
  // value or JSON without fileName, "Failed to initialize offset" for JSON it cannot read.
  const std::string shape =
      "property \"offset\" must be {\"fileName\":\"key\"}, got '" + std::string(value) + "'";
  const std::string invalid = "Invalid format for offset: " + shape;
  const std::string_view v = Trim(value);
  if (v.empty()) return Status::InvalidArgument(invalid + ": it is empty");
  std::string key(v);
  if (v.front() == '{') {
    auto doc = ParseJson(v);
    if (!doc.ok()) return doc.status().WithContext("Failed to initialize offset: " + shape);
    // Other members are ignored, as Doris does and as earlier versions did (an offset stored in
    // the catalog by them must still load).
    const auto name = doc->find(kFileNamePart);
    if (name == doc->end()) return Status::InvalidArgument(invalid + ": no \"fileName\" member");
    if (!name->is_string()) {
      return Status::InvalidArgument(invalid + ": \"fileName\" is of type " +
                                     std::string(name->type_name()) + ", not string");
    }
    key = name->get<std::string>();
  }
  // A full s3://bucket/key names the key.
  if (key.rfind("s3://", 0) == 0) {
    const size_t slash = key.find('/', 5);
    key = slash == std::string::npos ? "" : key.substr(slash + 1);
  }
  return key;
}

std::string OffsetJson(std::string_view key) {
  return Offset().With(kFileNamePart, std::string(key)).ToJson();
}

std::string IgnoredSessionVariablesMarkdown() {
  std::string out = "| session variable | why it is ignored |\n| --- | --- |\n";
  for (const IgnoredSessionVariable& variable : IgnoredSessionVariables()) {
    out +=
        "| `session." + std::string(variable.name) + "` | " + std::string(variable.reason) + " |\n";
  }
  return out;
}

std::string JobPropertiesMarkdown() {
  std::string out = "| property | default | accepted | meaning |\n| --- | --- | --- | --- |\n";
  for (const ParamSpec& spec : JobPropertySpecs()) {
    out += "| `" + std::string(spec.name) + "` | " +
           (spec.default_value.empty() ? "" : "`" + std::string(spec.default_value) + "`") + " | " +
           std::string(spec.accepted) + " | " + std::string(spec.description) + " |\n";
  }
  return out;
}

}  // namespace millrace::job
