-- The v1 fixture: a data directory as the first release of Millrace (job catalog version 1)
-- left it, for tests/job/catalog_migration_test.cc.
--
-- NEVER CHANGE THIS FILE. It stands for databases that already exist in the field: the
-- catalog DDL below is the first release's (JobCatalog Init() at bf8dea2, verbatim), and the
-- rows are what that release wrote (column order of its InsertJob / InsertTask /
-- InsertLedger). A later catalog version gets a fixture of its own; this one stays.
--
-- What version 1 looks like:
-- - no __millrace.catalog_version table (a catalog with jobs and no version is version 1);
-- - jobs.current_offset / jobs.end_offset hold a bare file key ('/in/b.csv'), not JSON;
-- - jobs has a `definition` column (a copy of masked_sql).
--
-- Placeholders the test replaces before running the script:
--   @IN@      the watched directory (absolute, no trailing '/')
--   @ETAG_A@  the ETag of @IN@/a.csv, @ETAG_B@ that of @IN@/b.csv: the files are the very ones
--             the first release listed and loaded (local ETag: "<size>-<mtime ns>-<inode>")
--
-- The files (written by the test, same content as when they were loaded):
--   a.csv  "1,a\n2,a\n"        8 bytes, 2 rows
--   b.csv  "3,b\n4,b\n5,b\n"  12 bytes, 3 rows
--
-- The jobs, all reading @IN@/*.csv:
--   1 people      RUNNING, into t. Loaded a.csv (task 1) then b.csv (task 2); offset b.csv.
--   2 archive     PAUSED by the user (MANUAL_PAUSE_ERR), into u. Loaded a.csv and b.csv in
--                 task 1, then paused (epoch 1); offset b.csv.
--   3 latecomers  RUNNING with late_files = ignore, into w. Loaded b.csv (task 1); a.csv
--                 appeared later, below the offset, and was skipped (ledger: SKIPPED).

-- The version-1 catalog DDL, verbatim.
CREATE SCHEMA IF NOT EXISTS __millrace;
CREATE TABLE IF NOT EXISTS __millrace.jobs (
  id BIGINT PRIMARY KEY, name VARCHAR NOT NULL, definer VARCHAR, definition VARCHAR,
  masked_sql VARCHAR, comment VARCHAR, state VARCHAR, create_time_us BIGINT,
  current_offset VARCHAR, end_offset VARCHAR, succeed_tasks BIGINT, failed_tasks BIGINT,
  canceled_tasks BIGINT, scanned_rows BIGINT, load_bytes BIGINT, file_number BIGINT,
  file_size BIGINT, filtered_rows BIGINT, error_code VARCHAR, error_msg VARCHAR,
  runtime_msg VARCHAR, last_success_time_us BIGINT, epoch BIGINT, auto_resume_count BIGINT,
  manual_pause BOOLEAN, next_task_id BIGINT, insert_sql VARCHAR, database_name VARCHAR,
  reconcile_floor VARCHAR);
CREATE TABLE IF NOT EXISTS __millrace.job_properties (
  job_id BIGINT, key VARCHAR, value VARCHAR);
CREATE TABLE IF NOT EXISTS __millrace.tasks (
  job_id BIGINT, task_id BIGINT, state VARCHAR, error_msg VARCHAR, create_time_us BIGINT,
  start_time_us BIGINT, finish_time_us BIGINT, scanned_rows BIGINT, load_bytes BIGINT,
  file_number BIGINT, file_size BIGINT, filtered_rows BIGINT, first_error_msg VARCHAR,
  start_file VARCHAR, end_file VARCHAR);
CREATE TABLE IF NOT EXISTS __millrace.filtered_rows (
  job_id BIGINT, task_id BIGINT, file VARCHAR, line BIGINT, column_name VARCHAR,
  value VARCHAR, reason VARCHAR, time_us BIGINT);
CREATE TABLE IF NOT EXISTS __millrace.files (
  job_id BIGINT, key VARCHAR, etag VARCHAR, size BIGINT, state VARCHAR, task_id BIGINT,
  rows BIGINT, load_time_us BIGINT, error VARCHAR);

-- The users' tables and the rows the jobs loaded into them.
CREATE TABLE main.t (id INTEGER, name VARCHAR);
CREATE TABLE main.u (id INTEGER, name VARCHAR);
CREATE TABLE main.w (id INTEGER, name VARCHAR);
INSERT INTO main.t VALUES (1, 'a'), (2, 'a'), (3, 'b'), (4, 'b'), (5, 'b');
INSERT INTO main.u VALUES (1, 'a'), (2, 'a'), (3, 'b'), (4, 'b'), (5, 'b');
INSERT INTO main.w VALUES (3, 'b'), (4, 'b'), (5, 'b');

-- jobs, in v1's column order: id, name, definer, definition, masked_sql, comment, state,
-- create_time_us, current_offset, end_offset, succeed_tasks, failed_tasks, canceled_tasks,
-- scanned_rows, load_bytes, file_number, file_size, filtered_rows, error_code, error_msg,
-- runtime_msg, last_success_time_us, epoch, auto_resume_count, manual_pause, next_task_id,
-- insert_sql, database_name, reconcile_floor. Strings v1 had no value for are '' (it bound
-- empty strings, never NULL).
INSERT INTO __millrace.jobs VALUES
  (1, 'people', 'root',
   'INSERT INTO t SELECT CAST(c1 AS INTEGER), c2 FROM local("file_path" = "@IN@/*.csv", "format" = "csv", "column_separator" = ",")',
   'INSERT INTO t SELECT CAST(c1 AS INTEGER), c2 FROM local("file_path" = "@IN@/*.csv", "format" = "csv", "column_separator" = ",")',
   '', 'RUNNING', 1764680000000000, '@IN@/b.csv', '@IN@/b.csv', 2, 0, 0,
   5, 20, 2, 20, 0, '', '', '', 1764680002000000, 0, 0, false, 3,
   'INSERT INTO t SELECT CAST(c1 AS INTEGER), c2 FROM local("file_path" = "@IN@/*.csv", "format" = "csv", "column_separator" = ",")',
   '', ''),
  (2, 'archive', 'root',
   'INSERT INTO u SELECT CAST(c1 AS INTEGER), c2 FROM local("file_path" = "@IN@/*.csv", "format" = "csv", "column_separator" = ",")',
   'INSERT INTO u SELECT CAST(c1 AS INTEGER), c2 FROM local("file_path" = "@IN@/*.csv", "format" = "csv", "column_separator" = ",")',
   'cold copy', 'PAUSED', 1764680010000000, '@IN@/b.csv', '@IN@/b.csv', 1, 0, 0,
   5, 20, 2, 20, 0, 'MANUAL_PAUSE_ERR', 'paused by user', '', 1764680011000000, 1, 0, true, 2,
   'INSERT INTO u SELECT CAST(c1 AS INTEGER), c2 FROM local("file_path" = "@IN@/*.csv", "format" = "csv", "column_separator" = ",")',
   '', ''),
  (3, 'latecomers', 'root',
   'INSERT INTO w SELECT CAST(c1 AS INTEGER), c2 FROM local("file_path" = "@IN@/*.csv", "format" = "csv", "column_separator" = ",")',
   'INSERT INTO w SELECT CAST(c1 AS INTEGER), c2 FROM local("file_path" = "@IN@/*.csv", "format" = "csv", "column_separator" = ",")',
   '', 'RUNNING', 1764680020000000, '@IN@/b.csv', '@IN@/b.csv', 1, 0, 0,
   3, 12, 1, 12, 0, '', '', '1 late file(s) skipped (late_files = ignore), first @IN@/a.csv',
   1764680021000000, 0, 0, false, 2,
   'INSERT INTO w SELECT CAST(c1 AS INTEGER), c2 FROM local("file_path" = "@IN@/*.csv", "format" = "csv", "column_separator" = ",")',
   '', '');

-- job_properties: the properties as the user gave them.
INSERT INTO __millrace.job_properties VALUES
  (1, 'max_interval', '1'),
  (2, 'max_interval', '1'),
  (3, 'late_files', 'ignore'),
  (3, 'max_interval', '1');

-- tasks: job_id, task_id, state, error_msg, create_time_us, start_time_us, finish_time_us,
-- scanned_rows, load_bytes, file_number, file_size, filtered_rows, first_error_msg,
-- start_file, end_file.
INSERT INTO __millrace.tasks VALUES
  (1, 1, 'SUCCESS', '', 1764680001000000, 1764680001000000, 1764680001500000,
   2, 8, 1, 8, 0, '', '@IN@/a.csv', '@IN@/a.csv'),
  (1, 2, 'SUCCESS', '', 1764680002000000, 1764680002000000, 1764680002000000,
   3, 12, 1, 12, 0, '', '@IN@/b.csv', '@IN@/b.csv'),
  (2, 1, 'SUCCESS', '', 1764680011000000, 1764680011000000, 1764680011000000,
   5, 20, 2, 20, 0, '', '@IN@/a.csv', '@IN@/b.csv'),
  (3, 1, 'SUCCESS', '', 1764680021000000, 1764680021000000, 1764680021000000,
   3, 12, 1, 12, 0, '', '@IN@/b.csv', '@IN@/b.csv');

-- files (the ledger): job_id, key, etag, size, state, task_id, rows, load_time_us, error.
INSERT INTO __millrace.files VALUES
  (1, '@IN@/a.csv', '@ETAG_A@', 8, 'LOADED', 1, 2, 1764680001500000, ''),
  (1, '@IN@/b.csv', '@ETAG_B@', 12, 'LOADED', 2, 3, 1764680002000000, ''),
  (2, '@IN@/a.csv', '@ETAG_A@', 8, 'LOADED', 1, 2, 1764680011000000, ''),
  (2, '@IN@/b.csv', '@ETAG_B@', 12, 'LOADED', 1, 3, 1764680011000000, ''),
  (3, '@IN@/b.csv', '@ETAG_B@', 12, 'LOADED', 1, 3, 1764680021000000, ''),
  (3, '@IN@/a.csv', '@ETAG_A@', 8, 'SKIPPED', 0, 0, 1764680030000000,
   'late file (late_files = ignore)');
