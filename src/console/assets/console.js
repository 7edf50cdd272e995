// Millrace's web console: one page over the JSON API (docs/http_api.md), routed by the URL's
// fragment (#/, #/jobs/<name>, #/audit). Every value from the server is put in the page as
// text (textContent), never as markup. State-changing requests carry the session's CSRF token.
'use strict';

(() => {
  const REFRESH_MS = 1000;
  const PAGE = 50;
  const main = document.getElementById('main');
  const flash = document.getElementById('flash');
  let session = null;  // {user, csrf_token}
  let timer = null;    // the open page's refresh
  let page = null;     // the open page: {refresh(), dispose()}

  // ----- helpers -----------------------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name === 'class') node.className = value;
      else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? '' : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function badge(state) {
    return el('span', {class: 'badge ' + state}, state);
  }

  function fmtNumber(n) {
    return n === null || n === undefined ? '' : Number(n).toLocaleString('en-US');
  }

  function fmtBytes(n) {
    if (!n) return '0 B';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) {
      n /= 1024;
      i++;
    }
    return (i === 0 ? n : n.toFixed(1)) + ' ' + units[i];
  }

  function fmtTime(us) {
    if (!us) return '';
    return new Date(us / 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  }

  function fmtSeconds(s) {
    if (s === null || s === undefined) return '—';
    if (s < 1) return 'now';
    if (s < 120) return Math.round(s) + ' s';
    return Math.round(s / 60) + ' min';
  }

  function loaded(stats) {
    return stats ? (stats.scannedRows || 0) - (stats.filteredRows || 0) : 0;
  }

  function errorText(error) {
    if (!error) return '';
    if (typeof error === 'string') return error;
    return error.ErrorMsg || error.errorMsg || JSON.stringify(error);
  }

  function show(message, kind) {
    flash.textContent = message;
    flash.className = kind;
    flash.hidden = !message;
  }

  async function api(path, body) {
    const init = {credentials: 'same-origin', headers: {'Accept': 'application/json'}};
    if (body !== undefined) {
      init.method = 'POST';
      init.headers['Content-Type'] = 'application/json';
      init.headers['X-CSRF-Token'] = session.csrf_token;
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    if (response.status === 401) {
      location.href = '/login';
      throw new Error('log in first');
    }
    const doc = await response.json().catch(() => ({error: response.statusText}));
    if (!response.ok) {
      const error = new Error(doc.error || response.statusText);
      error.status = response.status;
      throw error;
    }
    return doc;
  }

  function jobPath(name, suffix) {
    return '/api/jobs/' + encodeURIComponent(name) + (suffix || '');
  }

  // A table whose body is replaced by render(rows); columns: [{title, cell(row) -> Node|text,
  // class}].
  function table(id, columns) {
    const body = el('tbody');
    const node = el('table', {id}, el('thead', {}, el('tr', {}, columns.map(c => el('th', {}, c.title)))),
                    body);
    node.render = (rows, rowAttrs) => {
      body.replaceChildren(...rows.map(row => el('tr', rowAttrs ? rowAttrs(row) : {},
                                                 columns.map(c => el('td', {class: c.class}, c.cell(row))))));
      if (rows.length === 0) {
        body.append(el('tr', {}, el('td', {colspan: columns.length, class: 'muted'}, 'Nothing here.')));
      }
    };
    return node;
  }

  // Keyset paging over an API list: load(after) -> {items, next}; a stack of the pages' starts.
  function pager(load, render) {
    const starts = [''];
    let next = null;
    const first = el('button', {type: 'button', class: 'first-page'}, 'First page');
    const more = el('button', {type: 'button', class: 'next-page'}, 'Next page');
    const where = el('span', {class: 'muted'});
    const node = el('div', {class: 'pager'}, first, more, where);
    async function refresh() {
      const doc = await load(starts[starts.length - 1]);
      next = doc.next;
      render(doc);
      more.disabled = next === null || next === undefined;
      first.disabled = starts.length === 1;
      where.textContent = 'page ' + starts.length;
    }
    more.addEventListener('click', () => {
      starts.push(String(next));
      refresh().catch(e => show(e.message, 'error'));
    });
    first.addEventListener('click', () => {
      starts.length = 1;
      refresh().catch(e => show(e.message, 'error'));
    });
    node.refresh = refresh;
    node.reset = () => {
      starts.length = 1;
      return refresh();
    };
    return node;
  }

  function sparkline(container) {
    const plot = new uPlot({
      width: 120, height: 32, class: 'spark',
      cursor: {show: false}, legend: {show: false}, select: {show: false},
      scales: {x: {time: false}},
      axes: [{show: false}, {show: false}],
      series: [{}, {stroke: '#1a7f37', fill: 'rgba(26,127,55,.15)', width: 1, points: {show: false}}],
    }, [[], []], container);
    return plot;
  }

  // ----- pages -------------------------------------------------------------------------------

  function jobsPage() {
    const rows = new Map();  // job name -> {tr, cells, plot}
    const body = el('tbody');
    const list = el('table', {id: 'jobs'},
                    el('thead', {}, el('tr', {}, ['Job', 'Status', 'Lag', 'Rows loaded', 'Files',
                                                  'Throughput (rows per task)', 'Last error',
                                                  'Next poll'].map(t => el('th', {}, t)))),
                    body);
    const empty = el('p', {class: 'muted', hidden: true}, 'No jobs you may see yet.');

    function update(job) {
      let row = rows.get(job.name);
      if (!row) {
        const cells = {
          status: el('td'), lag: el('td', {class: 'num lag'}), rows: el('td', {class: 'num rows'}),
          files: el('td', {class: 'num files'}), spark: el('td', {class: 'spark-cell'}),
          error: el('td', {class: 'error'}), poll: el('td', {class: 'num poll'}),
        };
        const tr = el('tr', {'data-job': job.name},
                      el('td', {}, el('a', {href: '#/jobs/' + encodeURIComponent(job.name)}, job.name)),
                      cells.status, cells.lag, cells.rows, cells.files, cells.spark, cells.error,
                      cells.poll);
        row = {tr, cells, plot: sparkline(cells.spark)};
        rows.set(job.name, row);
      }
      const c = row.cells;
      c.status.replaceChildren(badge(job.status));
      c.lag.textContent = fmtNumber(job.lag.items) + ' ' + job.lag.unit +
          (job.lag.bytes ? ' (' + fmtBytes(job.lag.bytes) + ')' : '');
      c.rows.textContent = fmtNumber(loaded(job.loadStatistic));
      c.files.textContent = fmtNumber(job.loadStatistic ? job.loadStatistic.fileNumber : 0);
      c.error.textContent = errorText(job.error);
      c.poll.textContent = job.status === 'RUNNING' ? fmtSeconds(job.nextPollInSeconds) : '—';
      const t = job.throughput || {timeUs: [], rows: []};
      row.plot.setData([t.timeUs.map(us => us / 1e6), t.rows]);
      return row.tr;
    }

    const paging = pager(after => api('/api/jobs?limit=' + PAGE + '&after=' + encodeURIComponent(after)),
                         doc => {
                           const seen = new Set(doc.jobs.map(j => j.name));
                           for (const [name, row] of rows) {
                             if (!seen.has(name)) {
                               row.plot.destroy();
                               rows.delete(name);
                             }
                           }
                           body.replaceChildren(...doc.jobs.map(update));
                           empty.hidden = doc.jobs.length > 0;
                         });
    main.replaceChildren(el('h1', {}, 'Jobs'), list, empty, paging);
    return {refresh: paging.refresh, dispose() { for (const row of rows.values()) row.plot.destroy(); }};
  }

  function jobPage(name) {
    const status = el('span', {id: 'job-status'});
    const facts = el('div', {class: 'facts'});
    const message = el('p', {id: 'runtime-msg', class: 'muted'});
    const error = el('p', {id: 'job-error', class: 'error-text'});
    const properties = table('properties', [
      {title: 'Property', cell: p => p[0]}, {title: 'Value', cell: p => p[1]}]);
    const sql = el('pre', {id: 'execute-sql'});
    const chart = el('div', {class: 'chart', id: 'task-chart'});
    const tasks = table('tasks', [
      {title: 'Task', cell: t => t.taskId, class: 'num'},
      {title: 'Status', cell: t => badge(t.status)},
      {title: 'Started', cell: t => fmtTime(t.startTimeUs)},
      {title: 'Duration', cell: t => t.finishTimeUs ? ((t.finishTimeUs - t.startTimeUs) / 1e6).toFixed(2) + ' s' : '', class: 'num'},
      {title: 'Files', cell: t => fmtNumber(t.loadStatistic ? t.loadStatistic.fileNumber : 0), class: 'num'},
      {title: 'Rows', cell: t => fmtNumber(loaded(t.loadStatistic)), class: 'num'},
      {title: 'Error', cell: t => t.errorMsg, class: 'error'},
    ]);

    async function act(path, body, done) {
      try {
        const doc = await api(jobPath(name, path), body);
        show(doc.message || done, 'info');
      } catch (e) {
        show(e.message, 'error');
      }
      await refresh().catch(() => {});
      await files.reset().catch(() => {});
    }
    const pause = el('button', {type: 'button', id: 'pause', onclick: () => act('/pause', {}, 'Paused.')}, 'Pause');
    const resume = el('button', {type: 'button', id: 'resume', onclick: () => act('/resume', {}, 'Resumed.')}, 'Resume');
    const retryAll = el('button', {type: 'button', id: 'retry-all', onclick: () => act('/retry', {all: true}, 'Retrying.')},
                        'Retry all quarantined files');

    const search = el('input', {type: 'search', id: 'file-search', placeholder: 'Key contains…'});
    const state = el('select', {id: 'file-state'},
                     ['', 'LOADED', 'QUARANTINED', 'RETRYING', 'SKIPPED'].map(s => el('option', {value: s}, s || 'Any state')));
    const ledger = table('files', [
      {title: 'Key', cell: f => f.key, class: 'key'},
      {title: 'State', cell: f => badge(f.state)},
      {title: 'Size', cell: f => fmtBytes(f.size), class: 'num'},
      {title: 'Rows', cell: f => fmtNumber(f.rows), class: 'num'},
      {title: 'Task', cell: f => f.taskId, class: 'num'},
      {title: 'Loaded', cell: f => fmtTime(f.loadTimeUs)},
      {title: 'Why', cell: f => f.reason || '', class: 'reason'},
      {title: 'Error', cell: f => f.error, class: 'error'},
      {title: '', cell: f => f.state === 'QUARANTINED'
          ? el('button', {type: 'button', class: 'retry-file', onclick: () => act('/retry', {files: [f.key]}, 'Retrying ' + f.key + '.')}, 'Retry')
          : ''},
    ]);
    const files = pager(after => api(jobPath(name, '/files') + '?limit=' + PAGE + '&after=' + encodeURIComponent(after) +
                                     '&state=' + encodeURIComponent(state.value) +
                                     '&search=' + encodeURIComponent(search.value)),
                        doc => ledger.render(doc.files, f => ({'data-key': f.key})));
    let typing = null;
    search.addEventListener('input', () => {
      clearTimeout(typing);
      typing = setTimeout(() => files.reset().catch(e => show(e.message, 'error')), 250);
    });
    state.addEventListener('change', () => files.reset().catch(e => show(e.message, 'error')));

    const filtered = table('filtered', [
      {title: 'Task', cell: r => r.taskId, class: 'num'},
      {title: 'File', cell: r => r.file, class: 'key'},
      {title: 'Line', cell: r => r.line, class: 'num'},
      {title: 'Column', cell: r => r.column},
      {title: 'Value', cell: r => r.value},
      {title: 'Reason', cell: r => r.reason, class: 'error'},
    ]);
    const filteredPages = pager(after => api(jobPath(name, '/filtered_rows') + '?limit=' + PAGE + '&after=' + encodeURIComponent(after)),
                                doc => filtered.render(doc.rows));

    let plot = null;
    function drawTasks(list) {
      const ended = list.filter(t => t.finishTimeUs);
      const data = [ended.map(t => t.startTimeUs / 1e6),
                    ended.map(t => (t.finishTimeUs - t.startTimeUs) / 1e6),
                    ended.map(t => loaded(t.loadStatistic))];
      if (!plot) {
        plot = new uPlot({
          width: Math.min(main.clientWidth - 30, 1100), height: 180,
          series: [{}, {label: 'duration (s)', stroke: '#1f6feb', width: 1.5, scale: 's'},
                   {label: 'rows', stroke: '#1a7f37', width: 1.5, scale: 'rows'}],
          axes: [{}, {scale: 's', label: 'seconds'}, {scale: 'rows', side: 1, label: 'rows', grid: {show: false}}],
        }, data, chart);
      } else {
        plot.setData(data);
      }
    }

    function fact(label, id, value) {
      return el('div', {class: 'fact'}, el('span', {class: 'label'}, label), el('span', {class: 'value', id}, value));
    }

    async function refresh() {
      const job = await api(jobPath(name));
      status.replaceChildren(badge(job.status));
      const s = job.loadStatistic || {};
      facts.replaceChildren(
          fact('Rows loaded', 'rows-loaded', fmtNumber(loaded(s))),
          fact('Files loaded', 'files-loaded', fmtNumber(s.fileNumber || 0)),
          fact('Bytes loaded', 'bytes-loaded', fmtBytes(s.loadBytes || 0)),
          fact('Rows filtered', 'rows-filtered', fmtNumber(s.filteredRows || 0)),
          fact('Lag', 'lag', fmtNumber(job.lag.items) + ' ' + job.lag.unit),
          fact('Next poll', 'next-poll', job.status === 'RUNNING' ? fmtSeconds(job.nextPollInSeconds) : '—'),
          fact('Running tasks', 'running-tasks', fmtNumber(job.runningTasks || 0)),
          fact('Last success', 'last-success', fmtTime(job.lastSuccessTimeUs) || 'never'),
          fact('Tasks (ok / failed)', 'task-counts', job.succeedTaskCount + ' / ' + job.failedTaskCount));
      message.textContent = job.runtimeMsg || '';
      error.textContent = errorText(job.error);
      pause.disabled = job.status !== 'RUNNING' && job.status !== 'PENDING';
      resume.disabled = job.status !== 'PAUSED';
      properties.render(Object.entries(job.properties || {}).map(([k, v]) => [k, String(v)]));
      sql.textContent = job.executeSql;
      tasks.render(job.tasks.slice().reverse().slice(0, 20));
      drawTasks(job.tasks);
      // The pages shown stay where they are (keyset: the same start), with what changed.
      await Promise.all([files.refresh(), filteredPages.refresh()]);
    }

    main.replaceChildren(
        el('p', {}, el('a', {href: '#/'}, '← Jobs')),
        el('h1', {}, name, status),
        el('div', {class: 'actions'}, pause, resume, retryAll),
        facts, error, message,
        el('h2', {}, 'Tasks'), chart, tasks,
        el('h2', {}, 'Files'), el('div', {class: 'filters'}, search, state,
                                  el('button', {type: 'button', onclick: () => files.refresh()}, 'Refresh')),
        ledger, files,
        el('h2', {}, 'Filtered rows'), filtered, filteredPages,
        el('h2', {}, 'Definition'), sql, properties);
    return {refresh, dispose() { if (plot) plot.destroy(); }};
  }

  function auditPage() {
    const events = table('audit', [
      {title: 'Time', cell: e => fmtTime(e.timeUs)},
      {title: 'User', cell: e => e.user},
      {title: 'Host', cell: e => e.host},
      {title: 'Kind', cell: e => e.kind},
      {title: 'Action', cell: e => e.action},
      {title: 'Statement', cell: e => e.statement, class: 'key'},
      {title: 'Outcome', cell: e => e.error || 'OK', class: 'outcome'},
    ]);
    const paging = pager(after => api('/api/audit?limit=' + PAGE + (after ? '&before=' + encodeURIComponent(after) : '')),
                         doc => events.render(doc.events));
    main.replaceChildren(el('h1', {}, 'Audit log'), events, paging);
    paging.refresh().catch(e => show(e.message, 'error'));
    return {refresh: null, dispose() {}};
  }

  // ----- routing -----------------------------------------------------------------------------

  function route() {
    clearInterval(timer);
    if (page) page.dispose();
    show('', '');
    const hash = location.hash || '#/';
    const job = hash.match(/^#\/jobs\/(.+)$/);
    if (job) page = jobPage(decodeURIComponent(job[1]));
    else if (hash === '#/audit') page = auditPage();
    else page = jobsPage();
    if (page.refresh) {
      const tick = () => page.refresh().catch(e => show(e.message, 'error'));
      tick();
      timer = setInterval(tick, REFRESH_MS);
    }
  }

  async function start() {
    session = await api('/api/session');
    document.getElementById('who').textContent = session.user;
    document.getElementById('logout').addEventListener('click', async () => {
      await api('/api/logout', {}).catch(() => {});
      location.href = '/login';
    });
    // The audit log is for administrators: the link shows when the API answers.
    api('/api/audit?limit=1').then(() => { document.getElementById('nav-audit').hidden = false; },
                                   () => {});
    window.addEventListener('hashchange', route);
    route();
  }

  start().catch(e => show(e.message, 'error'));
})();
