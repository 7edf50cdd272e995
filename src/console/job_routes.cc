#include "console/job_routes.h"

#include "job/job_api.h"

namespace millrace::console {
namespace {

using http::HttpRequest;
using http::HttpResponse;

constexpr std::string_view kJobsPrefix = "/api/jobs/";

HttpResponse Answer(const Result<std::string>& body) {
  if (body.ok()) return HttpResponse{200, "application/json", *body + "\n", {}};
  const StatusCode code = body.status().code();
  return http::JsonError(code == StatusCode::kNotFound          ? 404
                         : code == StatusCode::kInvalidArgument ? 400
                                                                : 500,
                         body.status().message());
}

// The {name} of /api/jobs/{name}[/suffix].
std::string JobName(const HttpRequest& request, std::string_view suffix) {
  std::string_view path = request.path;
  path.remove_prefix(kJobsPrefix.size());
  path.remove_suffix(suffix.size());
  return std::string(path);
}

}  // namespace

void RegisterJobRoutes(http::HttpServer* server, job::JobService* jobs) {
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
}

}  // namespace millrace::console
