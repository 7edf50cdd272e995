// The web console in a real headless browser: Debian's chromium driven by playwright-core (npm,
// pinned in third_party/npm), against a running `millrace serve`.
//
// Usage: node console_browser.js <node_modules dir> <mysql port> <http port> <inbox dir>
//                                <screenshot dir>
// Sets up users, a table and a job over the MySQL port (mysql2), then as a user with LOAD_PRIV:
// logs in, sees the job appear and its counts change as files arrive, pauses and resumes it,
// retries a quarantined file; as a user with SELECT_PRIV only: sees the job and is refused
// its pause; as root: reads the audit log. Saves a screenshot of each page. Prints "ok" and
// exits 0, or names what failed and exits 1.
'use strict';

const fs = require('fs');
const path = require('path');

const [npm, mysqlPort, httpPort, inbox, shots] = process.argv.slice(2);
const mysql = require(npm + '/mysql2/promise');
const {chromium} = require(npm + '/playwright-core');

const base = 'http://127.0.0.1:' + httpPort;
const jobDir = path.join(inbox, 'console');
const WAIT = {timeout: 60000};

function check(ok, what, got) {
  if (!ok) throw new Error('failed: ' + what + (got === undefined ? '' : ' (got ' + JSON.stringify(got) + ')'));
}

// Writes a file under the job's directory as a finished file: written aside, then renamed in.
function put(name, text) {
  const tmp = path.join(inbox, '.' + name + '.tmp');
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, path.join(jobDir, name));
}

// Waits until the text of `selector` is `want.is`, or holds every string of `want.has`. (The
// page's Content-Security-Policy forbids eval, so the test cannot send a predicate as code.)
async function waitText(page, selector, want, what) {
  try {
    await page.waitForFunction(([s, w]) => {
      const node = document.querySelector(s);
      if (node === null) return false;
      const t = node.textContent.trim();
      return w.is !== undefined ? t === w.is : w.has.every(part => t.includes(part));
    }, [selector, want], WAIT);
  } catch (e) {
    const node = await page.$(selector);
    throw new Error('failed: ' + what + ' (' + selector + ' is ' +
                    JSON.stringify(node ? await node.textContent() : null) + ')');
  }
}

async function login(browser, user, password) {
  const context = await browser.newContext({viewport: {width: 1400, height: 900}});
  const page = await context.newPage();
  page.on('pageerror', e => { throw new Error('page error: ' + e.message); });
  await page.goto(base + '/');
  check(page.url() === base + '/login', 'a browser without a login is sent to /login', page.url());
  await page.fill('input[name=user]', user);
  await page.fill('input[name=password]', password);
  await Promise.all([page.waitForURL(base + '/'), page.click('button[type=submit]')]);
  await waitText(page, '#who', {is: user}, 'the console names its user');
  return {context, page};
}

