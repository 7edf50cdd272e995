// The job service on the SQL front end: CREATE/PAUSE/RESUME/DROP/ALTER JOB statements are routed
// to the JobService, in the client's current database; SHOW CREATE JOB, VERIFY JOB and EXPLAIN
// CREATE JOB answer rows.
#pragma once

#include "job/job_service.h"
#include "sql/session.h"

namespace millrace::job {

// Routes the job statements of every session of `router` to `service`, which must outlive the
// router's sessions.
void RegisterJobStatements(sql::Router* router, JobService* service);

}  // namespace millrace::job
