// The hone dashboard: one page that reads the JSON API of package
// dashboard and draws with uPlot. It fetches again whatever it shows each
// time the server announces a new version of the experiment.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const state = {
    version: 0,
    metric: '',
    mode: '',
    x: '',
    sort: 'index',
    desc: false,
    status: new Set(),
    offset: 0,
    limit: 50,
    lineageKey: '',
    trial: '',
    summary: null,
  };
  // Exposed for tests and for the curious: the charts and what was drawn.
  const hone = { charts: {}, fronts: {}, state: state, shown: 0 };
  window.hone = hone;

  const fmt = (v) => {
    if (v === null || v === undefined) return '';
    if (typeof v === 'number') {
      if (Number.isInteger(v)) return String(v);
      const a = Math.abs(v);
      return a !== 0 && (a < 1e-3 || a >= 1e6) ? v.toExponential(4) : String(Number(v.toPrecision(6)));
    }
    if (typeof v === 'string') return v;
    return JSON.stringify(v);
  };
  const duration = (s) => {
    s = Math.round(s);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    return (h ? h + 'h ' : '') + (h || m ? m + 'm ' : '') + sec + 's';
  };
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  };
  const color = (i, alpha) => 'hsla(' + ((i * 137.508) % 360).toFixed(1) + ',55%,50%,' + (alpha === undefined ? 0.7 : alpha) + ')';
  const BEST = '#d62728';
  const OUTCOME_COLORS = {
    promoted: '#2ca02c', stopped: '#d62728', completed: '#1f77b4',
    paused: '#ff7f0e', pending: '#888888', error: '#000000',
  };

  function query(params) {
    const p = new URLSearchParams();
    if (state.metric) p.set('metric', state.metric);
    if (state.mode) p.set('mode', state.mode);
    for (const [k, v] of Object.entries(params || {})) {
      if (v !== '' && v !== undefined && v !== null) p.set(k, v);
    }
    const s = p.toString();
    return s ? '?' + s : '';
  }

  async function get(path, params) {
    const r = await fetch('api/' + path + query(params), { cache: 'no-store' });
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  }

  function showError(msg) {
    const e = $('error');
    e.hidden = !msg;
    e.textContent = msg || '';
  }

  // chart draws data into the element id with opts, reusing the chart
  // when only the data changed (same series labels).
  function chart(id, opts, data) {
    const target = $(id);
    const old = hone.charts[id];
    const labels = opts.series.map((s) => s.label || '').join('\u0000');
    const width = Math.max(300, target.clientWidth || 800);
    if (old && old.labels === labels && old.u.width === width) {
      old.u.setData(data);
      return old.u;
    }
    if (old) old.u.destroy();
    target.textContent = '';
    opts.width = width;
    opts.height = opts.height || 320;
    const u = new uPlot(opts, data, target);
    hone.charts[id] = { u: u, labels: labels };
    return u;
  }

  function dropChart(id) {
    if (hone.charts[id]) {
      hone.charts[id].u.destroy();
      delete hone.charts[id];
    }
    $(id).textContent = '';
  }

  // ---- summary ----

  function renderSummary(s) {
    state.summary = s;
    $('name').textContent = s.name;
    $('shown').textContent = s.shown;
    document.title = 'hone: ' + s.name;
    showError(s.error ? 'reading the experiment: ' + s.error : '');
    const info = s.info;
    if (!state.metric && info.metric) state.metric = info.metric;
    if (!state.mode) state.mode = info.mode || 'min';
    const ms = $('metric');
    const names = new Set(s.metrics);
    if (state.metric) names.add(state.metric);
    const want = [''].concat(Array.from(names).sort());
    if (ms.dataset.opts !== want.join('\u0000')) {
      ms.textContent = '';
      for (const n of want) ms.append(el('option', { value: n, text: n || '(none)' }));
      ms.dataset.opts = want.join('\u0000');
    }
    ms.value = state.metric;
    $('mode').value = state.mode;
    const xs = $('xattr');
    const xwant = Array.from(new Set([info.time_attr, 'training_iteration', 'time_total_s'].concat(s.metrics.filter((m) => /iter|time|step|epoch/.test(m))))).filter(Boolean);
    if (xs.dataset.opts !== xwant.join('\u0000')) {
      xs.textContent = '';
      for (const n of xwant) xs.append(el('option', { value: n, text: n }));
      xs.dataset.opts = xwant.join('\u0000');
    }
    if (!state.x) state.x = info.time_attr;
    xs.value = state.x;

    const cards = $('summary');
    cards.textContent = '';
    const card = (label, value, id) => cards.append(el('div', { class: 'card', id: id || '' }, el('b', { text: value }), el('span', { text: label })));
    card(info.running ? 'running' : 'not running', info.running ? 'RUNNING' : 'idle', 'c-running');
    card('trials', s.trials, 'c-trials');
    for (const [st, n] of Object.entries(s.counts).sort()) card(st, n);
    card('results', s.results, 'c-results');
    if (s.best) card('best (' + state.metric + ', ' + state.mode + ')', fmt(s.best.value) + ' — ' + s.best.id, 'c-best');
    if (s.front) {
      card('on the Pareto front', s.front.size + ' of ' + s.front.finished + ' finished', 'c-front');
      card('hypervolume' + (s.front.reference_derived ? ' (reference derived)' : ' (reference given)'),
        s.front.hypervolume === null ? 'none' : fmt(s.front.hypervolume), 'c-hv');
    }
    card('elapsed', duration(s.elapsed_s), 'c-elapsed');
    const budget = [];
    if (info.num_samples > 0) budget.push(info.num_samples + ' trials');
    if (info.num_samples === -1) budget.push('trials until stopped');
    if (info.time_budget_s) budget.push('time budget ' + duration(info.time_budget_s));
    if (info.max_iterations) budget.push(info.max_iterations + ' iterations per trial');
    if (info.rungs) budget.push(info.rungs.time_attr + ' up to ' + fmt(info.rungs.max_t));
    if (budget.length) card('budget', budget.join(', '), 'c-budget');
    if (info.scheduler) card('scheduler / searcher', info.scheduler + ' / ' + (info.searcher || 'random'));

    const filt = $('status-filter');
    const statuses = Object.keys(s.counts).sort();
    if (filt.dataset.opts !== statuses.join('\u0000')) {
      filt.textContent = 'status: ';
      for (const st of statuses) {
        const cb = el('input', { type: 'checkbox', value: st });
        cb.checked = state.status.has(st);
        cb.addEventListener('change', () => {
          if (cb.checked) state.status.add(st); else state.status.delete(st);
          state.offset = 0;
          loadTable().catch(fail);
        });
        filt.append(el('label', {}, cb, ' ' + st));
      }
      filt.dataset.opts = statuses.join('\u0000');
    }
  }

  // ---- trial table ----

  async function loadTable() {
    const t = await get('trials', {
      sort: state.sort, desc: state.desc ? '1' : '', offset: state.offset, limit: state.limit,
      status: Array.from(state.status).join(','),
    });
    const best = state.summary && state.summary.best ? state.summary.best.id : '';
    const table = $('trials');
    const head = table.tHead;
    const cols = [['id', 'trial'], ['status', 'status']]
      .concat(t.config_keys.map((k) => ['config/' + k, k]))
      .concat([['value', state.metric || 'metric'], ['iter', 'iter'], ['time_total_s', 'time (s)'], ['results', 'results']]);
    head.textContent = '';
    const hr = el('tr');
    for (const [key, label] of cols) {
      const th = el('th', { class: 'sortable', 'data-sort': key, text: label });
      if (state.sort === key) th.classList.add('sorted');
      if (state.sort === key && state.desc) th.classList.add('desc');
      th.addEventListener('click', () => {
        if (state.sort === key) state.desc = !state.desc; else { state.sort = key; state.desc = false; }
        state.offset = 0;
        loadTable().catch(fail);
      });
      hr.append(th);
    }
    hr.append(el('th', { text: 'error' }));
    head.append(hr);
    const body = table.tBodies[0];
    body.textContent = '';
    for (const r of t.rows) {
      const tr = el('tr', { 'data-id': r.id });
      if (r.id === best) tr.className = 'best';
      if (r.front) tr.classList.add('front');
      if (r.infeasible) tr.classList.add('infeasible');
      tr.append(el('td', {}, el('a', { href: '#/trial/' + encodeURIComponent(r.id), text: r.id })));
      tr.append(el('td', {}, el('span', { class: 'status', text: r.status })));
      for (const k of t.config_keys) tr.append(el('td', { class: typeof r.config[k] === 'number' ? 'num' : '', text: fmt(r.config[k]) }));
      tr.append(el('td', { class: 'num', text: fmt(r.value) }));
      tr.append(el('td', { class: 'num', text: fmt(r.iter) }));
      tr.append(el('td', { class: 'num', text: r.time_total_s === null ? '' : r.time_total_s.toFixed(1) }));
      tr.append(el('td', { class: 'num', text: r.results }));
      tr.append(el('td', { text: r.error || '' }));
      body.append(tr);
    }
    const from = t.matched ? t.offset + 1 : 0;
    $('page-info').textContent = 'trials ' + from + '–' + (t.offset + t.rows.length) + ' of ' + t.matched +
      (t.matched !== t.total ? ' (of ' + t.total + ')' : '');
    $('prev').disabled = t.offset === 0;
    $('next').disabled = t.offset + t.rows.length >= t.matched;
  }

  // ---- learning curves ----

  async function loadCurves() {
    const c = await get('curves', { x: state.x });
    $('curves-note').textContent = !c.metric ? 'Choose a metric to see curves.' :
      c.series.length + ' of ' + c.trials + ' trials' + (c.series.length < c.trials ? ' (the best)' : '') +
      (c.best ? '; best ' + c.best + ' in red' : '') + (c.binned ? '; points binned along ' + c.x : '');
    if (!c.metric || c.series.length === 0) { dropChart('curves'); return; }
    const series = [{ label: c.x }];
    c.series.forEach((s, i) => {
      const best = s.id === c.best;
      series.push({ label: s.id, stroke: best ? BEST : color(i, 0.45), width: best ? 3 : 1, spanGaps: true, points: { show: false } });
    });
    // The best curve drawn last, on top.
    const order = series.map((_, i) => i).filter((i) => i > 0);
    const bi = c.series.findIndex((s) => s.id === c.best);
    if (bi >= 0) { order.splice(order.indexOf(bi + 1), 1); order.push(bi + 1); }
    const data = [c.xs].concat(order.map((i) => c.series[i - 1].ys));
    chart('curves', {
      series: [series[0]].concat(order.map((i) => series[i])),
      scales: { x: { time: false } },
      axes: [{ label: c.x }, { label: c.metric, size: 70 }],
      legend: { show: false },
      cursor: { drag: { x: true, y: true }, focus: { prox: 16 } },
      focus: { alpha: 0.3 },
    }, data);
  }

  // ---- parallel coordinates ----

  async function loadParallel() {
    const p = await get('parallel');
    const tbl = $('parallel-axes');
    tbl.textContent = '';
    if (!p.lines.length || p.axes.length < 2) {
      $('parallel-note').textContent = p.axes.length ? 'Too few varying keys to draw.' : 'No trial has the metric yet.';
      dropChart('parallel');
      return;
    }
    $('parallel-note').textContent = p.lines.length + ' of ' + p.trials + ' trials with a score' +
      (p.lines.length < p.trials ? ' (the best)' : '') + '; darker is better, the best in red. Each axis is scaled to its range below.';
    const k = p.axes.length;
    const xs = p.axes.map((_, i) => i);
    const series = [{ label: 'axis' }];
    const data = [xs];
    const n = p.lines.length;
    // Worst first so the best lines are drawn on top.
    for (let i = n - 1; i >= 0; i--) {
      const ln = p.lines[i];
      const best = ln.id === p.best;
      const shade = n > 1 ? i / (n - 1) : 0;
      series.push({ label: ln.id, stroke: best ? BEST : 'hsla(220,70%,' + (25 + 55 * shade).toFixed(0) + '%,0.6)', width: best ? 3 : 1, spanGaps: true, points: { show: false } });
      data.push(ln.values);
    }
    const names = p.axes.map((a) => a.name);
    chart('parallel', {
      series: series,
      scales: { x: { time: false, range: [-0.15, k - 1 + 0.15] }, y: { range: [-0.05, 1.05] } },
      axes: [
        { splits: () => xs, values: (u, splits) => splits.map((i) => names[i] || ''), grid: { stroke: '#999', width: 1 } },
        { values: (u, splits) => splits.map(() => ''), size: 10, grid: { show: false } },
      ],
      legend: { show: false },
      cursor: { focus: { prox: 10 } },
      focus: { alpha: 0.2 },
    }, data);
    const hr = el('tr', {}, el('th', { text: 'axis' }));
    const lo = el('tr', {}, el('th', { text: 'bottom' }));
    const hi = el('tr', {}, el('th', { text: 'top' }));
    for (const a of p.axes) {
      hr.append(el('th', { text: a.name + (a.kind === 'log' ? ' (log)' : '') }));
      lo.append(el('td', { text: a.kind === 'category' ? a.categories[0] : fmt(a.min) }));
      hi.append(el('td', { text: a.kind === 'category' ? a.categories.join(' < ') : fmt(a.max) }));
    }
    tbl.append(hr, hi, lo);
  }

  // ---- Pareto front ----

  const FRONT = '#d62728', DOMINATED = 'rgba(127,127,127,0.7)', INFEASIBLE = '#ff7f0e', REFERENCE = '#000000';

  // loadFront draws the front of the finished trials: with two
  // objectives one chart, with more one per pair, each trial a point at
  // its values, the front red and joined along the pair's own front,
  // infeasible trials orange, the reference point black.
  async function loadFront() {
    const f = await get('front');
    const sec = $('front-section');
    const box = $('front-charts');
    if (!f) { sec.hidden = true; dropFront(box, new Set()); return; }
    sec.hidden = false;
    const objs = f.objectives;
    const name = (o) => o.metric + ' (' + o.mode + ')';
    $('front-objectives').textContent = objs.map(name).join(', ') + (f.constraints ? ' subject to ' + f.constraints.join(', ') : '');
    const hv = f.size === 0 ? 'no hypervolume yet (no finished trial with every objective)' :
      f.hypervolume === null ? 'no hypervolume (no feasible trial on the front)' :
      'hypervolume ' + fmt(f.hypervolume) + ' against the reference point (' + f.reference.map(fmt).join(', ') + '), ' +
      (f.reference_derived ? 'derived from the front' : 'given');
    $('front-note').textContent = f.size + ' of ' + f.finished + ' finished trials on the front' +
      (f.constraints ? ', ' + f.feasible + ' feasible' : '') +
      (f.incomplete ? ', ' + f.incomplete + ' without every objective left out' : '') + '; ' + hv +
      '. The front\'s trials are shaded in the table of trials, infeasible ones in orange.';
    const keep = new Set();
    for (let i = 0; i < objs.length; i++) {
      for (let j = i + 1; j < objs.length; j++) {
        const id = 'front-' + i + '-' + j;
        keep.add(id);
        if (!$(id)) box.append(el('div', { id: id, class: 'chart front-chart', 'data-x': objs[i].metric, 'data-y': objs[j].metric }));
        frontChart(id, f, i, j);
      }
    }
    dropFront(box, keep);
  }

  // dropFront removes the front charts whose ids keep lacks.
  function dropFront(box, keep) {
    for (const div of Array.from(box.querySelectorAll('.front-chart'))) {
      if (keep.has(div.id)) continue;
      if (hone.charts[div.id]) dropChart(div.id);
      div.remove();
    }
  }

  // pairFront returns the points no other of pts beats on both
  // coordinates (as losses), in the order of x.
  function pairFront(pts, xmax, ymax) {
    const loss = (p) => [xmax ? -p.x : p.x, ymax ? -p.y : p.y];
    return pts.filter((p) => {
      const a = loss(p);
      return !pts.some((q) => {
        const b = loss(q);
        return b[0] <= a[0] && b[1] <= a[1] && (b[0] < a[0] || b[1] < a[1]);
      });
    });
  }

  function frontChart(id, f, i, j) {
    const objs = f.objectives;
    const pts = f.points.map((p) => ({ x: p.values[i], y: p.values[j], id: p.id,
      kind: p.front ? 'front' : (p.feasible ? 'dominated' : 'infeasible') }));
    const line = pairFront(pts.filter((p) => p.kind === 'front'), objs[i].mode === 'max', objs[j].mode === 'max');
    const onLine = new Set(line.map((p) => p.id));
    const all = pts.slice();
    if (f.reference) all.push({ x: f.reference[i], y: f.reference[j], kind: 'reference' });
    all.sort((a, b) => a.x - b.x || a.y - b.y);
    const xs = all.map((p) => p.x);
    const only = (kind) => all.map((p) => (p.kind === kind ? p.y : null));
    const series = [{ label: objs[i].metric }];
    const data = [xs];
    const scatter = (label, stroke, size, kind) => {
      if (!all.some((p) => p.kind === kind)) return;
      series.push({ label: label, stroke: stroke, fill: stroke, paths: () => null, points: { show: true, size: size, fill: stroke, stroke: stroke } });
      data.push(only(kind));
    };
    scatter('dominated', DOMINATED, 6, 'dominated');
    scatter('infeasible', INFEASIBLE, 7, 'infeasible');
    // The pair's front, joined.
    series.push({ label: 'front line', stroke: FRONT, width: 2, spanGaps: true, points: { show: false } });
    data.push(all.map((p) => (p.id !== undefined && onLine.has(p.id) ? p.y : null)));
    scatter('on the front', FRONT, 9, 'front');
    scatter('reference point', REFERENCE, 8, 'reference');
    chart(id, {
      series: series,
      height: 320,
      scales: { x: { time: false } },
      axes: [{ label: objs[i].metric + ' (' + objs[i].mode + ')' }, { label: objs[j].metric + ' (' + objs[j].mode + ')', size: 70 }],
      legend: { show: true, live: false },
      cursor: { drag: { x: true, y: true } },
    }, data);
    // What was drawn, for tests and the curious: the trials by kind.
    hone.fronts[id] = { ids: pts.map((p) => p.id), front: pts.filter((p) => p.kind === 'front').map((p) => p.id),
      points: pts.length, version: state.version };
  }

  // ---- rungs ----

  async function loadRungs() {
    const r = await get('rungs');
    const sec = $('rungs-section');
    const box = $('rungs-brackets');
    if (!r) { sec.hidden = true; dropChart('rungs'); dropBrackets(box, 0); return; }
    sec.hidden = false;
    const plan = r.plan;
    $('rungs-plan').textContent = plan.time_attr + ' milestones ' + plan.milestones.map(fmt).join(', ');
    $('rungs-note').textContent = r.brackets_note ? 'Shown for all brackets together: ' + r.brackets_note + '.' : '';
    $('rungs-note').hidden = !r.brackets_note;
    const perBracket = r.brackets && r.brackets.length > 0;
    $('rungs').hidden = perBracket;
    $('rungs-table').hidden = perBracket;
    if (perBracket) {
      dropChart('rungs');
      $('rungs-table').textContent = '';
      dropBrackets(box, r.brackets.length);
      r.brackets.forEach((b, i) => {
        let div = $('rungs-b' + i);
        if (!div) {
          div = el('div', { class: 'bracket', 'data-bracket': i },
            el('h3', { class: 'bracket-label' }),
            el('div', { id: 'rungs-b' + i, class: 'chart' }),
            el('table', { id: 'rungs-b' + i + '-table', class: 'grid' }),
            el('details', {}, el('summary', { class: 'bracket-members-label' }),
              el('table', { id: 'rungs-b' + i + '-trials', class: 'grid small' })));
          box.append(div);
          div = $('rungs-b' + i);
        }
        div.parentNode.querySelector('.bracket-label').textContent = b.label + ': ' + b.trials + (b.trials === 1 ? ' trial' : ' trials') +
          (b.rungs.length === 1 ? ', milestone ' : ', milestones ') + b.rungs.map((g) => fmt(g.milestone)).join(', ');
        div.parentNode.querySelector('.bracket-members-label').textContent = 'its trials and what became of each at each rung' +
          (b.members.length > MAX_BRACKET_ROWS ? ' (the first ' + MAX_BRACKET_ROWS + ' of ' + b.members.length + ')' : '');
        rungTable($('rungs-b' + i + '-table'), b.rungs, plan.time_attr, b.label);
        memberTable($('rungs-b' + i + '-trials'), b, plan.time_attr);
        if (i < MAX_BRACKET_CHARTS) rungChart('rungs-b' + i, b.rungs, plan.time_attr, r.metric);
      });
      if (r.brackets.length > MAX_BRACKET_CHARTS) {
        $('rungs-note').hidden = false;
        $('rungs-note').textContent = 'Charts are drawn for the first ' + MAX_BRACKET_CHARTS + ' of ' + r.brackets.length +
          ' brackets; the tables cover them all.';
      }
      return;
    }
    dropBrackets(box, 0);
    rungTable($('rungs-table'), r.rungs, plan.time_attr, '');
    rungChart('rungs', r.rungs, plan.time_attr, r.metric);
  }

  // MAX_BRACKET_CHARTS bounds the rung charts drawn, one per bracket, so
  // that HyperBand's many bands keep the page quick.
  const MAX_BRACKET_CHARTS = 24;

  // MAX_BRACKET_ROWS bounds the rows of a bracket's table of trials.
  const MAX_BRACKET_ROWS = 200;

  // memberTable fills tbl with a row per trial of bracket b, in the order
  // the bracket took them: at each rung, its metric and outcome there.
  function memberTable(tbl, b, attr) {
    tbl.textContent = '';
    const hr = el('tr', {}, el('th', { text: 'trial' }));
    for (const g of b.rungs) hr.append(el('th', { text: attr + ' ≥ ' + fmt(g.milestone) }));
    tbl.append(hr);
    const at = b.rungs.map((g) => new Map(g.trials.map((t) => [t.id, t])));
    for (const id of b.members.slice(0, MAX_BRACKET_ROWS)) {
      const tr = el('tr', { 'data-id': id }, el('td', {}, el('a', { href: '#/trial/' + encodeURIComponent(id), text: id })));
      at.forEach((m, k) => {
        const t = m.get(id);
        if (!t) {
          // Not reached, or (beyond the 1,000 listed) not among the best.
          tr.append(el('td', { text: b.rungs[k].reached > b.rungs[k].trials.length ? '…' : '' }));
          return;
        }
        tr.append(el('td', { 'data-outcome': t.outcome }, fmt(t.value) + ' ', el('span', { class: 'status', text: t.outcome })));
      });
      tbl.append(tr);
    }
  }

  // dropBrackets removes the per-bracket charts from the n-th on.
  function dropBrackets(box, n) {
    for (const div of Array.from(box.querySelectorAll('.bracket'))) {
      const i = Number(div.dataset.bracket);
      if (i < n) continue;
      if (hone.charts['rungs-b' + i]) dropChart('rungs-b' + i);
      div.remove();
    }
  }

  // rungTable fills tbl with the counts of each outcome at each rung.
  function rungTable(tbl, rungs, attr, bracket) {
    const outcomes = Object.keys(OUTCOME_COLORS);
    tbl.textContent = '';
    const hr = el('tr', {}, el('th', { text: attr + ' ≥' }), el('th', { text: 'reached' }));
    for (const o of outcomes) hr.append(el('th', { text: o }));
    tbl.append(hr);
    for (const g of rungs) {
      const tr = el('tr', { 'data-milestone': g.milestone, 'data-bracket': bracket }, el('td', { class: 'num', text: fmt(g.milestone) }), el('td', { class: 'num', text: g.reached }));
      for (const o of outcomes) tr.append(el('td', { class: 'num', text: g.counts[o] || '' }));
      tbl.append(tr);
    }
  }

  // rungChart draws the trials at each rung into the element id: a
  // column per rung, the best on the left, coloured by outcome.
  function rungChart(id, rungs, attr, metric) {
    const outcomes = Object.keys(OUTCOME_COLORS);
    const pts = [];
    rungs.forEach((g, ri) => {
      const n = g.trials.length;
      g.trials.forEach((t, j) => {
        if (t.value === null) return;
        pts.push({ x: ri - 0.35 + (0.7 * (j + 1)) / (n + 1), y: t.value, o: t.outcome });
      });
    });
    pts.sort((a, b) => a.x - b.x);
    if (!pts.length) { dropChart(id); return; }
    const series = [{ label: 'rung' }];
    const data = [pts.map((p) => p.x)];
    for (const o of outcomes) {
      if (!pts.some((p) => p.o === o)) continue;
      series.push({ label: o, stroke: OUTCOME_COLORS[o], fill: OUTCOME_COLORS[o], paths: () => null, points: { show: true, size: 6, fill: OUTCOME_COLORS[o] } });
      data.push(pts.map((p) => (p.o === o ? p.y : null)));
    }
    const ms = rungs.map((g) => g.milestone);
    chart(id, {
      series: series,
      height: 240,
      scales: { x: { time: false, range: [-0.5, ms.length - 0.5] } },
      axes: [
        { label: attr + ' milestone', splits: () => ms.map((_, i) => i), values: (u, splits) => splits.map((i) => fmt(ms[i])) },
        { label: metric, size: 70 },
      ],
      legend: { show: true, live: false },
    }, data);
  }

  // ---- PBT lineage ----

  async function loadLineage() {
    const l = await get('lineage');
    const sec = $('lineage-section');
    if (!l) { sec.hidden = true; dropChart('lineage-chart'); return; }
    sec.hidden = false;
    const tbl = $('lineage-table');
    tbl.textContent = '';
    tbl.append(el('tr', {}, el('th', { text: 'iteration' }), el('th', { text: 'trial' }), el('th', { text: 'exploited' }),
      el('th', { text: 'at its iteration' }), el('th', { text: 'hyperparameters' })));
    for (const x of l.exploits) {
      const link = (id, tag) => id ? el('a', { href: '#/trial/' + encodeURIComponent(id), text: id }) : document.createTextNode(tag);
      tbl.append(el('tr', { class: 'exploit' },
        el('td', { class: 'num', text: x.iteration }),
        el('td', {}, link(x.target_id, x.target)),
        el('td', {}, link(x.donor_id, x.donor)),
        el('td', { class: 'num', text: x.donor_iteration }),
        el('td', { text: x.changes.map((c) => c.key + ': ' + fmt(c.from) + ' → ' + fmt(c.to)).join(', ') })));
    }
    const ks = $('lineage-key');
    if (ks.dataset.opts !== l.keys.join('\u0000')) {
      ks.textContent = '';
      for (const k of l.keys) ks.append(el('option', { value: k, text: k }));
      ks.dataset.opts = l.keys.join('\u0000');
    }
    if (!l.keys.includes(state.lineageKey)) state.lineageKey = l.keys[0] || '';
    ks.value = state.lineageKey;
    const key = state.lineageKey;
    const xsSet = new Set();
    for (const s of l.schedules) for (const st of s.steps) xsSet.add(st.from);
    for (const x of l.exploits) xsSet.add(x.iteration);
    const xs = Array.from(xsSet).sort((a, b) => a - b);
    const series = [{ label: 'iteration' }];
    const data = [xs];
    l.schedules.forEach((s, i) => {
      const ys = xs.map((x) => {
        let v = null;
        for (const st of s.steps) if (st.from <= x && typeof st.values[key] === 'number') v = st.values[key];
        return v;
      });
      series.push({ label: s.id, stroke: color(i, 0.9), width: 2, paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } });
      data.push(ys);
    });
    if (!key || xs.length === 0) { dropChart('lineage-chart'); return; }
    chart('lineage-chart', {
      series: series,
      scales: { x: { time: false } },
      axes: [{ label: 'training iteration' }, { label: key, size: 70 }],
      legend: { show: true, live: false },
    }, data);
  }

  // ---- one trial ----

  async function loadTrial(id) {
    const t = await get('trial', { id: id });
    $('t-id').textContent = t.row.id;
    $('t-status').textContent = t.row.status;
    $('t-tag').textContent = t.tag + ' — ' + t.dir;
    $('t-config').textContent = JSON.stringify(t.config, null, 2);
    const cps = $('t-checkpoints');
    cps.textContent = '';
    if (!t.checkpoints.length) cps.append(el('li', { class: 'muted', text: 'none kept' }));
    for (const c of t.checkpoints) {
      const a = el('a', { href: '#', text: c.split('/').pop() });
      a.addEventListener('click', (ev) => {
        ev.preventDefault();
        get('ls', { path: c }).then((entries) => {
          const pre = $('t-listing');
          pre.hidden = false;
          pre.textContent = c + '\n' + entries.map((e) => (e.dir ? e.name + '/' : e.name + '  ' + e.size + ' bytes')).join('\n');
        }).catch(fail);
      });
      cps.append(el('li', {}, a));
    }
    const names = new Set(t.files.map((f) => f.name));
    const tail = async (name, target) => {
      if (!names.has(name)) { $(target).textContent = '(none)'; return; }
      const r = await fetch('api/file?' + new URLSearchParams({ path: t.dir + '/' + name, tail: 16384 }), { cache: 'no-store' });
      $(target).textContent = r.ok ? (await r.text()) || '(empty)' : '(' + r.status + ')';
    };
    await Promise.all([tail('error.txt', 't-error'), tail('stdout.log', 't-stdout'), tail('stderr.log', 't-stderr')]);
    $('t-rows').textContent = t.rows > t.results.length ? 'the last ' + t.results.length + ' of ' + t.rows : t.rows + ' rows';
    const tbl = $('t-results');
    tbl.textContent = '';
    const cols = t.columns;
    tbl.append(el('tr', {}, ...cols.map((c) => el('th', { text: c }))));
    for (const r of t.results.slice(-100).reverse()) {
      tbl.append(el('tr', {}, ...cols.map((c) => el('td', { class: typeof r[c] === 'number' ? 'num' : '', text: fmt(r[c]) }))));
    }
    const x = state.x || (state.summary && state.summary.info.time_attr) || 'training_iteration';
    const pts = t.results.filter((r) => typeof r[x] === 'number' && typeof r[state.metric] === 'number');
    if (state.metric && pts.length) {
      chart('t-chart', {
        series: [{ label: x }, { label: state.metric, stroke: BEST, width: 2, points: { show: pts.length < 50 } }],
        scales: { x: { time: false } },
        axes: [{ label: x }, { label: state.metric, size: 70 }],
        legend: { show: false },
      }, [pts.map((r) => r[x]), pts.map((r) => r[state.metric])]);
    } else {
      dropChart('t-chart');
    }
    const rsec = $('t-rungs-section');
    rsec.hidden = !t.rungs.length;
    const rt = $('t-rungs');
    rt.textContent = '';
    const attr = state.summary && state.summary.info.rungs ? state.summary.info.rungs.time_attr : 'time';
    const hasBracket = t.rungs.some((g) => g.bracket);
    const head = el('tr', {});
    if (hasBracket) head.append(el('th', { text: 'bracket' }));
    head.append(el('th', { text: attr + ' ≥' }), el('th', { text: state.metric || 'metric' }), el('th', { text: 'outcome' }));
    rt.append(head);
    for (const g of t.rungs) {
      const tr = el('tr', { 'data-outcome': g.outcome, 'data-bracket': g.bracket || '' });
      if (hasBracket) tr.append(el('td', { text: g.bracket || '' }));
      tr.append(el('td', { class: 'num', text: fmt(g.milestone) }),
        el('td', { class: 'num', text: fmt(g.value) }), el('td', {}, el('span', { class: 'status', text: g.outcome })));
      rt.append(tr);
    }
    const lsec = $('t-lineage-section');
    lsec.hidden = !t.lineage.length;
    const lt = $('t-lineage');
    lt.textContent = '';
    lt.append(el('tr', {}, el('th', { text: 'iteration' }), el('th', { text: 'trial' }), el('th', { text: 'exploited' }), el('th', { text: 'config after' })));
    for (const x of t.lineage) {
      lt.append(el('tr', {}, el('td', { text: x.TargetIteration }), el('td', { text: x.TargetID || x.Target }),
        el('td', { text: x.DonorID || x.Donor }), el('td', { text: JSON.stringify(x.Config) })));
    }
  }

  // ---- routing and refreshing ----

  function route() {
    const m = location.hash.match(/^#\/trial\/(.+)$/);
    const trial = m ? decodeURIComponent(m[1]) : '';
    $('overview').hidden = !!trial;
    $('trial-page').hidden = !trial;
    if (trial !== state.trial) {
      dropChart('t-chart');
      $('t-listing').hidden = true;
      state.trial = trial;
    }
    return trial;
  }

  // A refresh starts at most every MIN_GAP ms: a running experiment
  // announces news every quarter second, and a page of a large one need
  // not fetch that often to stay within a second of it.
  const MIN_GAP = 500;
  let busy = false, again = false, last = 0, timer = null;
  function refresh() {
    if (busy) { again = true; return; }
    const wait = last + MIN_GAP - Date.now();
    if (wait > 0) {
      if (!timer) timer = setTimeout(() => { timer = null; refresh(); }, wait);
      return;
    }
    busy = true;
    last = Date.now();
    load().catch(fail).finally(() => {
      busy = false;
      if (again) { again = false; refresh(); }
    });
  }

  async function load() {
    const v = state.version;
    const s = await get('summary');
    if (s.waiting) {
      $('shown').textContent = s.shown;
      $('summary').textContent = 'Waiting for the experiment to start…';
      return;
    }
    renderSummary(s);
    const trial = route();
    if (trial) {
      await loadTrial(trial);
    } else {
      await Promise.all([loadTable(), loadFront(), loadCurves(), loadParallel(), loadRungs(), loadLineage()]);
    }
    hone.shown = v;
    document.body.dataset.shown = String(v);
  }

  function fail(e) {
    showError(String(e && e.message ? e.message : e));
  }

  function listen() {
    const es = new EventSource('api/events');
    es.addEventListener('version', (ev) => {
      $('live').className = 'live on';
      const v = Number(ev.data);
      if (v !== state.version) {
        state.version = v;
        refresh();
      }
    });
    es.onerror = () => { $('live').className = 'live off'; };
  }

  $('metric').addEventListener('change', (e) => { state.metric = e.target.value; refresh(); });
  $('mode').addEventListener('change', (e) => { state.mode = e.target.value; refresh(); });
  $('xattr').addEventListener('change', (e) => { state.x = e.target.value; loadCurves().catch(fail); });
  $('lineage-key').addEventListener('change', (e) => { state.lineageKey = e.target.value; loadLineage().catch(fail); });
  $('prev').addEventListener('click', () => { state.offset = Math.max(0, state.offset - state.limit); loadTable().catch(fail); });
  $('next').addEventListener('click', () => { state.offset += state.limit; loadTable().catch(fail); });
  $('limit').addEventListener('change', (e) => { state.limit = Number(e.target.value); state.offset = 0; loadTable().catch(fail); });
  window.addEventListener('hashchange', () => { refresh(); });
  // Charts take the width of the page when drawn: draw them again after
  // the window changed size.
  let resizing = null;
  window.addEventListener('resize', () => {
    clearTimeout(resizing);
    resizing = setTimeout(refresh, 200);
  });
  listen();
})();
