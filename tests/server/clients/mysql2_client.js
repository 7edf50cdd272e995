// The driver script, through Node's mysql2: connect, metadata, create, insert with bound
// parameters of every type and NULL, select them back typed, one prepared statement executed
// many times, a transaction rolled back, an error with its code. execute() prepares on the
// server (the binary protocol); query() uses the text protocol.
//
// Usage: node mysql2_client.js <node_modules dir> <port>. Prints "ok" and exits 0, or names
// what failed and exits 1.
'use strict';

const mysql = require(process.argv[2] + '/mysql2/promise');
const port = Number(process.argv[3]);

function check(ok, what, got) {
  if (!ok) throw new Error('failed: ' + what + (got === undefined ? '' : ' (got ' + JSON.stringify(got) + ')'));
}

async function main() {
  const conn = await mysql.createConnection({
    host: '127.0.0.1', port, user: 'root', password: '', timezone: 'Z',
    supportBigNumbers: true, bigNumberStrings: true,
  });
  await conn.query('CREATE DATABASE IF NOT EXISTS drivers');
  await conn.query('USE drivers');
  await conn.query('CREATE TABLE node_t (id INT, i BIGINT, d DOUBLE, s VARCHAR(50), b BLOB, ' +
                   'dt DATE, ts DATETIME(6), n DECIMAL(10,2))');
  const [tables] = await conn.query('SHOW TABLES');
  check(tables.some((r) => Object.values(r)[0] === 'node_t'), 'SHOW TABLES lists node_t', tables);

  const insert = 'INSERT INTO node_t VALUES (?, ?, ?, ?, ?, ?, ?, ?)';
  await conn.execute(insert, [1, '9007199254740993', 2.5, "it's \\ é", Buffer.from([0, 255, 16]),
                              new Date(Date.UTC(2024, 1, 29)),
                              new Date(Date.UTC(1999, 11, 31, 23, 59, 58, 123)), '-12.34']);
  await conn.execute(insert, [2, null, null, null, null, null, null, null]);

  for (const [how, run] of [['execute', conn.execute.bind(conn)], ['query', conn.query.bind(conn)]]) {
    const [rows] = await run('SELECT * FROM node_t WHERE id >= ? ORDER BY id', [1]);
    check(rows.length === 2, how + ': two rows', rows);
    const r = rows[0];
    check(r.id === 1, how + ': INT', r.id);
    check(r.i === '9007199254740993', how + ': BIGINT', r.i);
    check(r.d === 2.5, how + ': DOUBLE', r.d);
    check(r.s === "it's \\ é", how + ': VARCHAR', r.s);
    check(Buffer.isBuffer(r.b) && r.b.equals(Buffer.from([0, 255, 16])), how + ': BLOB', r.b);
    check(r.dt instanceof Date && r.dt.toISOString().startsWith('2024-02-29'), how + ': DATE', r.dt);
    check(r.ts instanceof Date && r.ts.toISOString() === '1999-12-31T23:59:58.123Z', how + ': DATETIME', r.ts);
    check(r.n === '-12.34', how + ': DECIMAL', r.n);
    check(Object.entries(rows[1]).every(([k, v]) => k === 'id' || v === null), how + ': NULLs', rows[1]);
  }

  // One statement, many executions (mysql2 caches the prepared statement).
  for (let k = 0; k < 200; ++k) await conn.execute('INSERT INTO node_t (id) VALUES (?)', [100 + k]);
  const [[count]] = await conn.query('SELECT count(*) AS c FROM node_t');
  check(Number(count.c) === 202, 'count after 200 executions', count);

  // A transaction rolled back leaves nothing.
  await conn.query('START TRANSACTION');
  await conn.execute('DELETE FROM node_t WHERE id >= ?', [100]);
  await conn.query('ROLLBACK');
  const [[after]] = await conn.query('SELECT count(*) AS c FROM node_t');
  check(Number(after.c) === 202, 'count after ROLLBACK', after);

  // An error keeps its code, and the connection goes on.
  let errno = 0;
  try {
    await conn.execute('SELECT * FROM no_such_table WHERE x = ?', [1]);
  } catch (e) {
    errno = e.errno;
  }
  check(errno === 1146, 'error 1146 for a missing table', errno);
  const [[one]] = await conn.query('SELECT 1 AS one');
  check(Number(one.one) === 1, 'the connection goes on', one);
  await conn.end();
  console.log('ok');
}

main().catch((e) => {
  console.error(e && e.message ? e.message : e);
  process.exit(1);
});
