// The columns of jobs(type := 'insert') as Doris names and orders them (its JobsTvf), which both
// the job service's tests and the Doris script tests hold Millrace to.
#pragma once

#include <string>
#include <vector>

namespace millrace::job {

inline const std::vector<std::string>& DorisJobsColumns() {
  static const std::vector<std::string> kColumns = {"Id",
                                                    "Name",
                                                    "Definer",
                                                    "ExecuteType",
                                                    "RecurringStrategy",
                                                    "Status",
                                                    "ExecuteSql",
                                                    "CreateTime",
                                                    "SucceedTaskCount",
                                                    "FailedTaskCount",
                                                    "CanceledTaskCount",
                                                    "Comment",
                                                    "Properties",
                                                    "CurrentOffset",
                                                    "EndOffset",
                                                    "LoadStatistic",
                                                    "ErrorMsg",
                                                    "JobRuntimeMsg",
                                                    "Lag",
                                                    "LastTaskSuccessTime"};
  return kColumns;
}

}  // namespace millrace::job
