#include "access/audit_log.h"

#include "common/logging.h"
#include "sql/mysql_errors.h"

namespace millrace::access {
namespace {

using engine::ColumnDef;
using engine::OutputChunk;
using engine::TableFunctionArgs;
using engine::TypeId;

void SetText(OutputChunk& out, size_t col, size_t row, const std::string& text) {
  if (text.empty()) {
    out.SetNull(col, row);
  } else {
    out.SetString(col, row, text);
  }
}

class AuditLogFunction final : public engine::TableFunction {
 public:
  AuditLogFunction(AuditLog* log, const AccessControl* access,
                   std::function<std::optional<std::string>(uint64_t)> connection_user)
      : log_(log), access_(access), connection_user_(std::move(connection_user)) {}

  std::string name() const override { return "audit_log"; }
  std::vector<std::string> parameter_names() const override { return {}; }

  Result<std::vector<ColumnDef>> Bind(const TableFunctionArgs& args) override {
    const std::optional<std::string> user = connection_user_(args.connection_id());
    if (user && !access_->IsAdmin(*user)) {
      return sql::SpecificAccessDeniedError(PrivilegeName(Privilege::kAdmin));
    }
    return std::vector<ColumnDef>{{"Time", TypeId::kTimestamp}, {"User", TypeId::kVarchar},
                                  {"Host", TypeId::kVarchar},   {"Kind", TypeId::kVarchar},
                                  {"Action", TypeId::kVarchar}, {"Statement", TypeId::kVarchar},
                                  {"Outcome", TypeId::kVarchar}};
  }

  Result<std::unique_ptr<engine::TableScan>> Scan(const TableFunctionArgs&) override {
    MR_ASSIGN_OR_RETURN(std::vector<AuditEvent> events, log_->Newest());
    auto write = [](OutputChunk& out, size_t r, const AuditEvent& e) {
      size_t c = 0;
      out.SetTimestamp(c++, r, e.time_us);
      out.SetString(c++, r, e.user);
      out.SetString(c++, r, e.host);
      out.SetString(c++, r, e.kind);
      out.SetString(c++, r, e.action);
      SetText(out, c++, r, e.statement);
      out.SetString(c++, r, e.error.empty() ? "OK" : e.error);
    };
    return std::unique_ptr<engine::TableScan>(
        std::make_unique<engine::VectorScan<AuditEvent, decltype(write)>>(std::move(events),
                                                                          write));
  }

 private:
  AuditLog* log_;
  const AccessControl* access_;
  std::function<std::optional<std::string>(uint64_t)> connection_user_;
};

}  // namespace

void AuditLog::Record(AuditEvent event) {
  event.time_us = MicrosSinceEpoch(clock_->WallNow());
  if (Status s = store_->AppendAudit(event, keep_); !s.ok()) {
    ++failed_appends_;
    MR_LOG(kError) << "audit log: cannot record " << event.kind << " " << event.action << " by '"
                   << event.user << "'@'" << event.host << "': " << s.ToString();
  }
}

std::shared_ptr<engine::TableFunction> MakeAuditLogFunction(
    AuditLog* log, const AccessControl* access,
    std::function<std::optional<std::string>(uint64_t)> connection_user) {
  return std::make_shared<AuditLogFunction>(log, access, std::move(connection_user));
}

}  // namespace millrace::access
