#include "console/job_routes.h"

#include <nlohmann/json.hpp>

#include "common/json.h"
#include "common/strings.h"
#include "console/responses.h"
#include "job/job_api.h"
#include "sql/statement_support.h"

namespace millrace::console {
namespace {

using http::HttpRequest;
using http::HttpResponse;

constexpr std::string_view kJobsPrefix = "/api/jobs/";

// The {name} of /api/jobs/{name}[/suffix].
std::string JobName(const HttpRequest& request, std::string_view suffix) {
  std::string_view path = request.path;
  path.remove_prefix(kJobsPrefix.size());
  path.remove_suffix(suffix.size());
  return std::string(path);
}

// The action of a POST: the job statement, and its text as SQL would have it (for the audit
// log; the statement itself is never parsed from it).
struct Action {
  std::string job;  // the job's name
  job::JobStatement statement;
  std::string audit_action;  // the audit log's action, as access_guard names it
  std::string text;
};

Result<Action> PauseOrResume(const std::string& name, bool pause) {
  const char* verb = pause ? "PAUSE" : "RESUME";
  return Action{
      name,
      job::ControlJobStatement{pause ? job::JobControl::kPause : job::JobControl::kResume, name},
      std::string(verb) + " JOB", std::string(verb) + " JOB WHERE jobname = " + sql::Quote(name)};
}

// {"files": ["key", ...]} or {"all": true}.
Result<Action> Retry(const std::string& name, const std::string& body) {
  constexpr std::string_view kShape =
      "the retry takes {\"files\": [\"key\", ...]} or {\"all\": true}";
  Result<nlohmann::json> doc = ParseJson(body);
  if (!doc.ok() || !doc->is_object()) return Status::InvalidArgument(std::string(kShape));
  job::AlterJobStatement alter;
  alter.name = name;
  std::string text = "ALTER JOB " + Backquoted(name) + " RETRY ";
  if (doc->contains("all")) {
    if (!(*doc)["all"].is_boolean() || !(*doc)["all"].get<bool>() || doc->contains("files")) {
      return Status::InvalidArgument(std::string(kShape));
    }
    alter.retry_all = true;
    text += "ALL";
  } else {
    const nlohmann::json& files = (*doc)["files"];
    if (!files.is_array() || files.empty()) return Status::InvalidArgument(std::string(kShape));
    text += "FILE ";
    for (const nlohmann::json& key : files) {
      if (!key.is_string()) return Status::InvalidArgument(std::string(kShape));
      if (!alter.retry_files.empty()) text += ", ";
      alter.retry_files.push_back(key.get<std::string>());
      text += sql::Quote(alter.retry_files.back());
    }
  }
  return Action{name, std::move(alter), "ALTER JOB", std::move(text)};
}

HttpResponse Run(job::JobService* jobs, access::AuditLog* audit, const HttpRequest& request,
                 const Result<Action>& action) {
  if (!action.ok()) return Answer(action.status());
  const sql::SessionInfo who{0, request.user, request.remote_address, request.secure};
  // A job the user may not see answers as a missing one (404), never naming its table.
  const Status visible = job::ApiJobVisible(jobs->ApiContext(), request.user, action->job);
  Result<std::string> message =
      visible.ok() ? jobs->Execute(action->statement, "", who) : Result<std::string>(visible);
  if (audit != nullptr) {
    audit->Record(access::AuditEvent{0, request.user, request.remote_address, "JOB",
                                     action->audit_action, action->text,
                                     message.ok() ? "" : message.status().message()});
  }
  if (!message.ok()) return Answer(message.status());
  return Answer(RenderJson(nlohmann::json{{"message", *message}}));
}

}  // namespace

void RegisterJobRoutes(http::HttpServer* server, job::JobService* jobs, access::AuditLog* audit) {
  // Route paths are regular expressions matched against the whole (decoded) path.
  server->Get("/api/jobs", [jobs](const HttpRequest& request) {
    Result<job::ApiPage> page = job::ParseApiPage(request.Param("limit"), request.Param("after"));
    if (!page.ok()) return Answer(page.status());
    return Answer(job::ApiJobs(jobs->ApiContext(), request.user, *page));
  });
  server->Get("/api/jobs/[^/]+", [jobs](const HttpRequest& request) {
    return Answer(job::ApiJob(jobs->ApiContext(), request.user, JobName(request, "")));
  });
  server->Get("/api/jobs/[^/]+/tasks", [jobs](const HttpRequest& request) {
    return Answer(job::ApiTasks(jobs->ApiContext(), request.user, JobName(request, "/tasks")));
  });
  server->Get("/api/jobs/[^/]+/filtered_rows", [jobs](const HttpRequest& request) {
    Result<job::ApiPage> page = job::ParseApiPage(request.Param("limit"), request.Param("after"));
    if (!page.ok()) return Answer(page.status());
    return Answer(job::ApiFilteredRows(jobs->ApiContext(), request.user,
                                       JobName(request, "/filtered_rows"), *page));
  });
  server->Get("/api/jobs/[^/]+/files", [jobs](const HttpRequest& request) {
    Result<job::ApiPage> page = job::ParseApiPage(request.Param("limit"), request.Param("after"));
    if (!page.ok()) return Answer(page.status());
    return Answer(job::ApiFiles(jobs->ApiContext(), request.user, JobName(request, "/files"), *page,
                                request.Param("state"), request.Param("search")));
  });
  server->Post("/api/jobs/[^/]+/pause", [jobs, audit](const HttpRequest& request) {
    return Run(jobs, audit, request, PauseOrResume(JobName(request, "/pause"), true));
  });
  server->Post("/api/jobs/[^/]+/resume", [jobs, audit](const HttpRequest& request) {
    return Run(jobs, audit, request, PauseOrResume(JobName(request, "/resume"), false));
  });
  server->Post("/api/jobs/[^/]+/retry", [jobs, audit](const HttpRequest& request) {
    return Run(jobs, audit, request, Retry(JobName(request, "/retry"), request.body));
  });
}

}  // namespace millrace::console
