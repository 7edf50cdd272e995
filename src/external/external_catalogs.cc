#include "external/external_catalogs.h"

#include <algorithm>

#include "common/strings.h"

namespace millrace::external {
namespace {

int64_t Micros(Clock::WallTime t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

}  // namespace

ConnectProbe PgConnectProbe() {
  return [](const pg::ConnectParams& params) -> Status {
    return pg::PgConnection::Connect(params).status();
  };
}

Status ExternalCatalogs::Load() {
  MutexLock write(&write_mu_);
  MR_ASSIGN_OR_RETURN(std::vector<ExternalCatalog> loaded, store_->LoadCatalogs());
  MutexLock lock(&mu_);
  catalogs_ = std::move(loaded);
  return Status::Ok();
}

const ExternalCatalog* ExternalCatalogs::FindLocked(std::string_view name) const {
  for (const ExternalCatalog& c : catalogs_) {
    if (EqualsIgnoreCase(c.name, name)) return &c;
  }
  return nullptr;
}

std::optional<ExternalCatalog> ExternalCatalogs::Find(std::string_view name) const {
  MutexLock lock(&mu_);
  const ExternalCatalog* found = FindLocked(name);
  if (found == nullptr) return std::nullopt;
  return *found;
}

Result<pg::ConnectParams> ExternalCatalogs::ConnectParamsOf(std::string_view name) const {
  const std::optional<ExternalCatalog> catalog = Find(name);
  if (!catalog) return Status::NotFound("catalog " + std::string(name) + " does not exist");
  auto endpoint = ParseCatalog(catalog->properties);
  if (!endpoint.ok()) return endpoint.status().WithContext("catalog " + catalog->name);
  return endpoint->params;
}

void ExternalCatalogs::SetJobsWriting(JobsWriting jobs_writing) {
  MutexLock lock(&mu_);
  jobs_writing_ = std::move(jobs_writing);
}

std::vector<ExternalCatalog> ExternalCatalogs::List() const {
  std::vector<ExternalCatalog> out;
  {
    MutexLock lock(&mu_);
    out = catalogs_;
  }
  std::sort(out.begin(), out.end(),
            [](const ExternalCatalog& a, const ExternalCatalog& b) { return a.name < b.name; });
  return out;
}

Status ExternalCatalogs::Probe(const ExternalCatalog& catalog) const {
  MR_ASSIGN_OR_RETURN(const CatalogEndpoint endpoint, ParseCatalog(catalog.properties));
  if (!endpoint.test_connection) return Status::Ok();
  Status reached = probe_(endpoint.params);
  if (reached.ok()) return reached;
  return reached.WithContext("catalog " + catalog.name +
                             " cannot connect (set \"test_connection\" "
                             "= \"false\" to keep it anyway)");
}

Status ExternalCatalogs::Create(std::string name, std::string comment, CatalogProperties properties,
                                bool if_not_exists) {
  MR_RETURN_IF_ERROR(CheckCatalogName(name));
  MutexLock write(&write_mu_);
  {
    MutexLock lock(&mu_);
    if (FindLocked(name) != nullptr) {
      if (if_not_exists) return Status::Ok();
      return Status::AlreadyExists("catalog " + name + " already exists");
    }
  }
  ExternalCatalog catalog;
  catalog.name = std::move(name);
  catalog.comment = std::move(comment);
  catalog.properties = std::move(properties);
  Status parsed = ParseCatalog(catalog.properties).status();
  if (!parsed.ok()) return parsed.WithContext("catalog " + catalog.name);
  MR_RETURN_IF_ERROR(Probe(catalog));
  catalog.create_time_us = Micros(clock_->WallNow());
  catalog.update_time_us = catalog.create_time_us;
  MR_RETURN_IF_ERROR(store_->InsertCatalog(catalog));
  MutexLock lock(&mu_);
  catalogs_.push_back(std::move(catalog));
  return Status::Ok();
}

Status ExternalCatalogs::Replace(std::string_view name, ExternalCatalog updated) {
  updated.update_time_us = Micros(clock_->WallNow());
  MR_RETURN_IF_ERROR(store_->UpdateCatalog(name, updated));
  MutexLock lock(&mu_);
  for (ExternalCatalog& c : catalogs_) {
    if (EqualsIgnoreCase(c.name, name)) c = std::move(updated);
  }
  return Status::Ok();
}

Status ExternalCatalogs::SetProperties(std::string_view name, const CatalogProperties& changes) {
  MutexLock write(&write_mu_);
  std::optional<ExternalCatalog> found = Find(name);
  if (!found) return Status::NotFound("catalog " + std::string(name) + " does not exist");
  ExternalCatalog updated = *found;
  for (const auto& [key, value] : changes) {
    if (key == "type" && ToLower(value) != found->type()) {
      return Status::InvalidArgument("catalog " + found->name + ": the type of a catalog cannot " +
                                     "change (it is " + found->type() +
                                     "); drop it and create it again");
    }
    updated.properties[key] = value;
  }
  Status parsed = ParseCatalog(updated.properties).status();
  if (!parsed.ok()) return parsed.WithContext("catalog " + found->name);
  MR_RETURN_IF_ERROR(Probe(updated));
  return Replace(name, std::move(updated));
}

Status ExternalCatalogs::SetComment(std::string_view name, std::string comment) {
  MutexLock write(&write_mu_);
  std::optional<ExternalCatalog> found = Find(name);
  if (!found) return Status::NotFound("catalog " + std::string(name) + " does not exist");
  found->comment = std::move(comment);
  return Replace(name, std::move(*found));
}

Status ExternalCatalogs::Drop(std::string_view name, bool if_exists) {
  MutexLock write(&write_mu_);
  const std::optional<ExternalCatalog> found = Find(name);
  if (!found) {
    if (if_exists) return Status::Ok();
    return Status::NotFound("catalog " + std::string(name) + " does not exist");
  }
  JobsWriting jobs_writing;
  {
    MutexLock lock(&mu_);
    jobs_writing = jobs_writing_;
  }
  if (jobs_writing) {
    const std::vector<std::string> jobs = jobs_writing(found->name);
    if (!jobs.empty()) {
      std::string names;
      for (const std::string& job : jobs)
        names += (names.empty() ? "" : ", ") + job;
      return Status::FailedPrecondition("catalog " + found->name + " is the target of job(s) " +
                                        names + "; drop them first");
    }
  }
  MR_RETURN_IF_ERROR(store_->DeleteCatalog(name));
  MutexLock lock(&mu_);
  std::erase_if(catalogs_,
                [&](const ExternalCatalog& c) { return EqualsIgnoreCase(c.name, name); });
  return Status::Ok();
}

}  // namespace millrace::external