async function main() {
  fs.mkdirSync(shots, {recursive: true});
  fs.mkdirSync(jobDir, {recursive: true});
  const sql = await mysql.createConnection({host: '127.0.0.1', port: Number(mysqlPort), user: 'root', password: ''});
  for (const statement of [
    'CREATE DATABASE shop',
    'CREATE TABLE shop.orders (id INT, item VARCHAR)',
    "CREATE USER 'operator'@'%' IDENTIFIED BY 'op-pass'",
    "GRANT SELECT_PRIV, LOAD_PRIV ON shop.* TO 'operator'@'%'",
    "CREATE USER 'viewer'@'%' IDENTIFIED BY 'view-pass'",
    "GRANT SELECT_PRIV ON shop.* TO 'viewer'@'%'",
  ]) {
    await sql.query(statement);
  }
  put('a.csv', '1,apple\n2,pear\n3,plum\n');

  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: process.getuid() === 0 ? ['--no-sandbox'] : [],
  });
  try {
    // The operator logs in before the job exists, and sees it appear.
    const op = await login(browser, 'operator', 'op-pass');
    await op.page.screenshot({path: path.join(shots, '01-jobs-empty.png'), fullPage: true});
    await sql.query('CREATE JOB orders_job ON STREAMING PROPERTIES ("max_interval" = "1", ' +
                    '"on_error" = "skip_file") DO INSERT INTO shop.orders SELECT c1, c2 FROM local(' +
                    `"file_path" = "${jobDir}/*.csv", "format" = "csv", "column_separator" = ",")`);
    const row = 'tr[data-job="orders_job"]';
    await waitText(op.page, row + ' .rows', {is: '3'}, 'the new job appears with its 3 rows');
    await waitText(op.page, row + ' .badge', {is: 'RUNNING'}, 'the job runs');

    // Counts follow new files.
    put('b.csv', '4,fig\n5,kiwi\n');
    await waitText(op.page, row + ' .rows', {is: '5'}, 'the rows count follows a new file');
    await waitText(op.page, row + ' .files', {is: '2'}, 'the files count follows a new file');
    check(await op.page.$(row + ' .spark-cell canvas') !== null, 'the throughput sparkline is drawn');
    await op.page.screenshot({path: path.join(shots, '02-jobs.png'), fullPage: true});

    // The job page; pause and resume.
    await op.page.click(row + ' a');
    await waitText(op.page, '#job-status', {is: 'RUNNING'}, 'the job page shows the job running');
    await waitText(op.page, '#rows-loaded', {is: '5'}, 'the job page shows the rows loaded');
    await waitText(op.page, '#files tbody', {has: ['a.csv', 'b.csv']}, 'the ledger lists the files');
    await waitText(op.page, '#execute-sql', {has: ['INSERT INTO shop.orders']}, 'the definition is shown');
    await op.page.screenshot({path: path.join(shots, '03-job.png'), fullPage: true});
    await op.page.click('#pause');
    await waitText(op.page, '#job-status', {is: 'PAUSED'}, 'Pause pauses the job');
    check(await op.page.isDisabled('#pause'), 'Pause is disabled on a paused job');
    await op.page.screenshot({path: path.join(shots, '04-job-paused.png'), fullPage: true});
    await op.page.click('#resume');
    await waitText(op.page, '#job-status', {is: 'RUNNING'}, 'Resume resumes the job');

    // A file with the wrong columns is quarantined; fixed, and retried from its ledger row.
    put('c.csv', '6,grape\n7,melon,extra\n');
    await op.page.selectOption('#file-state', 'QUARANTINED');
    const quarantined = '#files tr[data-key$="c.csv"]';
    await op.page.waitForSelector(quarantined + ' button.retry-file', WAIT);
    await waitText(op.page, quarantined + ' .reason', {is: 'READER_ERROR'},
                   'the ledger says why the file is bad');
    await op.page.screenshot({path: path.join(shots, '05-job-quarantined.png'), fullPage: true});
    put('c.csv', '6,grape\n');
    await op.page.click(quarantined + ' button.retry-file');
    await op.page.waitForSelector('#flash.info:not([hidden])', WAIT);  // the retry was accepted
    await op.page.selectOption('#file-state', 'LOADED');
    await waitText(op.page, '#rows-loaded', {is: '6'}, 'the retried file loads');
    await op.page.click('.filters button');
    await op.page.waitForSelector('#files tr[data-key$="c.csv"]', WAIT);
    const [cState] = await op.page.$$eval('#files tr[data-key$="c.csv"] .badge', nodes => nodes.map(n => n.textContent));
    check(cState === 'LOADED', 'the retried file is LOADED in the ledger', cState);

    // The operator may not read the audit log: no link, and the API refuses.
    check(await op.page.isHidden('#nav-audit'), 'the audit link is hidden from a non-administrator');
    const refused = await op.page.evaluate(() => fetch('/api/audit').then(r => r.status));
    check(refused === 403, 'GET /api/audit is refused to a non-administrator', refused);

    // A viewer (SELECT_PRIV only) sees the job and is refused its pause.
    const viewer = await login(browser, 'viewer', 'view-pass');
    await waitText(viewer.page, row + ' .rows', {is: '6'}, 'the viewer sees the job');
    await viewer.page.click(row + ' a');
    await waitText(viewer.page, '#job-status', {is: 'RUNNING'}, 'the viewer sees the job page');
    await viewer.page.click('#pause');
    await waitText(viewer.page, '#flash.error', {has: ['LOAD_PRIV', 'denied']}, 'the viewer is refused the pause');
    await waitText(viewer.page, '#job-status', {is: 'RUNNING'}, 'the refused pause changes nothing');
    await viewer.page.screenshot({path: path.join(shots, '06-job-refused.png'), fullPage: true});
    // A state change without the session's CSRF token is refused.
    const forged = await viewer.page.evaluate(
        () => fetch('/api/jobs/orders_job/pause', {method: 'POST', body: '{}'}).then(r => r.status));
    check(forged === 403, 'a POST without the CSRF token is refused', forged);

    // An administrator reads the audit log: the operator's actions, the viewer's refusal.
    const admin = await login(browser, 'root', '');
    await admin.page.waitForSelector('#nav-audit:not([hidden])', WAIT);
    await admin.page.click('#nav-audit');
    await waitText(admin.page, '#audit tbody', {has: ['PAUSE JOB', 'operator']},
                   'the audit log shows the operator\'s pause');
    await waitText(admin.page, '#audit tbody', {has: ['ALTER JOB', 'RETRY FILE']},
                   'the audit log shows the retry');
    await waitText(admin.page, '#audit tbody', {has: ['viewer', 'LOAD_PRIV command denied']},
                   'the audit log shows the refused pause');
    await admin.page.screenshot({path: path.join(shots, '07-audit.png'), fullPage: true});
  } finally {
    await browser.close();
    await sql.end();
  }
  console.log('ok');
}

main().catch(e => {
  console.error(e.stack || String(e));
  process.exit(1);
});
