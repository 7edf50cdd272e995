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

const std::vector<ParamSpec>& JobPropertySpecs() {
  static constexpr int64_t kYear = 86400 * 365;
  static const std::vector<ParamSpec> kSpecs = {
      {.name = "max_interval",
       .type = ParamType::kSeconds,
       .default_value = "10",
       .description = "seconds between polls when no new file was found",
       .min = 1,
       .max = kYear},
      {.name = "s3.max_batch_files",
       .type = ParamType::kInt,
       .default_value = "256",
       .description =
           "most files in one task (a change stream: most changes, whole source transactions, "
           "and only when given: docs/cdc.md)",
       .min = 1,
       .max = 100000},
      // Doris's bounds (StreamingJobProperties).
      {.name = "s3.max_batch_bytes",
       .type = ParamType::kBytes,
       .default_value = "10G",
       .description = "most bytes in one task (the file that crosses it is included)",
       .min = int64_t{100} << 20,
       .max = int64_t{10} << 30},
      {.name = "max_concurrent_tasks",
       .type = ParamType::kInt,
       .default_value = "1",
       .description =
           "tasks of a file job that load and commit at once, each a batch of its own; only "
           "for file jobs into DUPLICATE KEY tables of the embedded catalog (the order of "
           "commits decides what UNIQUE and AGGREGATE tables and change streams hold); an ALTER "
           "takes effect at the next batch",
       .min = 1,
       .max = 16},
      {.name = "offset",
       .default_value = "",
       .description = "start after this key; also settable by ALTER",
       .accepted = "{\"fileName\":\"key\"}"},
      {.name = "s3.ingestion_mode",
       .type = ParamType::kChoice,
       .default_value = "STREAMING",
       .description =
           "ONCE: load what matches now, then the job is FINISHED; ORDERED_LIST (Doris's "
           "name) is STREAMING",
       .choices = {"streaming", "once", "ordered_list"},
       .accepted = "STREAMING, ORDERED_LIST or ONCE (NOTIFICATION: see POST /api/s3-events)"},
      {.name = "s3.event_secret",
       .default_value = "",
       .description = "what an S3 event notification for this job carries (POST /api/s3-events); "
                      "an S3 job without one gets one at CREATE JOB, shown by SHOW CREATE JOB",
       .accepted = "16 to 128 characters"},
      {.name = "late_files",
       .type = ParamType::kChoice,
       .default_value = "load",
       .description =
           "load: files that appear below the offset are still loaded, exactly once; ignore: they "
           "are skipped and counted",
       .choices = {"load", "ignore"}},
      {.name = "reconcile_interval",
       .type = ParamType::kSeconds,
       .default_value = "300",
       .description = "seconds between reconciliation listings that find late files",
       .min = 1,
       .max = kYear},
      {.name = "on_error",
       .type = ParamType::kChoice,
       .default_value = "pause",
       .description = "after a task exhausts its retries: pause the job, or quarantine the failing "
                      "file and go on",
       .choices = {"pause", "skip_file"}},
      {.name = "session.insert_max_filter_ratio",
       .type = ParamType::kNumber,
       .default_value = "0",
       .description = "share of rows that may be filtered before the task fails",
       .min = 0,
       .max = 1},
      {.name = "session.enable_insert_strict",
       .type = ParamType::kBool,
       .default_value = "true",
       .description =
           "strict: a row with a value that cannot convert is filtered; not strict: the value "
           "becomes NULL"},
      {.name = "session.insert_timeout",
       .type = ParamType::kInt,
       .default_value = "14400",
       .description = "Doris's bound on one load statement, in seconds: checked, not yet "
                      "enforced (a task's size is bounded by s3.max_batch_files and "
                      "s3.max_batch_bytes)",
       .min = 1},
      {.name = "session.query_timeout",
       .type = ParamType::kInt,
       .default_value = "900",
       .description = "Doris's bound on one query, in seconds: checked, not yet enforced, as "
                      "session.insert_timeout",
       .min = 1},
      {.name = "cdc.wal_retention_warning",
       .type = ParamType::kBytes,
       .default_value = "1G",
       .description =
           "change streams: JobRuntimeMsg warns when the replication slot of a PAUSED job holds "
           "more WAL than this on the source",
       .min = 1},
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
                                     ParamNames(JobPropertySpecs()) + " (unknown job property \"" +
                                     key + "\")");
    }
    if (spec->name == "offset") {
      MR_ASSIGN_OR_RETURN(p.offset, ParseOffset(value));
      p.has_offset = true;
      continue;
    }
    if (spec->name == "s3.ingestion_mode" && EqualsIgnoreCase(value, "notification")) {
      return Status::NotSupported(
          "s3.ingestion_mode = NOTIFICATION (events from SQS) is not available here: Millrace "
          "takes the S3 event notifications Ceph RGW and MinIO push to POST /api/s3-events, and "
          "lists as ORDERED_LIST does (docs/jobs.md)");
    }
    if (spec->name == "s3.event_secret") {
      if (value.size() < 16 || value.size() > 128) {
        return Status::InvalidArgument("property s3.event_secret must have 16 to 128 characters");
      }
      p.event_secret = value;
      continue;
    }
    Result<ParamValue> parsed = ParseParamValue(*spec, value, key);
    if (!parsed.ok()) return Status::InvalidArgument("property " + parsed.status().message());
    const ParamValue& v = *parsed;
    if (spec->name == "max_interval") p.max_interval_seconds = v.integer;
    if (spec->name == "s3.max_batch_files") p.max_batch_files = v.integer;
    if (spec->name == "s3.max_batch_bytes") p.max_batch_bytes = v.integer;
    if (spec->name == "max_concurrent_tasks") p.max_concurrent_tasks = v.integer;
    if (spec->name == "cdc.wal_retention_warning") p.wal_retention_warning_bytes = v.integer;
    if (spec->name == "reconcile_interval") p.reconcile_interval_seconds = v.integer;
    if (spec->name == "s3.ingestion_mode") {
      p.ingestion_mode = v.text == "once" ? IngestionMode::kOnce : IngestionMode::kStreaming;
    }
    if (spec->name == "late_files") {
      p.late_files = v.text == "ignore" ? LateFiles::kIgnore : LateFiles::kLoad;
    }
    if (spec->name == "on_error") {
      p.on_error = v.text == "skip_file" ? OnError::kSkipFile : OnError::kPause;
    }
    if (spec->name == "session.insert_max_filter_ratio") p.max_filter_ratio = v.number;
    if (spec->name == "session.enable_insert_strict") p.strict = v.boolean;
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
  for (const auto& [key, value] : given) {
    // A secret: SHOW CREATE JOB shows it to those who may manage the job.
    if (key != "s3.event_secret") out[key] = value;
  }
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
  return ParamsMarkdown(JobPropertySpecs(), "property");
}

}  // namespace millrace::job
