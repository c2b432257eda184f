// The workloadmap web page: the daemon's HTTP/JSON API (docs/http-api.md)
// drawn as a workloads table, a workload page and a definitions page.
//
// Plain JavaScript, no build step, no framework, nothing fetched from
// elsewhere. Every URL is relative (`api/v1/...`), so the page works behind a
// path prefix; routes live in the hash (#/, #/workload/..., #/definitions).
// Every string from the cluster reaches the DOM through textContent or a text
// node, never through innerHTML.
//
// Sections: helpers, api and auth, store (list+watch), views (workloads,
// workload, definitions), router.
'use strict';

// ---------------------------------------------------------------- helpers

const $ = (id) => document.getElementById(id);
const enc = encodeURIComponent;

// h('td', {class: 'name', 'data-x': v}, child, 'text', ...) builds an element.
// Strings become text nodes, so names from the cluster are never parsed as HTML.
function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const k in props) {
      const v = props[k];
      if (v == null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children.flat()) {
    if (c != null && c !== false) el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// 64-bit integers arrive as JSON strings ("12"); 32-bit ones as numbers.
function num(v) {
  const n = Number(v);
  return Number.isFinite(n) ? n : 0;
}

// nvidia.com/gpu, amd.com/gpu, ...: every resource whose name ends in "/gpu",
// as the server's summary counts them.
function gpusOf(resources) {
  const q = resources && resources.quantities;
  let n = 0;
  if (q) for (const k in q) if (k.endsWith('/gpu')) n += num(q[k]);
  return n;
}

// kubectl-style ages: 45s, 5m, 3h, 2d, 1y.
function fmtAge(seconds) {
  if (!Number.isFinite(seconds)) return '';
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return s + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm';
  if (s < 86400) return Math.floor(s / 3600) + 'h';
  if (s < 365 * 86400) return Math.floor(s / 86400) + 'd';
  return Math.floor(s / (365 * 86400)) + 'y';
}

// Requests as the server sends them: cpu in millicores, memory-like
// resources in bytes, everything else a count.
function fmtQuantity(name, value) {
  const v = num(value);
  if (name === 'cpu') return String(Math.round(v) / 1000);
  if (name === 'memory' || name === 'ephemeral-storage' || name.startsWith('hugepages-')) {
    const units = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
    let x = v;
    let i = 0;
    while (x >= 1024 && i < units.length - 1) { x /= 1024; i++; }
    return (Number.isInteger(x) ? x : x.toFixed(1)) + units[i];
  }
  return String(value);
}

function fmtResources(resources) {
  const q = (resources && resources.quantities) || {};
  const names = Object.keys(q).sort((a, b) => (b.endsWith('/gpu') - a.endsWith('/gpu')) || (a < b ? -1 : 1));
  return names.map((k) => k + ' ' + fmtQuantity(k, q[k])).join(' · ');
}

const sleep = (ms, signal) => new Promise((resolve, reject) => {
  const t = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(t); reject(signal.reason); }, {once: true});
});

const isAbort = (e) => e && e.name === 'AbortError';

// Status chips. Severity decides their order and the table's default sort:
// failures first, then unknown states, pending, suspended, running, and
// finished work last. Known names first, then a guess from the word.
const SEVERITY_NAMES = {
  Failed: 0, Error: 0, Degraded: 0, CrashLoopBackOff: 0,
  Undefined: 1, Unknown: 1,
  Pending: 2, Initializing: 2, Resuming: 2,
  Suspending: 3, Suspended: 3,
  Running: 4,
  Completed: 5, Succeeded: 5,
};
const SEVERITY_WORDS = [
  [/fail|error|degrad|crash|backoff|evict|oom|abort/i, 0],
  [/unknown|undefined|not ?ready|unready|unhealthy|unavailable|lost/i, 1],
  [/pend|init|creat|start|resum|restart|queue|schedul|provision|wait|scal/i, 2],
  [/suspend|paus|stop|terminat/i, 3],
  [/run|active|ready|serv|healthy|available/i, 4],
  [/complet|succe|finish|done/i, 5],
];
const SEVERITY_CLASS = ['danger', 'warn', 'pending', 'paused', 'running', 'done'];
const severityCache = new Map();
function severity(status) {
  let r = severityCache.get(status);
  if (r === undefined) {
    r = SEVERITY_NAMES[status];
    if (r === undefined) {
      const hit = SEVERITY_WORDS.find(([re]) => re.test(status));
      r = hit ? hit[1] : 2.5; // an unrecognized word: between pending and suspended
    }
    severityCache.set(status, r);
  }
  return r;
}
const severityClass = (rank) => 'chip chip-' + (Number.isInteger(rank) ? SEVERITY_CLASS[rank] : 'other');

// The chips of a workload: the phase first (when the definition maps one),
// then the other matched statuses, most severe first.
function statusChips(phase, statuses) {
  const rest = [...new Set(statuses.filter((s) => s && s !== phase))]
    .sort((a, b) => severity(a) - severity(b));
  const chips = rest.map((s) => ({text: s, rank: severity(s), phase: false}));
  if (phase) chips.unshift({text: phase, rank: severity(phase), phase: true});
  return chips;
}

function chipNodes(chips) {
  return chips.map((c) => h('span', {
    class: severityClass(c.rank) + (c.phase ? ' chip-phase' : ''),
    title: c.title || (c.phase ? 'phase' : 'matched status'),
  }, c.text));
}

// ---------------------------------------------------------------- api and auth

const TOKEN_KEY = 'workloadmap.token';

// Where sessionStorage is refused (some privacy modes), the tab's memory.
let memoryToken = '';

function storedToken() {
  try { return sessionStorage.getItem(TOKEN_KEY) || memoryToken; } catch { return memoryToken; }
}

class ApiError extends Error {
  constructor(httpStatus, status, message) {
    super(message);
    this.httpStatus = httpStatus; // 0: no answer
    this.status = status; // the gRPC code's name, "PERMISSION_DENIED"
  }
}

function authHeaders(extra) {
  const headers = Object.assign({Accept: 'application/json'}, extra);
  const token = storedToken();
  if (token) headers.Authorization = 'Bearer ' + token;
  return headers;
}

// The server's {"error": {...}} body, or the HTTP status when a proxy
// answered with something else.
async function errorFrom(res) {
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  const e = body && body.error;
  const message = (e && e.message) || ('HTTP ' + res.status + ' ' + res.statusText).trim();
  const err = new ApiError(res.status, (e && e.status) || '', message);
  if (res.status === 401) auth.required(err);
  return err;
}

async function request(path, signal, headers) {
  let res;
  try {
    res = await fetch(path, {headers: authHeaders(headers), signal, cache: 'no-store'});
  } catch (e) {
    if (isAbort(e)) throw e;
    throw new ApiError(0, 'UNAVAILABLE', 'cannot reach the daemon (' + e.message + ')');
  }
  if (!res.ok) throw await errorFrom(res);
  return res;
}

async function apiGet(path, signal) {
  return (await request(path, signal)).json();
}

// Shown when the API answers 401: a token pasted here lives in this tab's
// sessionStorage only, and goes as a bearer token on every call.
const auth = {
  required(err) {
    const form = $('signin');
    const wasHidden = form.hidden;
    form.hidden = false;
    setMessage('auth', storedToken()
      ? 'The token was not accepted (' + err.message + '). Paste another one.'
      : 'Sign in: this daemon needs a bearer token (' + err.message + ').', 'error');
    if (wasHidden && !document.activeElement.closest('input, select, textarea')) $('token').focus();
  },
  init() {
    $('signin').addEventListener('submit', (e) => {
      e.preventDefault();
      const token = $('token').value.trim();
      if (!token) return;
      try { sessionStorage.setItem(TOKEN_KEY, token); } catch { memoryToken = token; }
      $('token').value = '';
      $('signin').hidden = true;
      setMessage('auth', '');
      auth.update();
      restart();
    });
    $('signout').addEventListener('click', () => {
      memoryToken = '';
      try { sessionStorage.removeItem(TOKEN_KEY); } catch { /* nothing stored there */ }
      // What this token could see is not for whoever signs in next.
      store.rows = new Map();
      store.loaded = false;
      store.filtered = false;
      changed('reset', '');
      auth.update();
      restart();
    });
    auth.update();
  },
  update() { $('signout').hidden = !storedToken(); },
};

// #message holds one line per slot; a slot is cleared with ''. Slots marked
// workloads-only show only on the table's view.
const messages = new Map();
const TABLE_SLOTS = new Set(['filtered', 'empty']);
function setMessage(slot, text, level) {
  if (text) messages.set(slot, {text, level: level || 'info'});
  else messages.delete(slot);
  renderMessages();
}
function renderMessages() {
  const onTable = router.current === 'workloads';
  const lines = [];
  for (const [slot, m] of messages) {
    if (TABLE_SLOTS.has(slot) && !onTable) continue;
    lines.push(h('p', {class: 'msg msg-' + m.level, 'data-slot': slot}, m.text));
  }
  $('message').replaceChildren(...lines);
}

// ---------------------------------------------------------------- store (list+watch)
//
// As client-go's informers: list every page, remember the list's revision,
// then watch the event stream from it and apply each change. The table reads
// `store.rows`; views subscribe with store.listen(fn(type, key)).

const store = {
  rows: new Map(), // key -> row
  loaded: false, // a full list has arrived
  filtered: false, // the last list held only the namespaces the caller may list
  skewMs: null, // our clock minus the server's, from the list's ageSeconds
  ctrl: null,
  listeners: new Set(),
  listen(fn) { this.listeners.add(fn); },
};

function rowKey(ref) {
  return [ref.cluster || '', ref.namespace || '', ref.group || '', ref.kind || '', ref.name || ''].join('/');
}

function workloadHash(ref) {
  return '#/workload/' + [ref.cluster, ref.namespace, ref.group, ref.kind, ref.name].map((p) => enc(p || '')).join('/');
}

// What the table shows of a workload, computed once per change.
function makeRow(ref, f) {
  const chips = f.error
    ? [{text: 'Error', rank: 0, phase: true, title: f.error}]
    : statusChips(f.phase, f.statuses);
  const namespace = ref.namespace || '';
  const kind = ref.kind || '';
  const name = ref.name || '';
  return {
    key: rowKey(ref),
    ref,
    cluster: ref.cluster || '',
    namespace, kind, name,
    group: ref.group || '',
    phase: f.phase,
    statuses: f.statuses,
    chips,
    primary: chips.length ? chips[0].text : '',
    rank: chips.length ? Math.min(...chips.map((c) => c.rank)) : 2.5,
    components: f.components,
    ready: f.components.reduce((n, c) => n + c.ready, 0),
    desired: f.components.reduce((n, c) => n + c.desired, 0),
    gpus: f.gpus,
    created: f.created,
    error: f.error,
    // Computed once: sorting and searching 10,000 rows compare plain strings.
    nsKey: sortKey(namespace),
    kindKey: sortKey(kind),
    nameKey: sortKey(name),
    search: name.toLowerCase() + '\n' + namespace.toLowerCase() + '\n' + kind.toLowerCase(),
  };
}

// Lowercased, digit runs padded, so that plain string order is natural
// order: job-9 before job-10.
function sortKey(s) {
  return s.toLowerCase().replace(/\d+/g, (d) => d.padStart(12, '0'));
}

function parseTime(ts) {
  const t = ts ? Date.parse(ts) : NaN;
  return Number.isFinite(t) ? t : null;
}

// A ListWorkloads row (WorkloadSummary).
function rowFromSummary(s) {
  const created = parseTime(s.creationTimestamp);
  if (store.skewMs === null && created !== null && s.ageSeconds != null) {
    store.skewMs = Date.now() - created - num(s.ageSeconds) * 1000;
  }
  return makeRow(s.ref || {}, {
    phase: s.phase || '',
    statuses: s.matchedStatuses || [],
    components: (s.components || []).map((c) => ({
      name: c.name || '',
      instanceId: c.instanceId || '',
      ready: num(c.replicas && c.replicas.ready),
      desired: num(c.replicas && c.replicas.desired),
      error: c.error || '',
    })),
    gpus: num(s.gpus),
    created,
    error: s.error || '',
  });
}

// One row per (component, instance) of every pod-bearing component, summed
// over the parent's instances, in tree order; one error row per component
// that could not be resolved. The same walk as the server's summary
// (CollectComponents in server/index/workload_index.cc).
function collectComponents(component, out) {
  const err = component.error;
  if (err && (err.message || err.fieldPath)) {
    if (!out.some((s) => s.name === component.name && s.error)) {
      out.push({name: component.name || '', instanceId: '', ready: 0, desired: 0,
        error: (err.fieldPath || '') + ': ' + (err.message || '')});
    }
    return;
  }
  for (const inst of component.instances || []) {
    if (component.hasPodDefinition) {
      const id = inst.id || '';
      let s = out.find((x) => x.name === component.name && x.instanceId === id && !x.error);
      if (!s) {
        s = {name: component.name || '', instanceId: id, ready: 0, desired: 0, error: ''};
        out.push(s);
      }
      s.ready += num(inst.replicas && inst.replicas.ready);
      s.desired += num(inst.replicas && inst.replicas.desired);
    }
    for (const child of inst.children || []) collectComponents(child, out);
  }
}

// An event's ResolvedWorkload. A workload the daemon could not resolve comes
// with its ref and the error as its only warning, and no definition.
function rowFromWorkload(w, previous) {
  const resolved = Boolean(w.definition && w.definition.name);
  const components = [];
  if (resolved && w.root) collectComponents(w.root, components);
  const status = w.status || {};
  let created = parseTime(w.creationTimestamp);
  if (created === null && previous) created = previous.created;
  return makeRow(w.ref || {}, {
    phase: status.phase || '',
    statuses: status.matchedStatuses || [],
    components,
    gpus: gpusOf(w.resources),
    created,
    error: resolved ? '' : ((w.warnings || []).join('; ') || 'could not be resolved'),
  });
}

function ageOf(row) {
  if (row.created === null) return NaN;
  return (Date.now() - (store.skewMs || 0) - row.created) / 1000;
}

function changed(type, key) {
  workloadsView.invalidate();
  for (const fn of store.listeners) fn(type, key);
}

function setStream(state, detail) {
  document.body.dataset.stream = state;
  const text = {live: 'Live', connecting: 'Connecting…', offline: 'Offline'}[state];
  $('stream-text').textContent = detail ? text + ' · ' + detail : text;
}

// (Re)starts list+watch, e.g. with a new token, and refetches the view.
function restart() {
  startSync();
  router.reload();
}

function startSync() {
  if (store.ctrl) store.ctrl.abort();
  store.ctrl = new AbortController();
  const signal = store.ctrl.signal;
  setMessage('list', '');
  setMessage('stream', '');
  syncLoop(signal).catch((e) => {
    if (!isAbort(e)) setMessage('list', 'Unexpected error: ' + e.message, 'error');
  });
}

// List, then watch; list again when the stream says its revision is too old.
async function syncLoop(signal) {
  let backoff = 1000;
  for (;;) {
    let revision;
    try {
      revision = await listAll(signal);
      setMessage('list', '');
    } catch (e) {
      if (isAbort(e)) throw e;
      if (e.httpStatus === 401) { // the sign-in form restarts us
        setStream('offline', 'sign-in needed');
        return;
      }
      setStream('offline', 'list failed');
      setMessage('list', 'Could not list workloads: ' + e.message + ' (retrying in ' + backoff / 1000 + ' s)', 'error');
      await sleep(backoff, signal);
      backoff = Math.min(backoff * 2, 30000);
      continue;
    }
    const outcome = await watch(revision, signal);
    if (outcome === 'stop') return;
    // 'relist': the stream's revision fell out of the daemon's history. If
    // that happens again before any SYNCED, wait, so we never spin.
    if (outcome === 'relist-now') backoff = 1000;
    else {
      await sleep(backoff, signal);
      backoff = Math.min(backoff * 2, 30000);
    }
  }
}

async function listAll(signal) {
  setStream('connecting', 'listing');
  // The first list fills the table page by page; a re-list keeps the old
  // rows on screen and swaps them at the end, as a reflector's Replace.
  const progressive = store.rows.size === 0;
  const rows = progressive ? store.rows : new Map();
  let token = '';
  let revision = '';
  let filtered = false;
  do {
    const page = await apiGet('api/v1/workloads?pageSize=500' + (token ? '&pageToken=' + enc(token) : ''), signal);
    // The first page's revision: any later change comes through the stream.
    if (!revision) revision = String(page.revision || '0');
    filtered = filtered || Boolean(page.filtered);
    for (const s of page.workloads || []) {
      const row = rowFromSummary(s);
      rows.set(row.key, row);
    }
    if (progressive) changed('page', '');
    token = page.nextPageToken || '';
  } while (token);
  store.rows = rows;
  store.loaded = true;
  store.filtered = filtered;
  showFiltered(filtered);
  // A re-list may have missed changes of any workload: views re-fetch theirs.
  changed(progressive ? 'loaded' : 'reset', '');
  return revision;
}

function showFiltered(filtered) {
  setMessage('filtered', filtered
    ? 'You see only the namespaces where you may list workloads; others may hold more.'
    : '');
}

// Watches from `revision`, reconnecting with Last-Event-ID after a drop.
// Returns 'relist-now' / 'relist' when the revision is too old, 'stop' on 401.
async function watch(revision, signal) {
  let lastId = revision;
  let backoff = 1000;
  let resumed = false;
  let synced = false;
  for (;;) {
    setStream('connecting');
    try {
      await streamOnce(lastId, resumed, signal, {
        id(id) { lastId = id; },
        synced() { synced = true; backoff = 1000; },
      });
      setMessage('stream', 'Live updates: the stream ended; resuming.', 'warn');
    } catch (e) {
      if (isAbort(e)) throw e;
      if (e.httpStatus === 401) { setStream('offline', 'signed out'); return 'stop'; }
      // RESOURCE_EXHAUSTED: the revision is too old (or we fell behind);
      // OUT_OF_RANGE: older than the daemon's history. Either way: list again.
      if (e.httpStatus === 429 || e.status === 'RESOURCE_EXHAUSTED' || e.status === 'OUT_OF_RANGE') {
        setMessage('stream', '');
        return synced ? 'relist-now' : 'relist';
      }
      setMessage('stream', 'Live updates interrupted: ' + e.message + '. Retrying in ' + backoff / 1000 + ' s.', 'warn');
    }
    resumed = true;
    setStream('offline', 'retrying in ' + backoff / 1000 + ' s');
    await sleep(backoff, signal);
    backoff = Math.min(backoff * 2, 30000);
  }
}

// One connection to the event stream, read with fetch (EventSource cannot
// send an Authorization header). Resolves when the server ends the stream.
async function streamOnce(from, resumed, signal, on) {
  const headers = {Accept: 'text/event-stream'};
  if (resumed) headers['Last-Event-ID'] = from;
  const res = await request('api/v1/events?resumeRevision=' + enc(from), signal, headers);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let ev = {id: '', type: '', data: []};
  try {
    for (;;) {
      const {value, done} = await reader.read();
      if (done) return;
      buffer += value;
      let start = 0;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n', start)) {
        let line = buffer.slice(start, nl);
        start = nl + 1;
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') { // a blank line ends an event
          if (ev.data.length || ev.type) handleEvent(ev, on);
          ev = {id: '', type: '', data: []};
          continue;
        }
        if (line.startsWith(':')) continue; // ": keepalive"
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let text = colon < 0 ? '' : line.slice(colon + 1);
        if (text.startsWith(' ')) text = text.slice(1);
        if (field === 'data') ev.data.push(text);
        else if (field === 'event') ev.type = text;
        else if (field === 'id') ev.id = text;
      }
      buffer = buffer.slice(start);
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

function handleEvent(ev, on) {
  let data = null;
  try { data = ev.data.length ? JSON.parse(ev.data.join('\n')) : null; } catch { data = null; }
  const type = ev.type || (data && data.type) || '';
  if (type === 'error') {
    const e = (data && data.error) || {};
    const err = new ApiError(num(e.code), e.status || '', e.message || 'the event stream failed');
    if (err.httpStatus === 401) auth.required(err);
    throw err;
  }
  if (type === 'ADDED' || type === 'MODIFIED') {
    const w = data && data.workload;
    if (w && w.ref) {
      const key = rowKey(w.ref);
      store.rows.set(key, rowFromWorkload(w, store.rows.get(key)));
      changed(type, key);
    }
  } else if (type === 'DELETED') {
    const w = data && data.workload;
    if (w && w.ref) {
      const key = rowKey(w.ref);
      store.rows.delete(key);
      changed(type, key);
    }
  } else if (type === 'SYNCED') {
    // A stream resumed from the list's revision may know less than the list
    // did (it need not have judged any workload yet): it can add the notice,
    // not take it away.
    showFiltered(store.filtered || Boolean(data && data.filtered));
    setMessage('stream', '');
    setStream('live');
    on.synced();
  }
  if (ev.id) on.id(ev.id);
}

// ---------------------------------------------------------------- workloads view
//
// A virtualized table: only the rows in the window (plus a margin) exist in
// the DOM, each of a fixed height; two spacer rows give the tbody its full
// height so the page scrolls as if every row were there. Sorting and
// filtering run on plain arrays of row objects.

const MARGIN_ROWS = 15;

const SORTS = {
  namespace: (a, b) => cmp(a.nsKey, b.nsKey),
  kind: (a, b) => cmp(a.kindKey, b.kindKey),
  name: (a, b) => cmp(a.nameKey, b.nameKey),
  phase: (a, b) => a.rank - b.rank,
  // fewest ready (as a share of desired) first
  components: (a, b) => (a.desired ? a.ready / a.desired : 1) - (b.desired ? b.ready / b.desired : 1),
  gpus: (a, b) => a.gpus - b.gpus,
  // youngest first
  age: (a, b) => (b.created || 0) - (a.created || 0),
};
const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
const tieBreak = (a, b) => cmp(a.nsKey, b.nsKey) || cmp(a.nameKey, b.nameKey) ||
  cmp(a.kindKey, b.kindKey) || cmp(a.cluster, b.cluster);

const CLUSTER_SCOPED = '-'; // the namespace filter's value for cluster-scoped workloads: no namespace starts with '-'

const workloadsView = {
  sort: {key: 'phase', dir: 1},
  filter: {namespace: '', kind: '', phase: '', q: ''},
  list: [], // filtered and sorted rows
  stale: true, // `list` must be recomputed from the store
  frame: 0,
  rowHeight: 0,
  rendered: new Map(), // key -> {row, tr} of the rows in the DOM
  optionSigs: {},
  scrollY: 0, // where the table was left
  bodyTop: 0, // the tbody's offset in the page, as last seen
  active: false,

  init() {
    const tbody = $('workloads').tBodies[0];
    this.top = h('tr', {class: 'spacer', 'aria-hidden': 'true'}, h('td', {colspan: 7}));
    this.bottom = h('tr', {class: 'spacer', 'aria-hidden': 'true'}, h('td', {colspan: 7}));
    // Shown instead of rows while loading, or when the filters hide everything.
    this.note = h('tr', {class: 'empty'}, h('td', {colspan: 7}));
    tbody.append(this.top, this.bottom);
    for (const [id, field] of [['filter-namespace', 'namespace'], ['filter-kind', 'kind'], ['filter-phase', 'phase']]) {
      $(id).addEventListener('change', (e) => { this.filter[field] = e.target.value; this.invalidate(); });
    }
    $('search').addEventListener('input', (e) => { this.filter.q = e.target.value.trim().toLowerCase(); this.invalidate(); });
    for (const th of $('workloads').tHead.rows[0].cells) {
      const button = th.querySelector('button');
      if (button) button.addEventListener('click', () => this.sortBy(th.dataset.sort));
    }
    this.showSort();
    // A click anywhere on a row opens it; the name link stays the keyboard path.
    tbody.addEventListener('click', (e) => {
      const tr = e.target.closest('tr[data-key]');
      if (!tr || e.target.closest('a, button') || String(window.getSelection())) return;
      const a = tr.querySelector('td.name a');
      if (a) location.hash = a.getAttribute('href');
    });
    // Up/Down move between the rows' links, scrolling the window along.
    tbody.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
      const tr = e.target.closest('tr[data-key]');
      if (!tr) return;
      const index = this.list.findIndex((r) => r.key === tr.dataset.key);
      const to = index + (e.key === 'ArrowDown' ? 1 : -1);
      if (index < 0 || to < 0 || to >= this.list.length) return;
      e.preventDefault();
      this.focusKey = this.list[to].key;
      const rowH = this.rowHeight || 32;
      const y = tbody.getBoundingClientRect().top + window.scrollY + to * rowH;
      const headH = $('workloads').tHead.getBoundingClientRect().height; // sticky, over the rows
      if (y < window.scrollY + headH) window.scrollTo(0, y - headH);
      else if (y + rowH > window.scrollY + innerHeight) window.scrollTo(0, y + rowH - innerHeight);
      this.renderWindow();
    });
    window.addEventListener('scroll', () => { if (this.active) this.schedule(); }, {passive: true});
    window.addEventListener('resize', () => { if (this.active) this.schedule(); });
    // Ages move on: refresh the rendered ones.
    setInterval(() => {
      for (const {row, tr} of this.rendered.values()) tr.cells[6].textContent = fmtAge(ageOf(row));
    }, 10000);
    document.addEventListener('keydown', (e) => {
      if (e.key === '/' && this.active && !e.target.closest('input, select, textarea')) {
        e.preventDefault();
        $('search').focus();
      }
    });
  },

  enter() {
    this.active = true;
    document.title = 'Workloads · workloadmap';
    // The rows and spacers stayed rendered while hidden: the page is as tall
    // as when it was left, so its scroll position can come back first.
    window.scrollTo(0, this.scrollY);
    this.invalidate();
    this.renderNow();
  },
  leave() {
    this.scrollY = window.scrollY;
    this.active = false;
  },

  invalidate() {
    this.stale = true;
    this.schedule();
  },
  // The table is kept rendered while another view shows (a few dozen rows,
  // redone only when the data changes), so going back to it is instant.
  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.renderNow(); });
  },

  sortBy(key) {
    this.sort = this.sort.key === key ? {key, dir: -this.sort.dir} : {key, dir: 1};
    this.showSort();
    this.invalidate();
  },
  showSort() {
    for (const th of $('workloads').tHead.rows[0].cells) {
      th.setAttribute('aria-sort', th.dataset.sort === this.sort.key
        ? (this.sort.dir > 0 ? 'ascending' : 'descending') : 'none');
    }
  },

  renderNow() {
    if (this.frame) { cancelAnimationFrame(this.frame); this.frame = 0; }
    if (this.stale) this.recompute();
    this.renderWindow();
  },

  recompute() {
    this.stale = false;
    const all = Array.from(store.rows.values());
    this.updateOptions(all);
    const {namespace, kind, phase, q} = this.filter;
    const list = all.filter((r) =>
      (!namespace || r.namespace === (namespace === CLUSTER_SCOPED ? '' : namespace)) &&
      (!kind || r.kind === kind) &&
      (!phase || r.phase === phase || r.statuses.includes(phase) || r.primary === phase) &&
      (!q || r.search.includes(q)));
    const by = SORTS[this.sort.key] || SORTS.phase;
    const dir = this.sort.dir;
    list.sort((a, b) => dir * by(a, b) || tieBreak(a, b));
    this.list = list;
    $('workload-count').textContent = list.length + ' of ' + all.length + ' workloads';
    $('workloads').setAttribute('aria-rowcount', String(list.length + 1));
    setMessage('empty', store.loaded && all.length === 0 ? 'No workloads' : '');
  },

  // Filter choices from the data; rebuilt only when the set changes, and a
  // chosen value that disappeared stays chosen.
  updateOptions(all) {
    const namespaces = new Set();
    const kinds = new Set();
    const phases = new Set();
    for (const r of all) {
      namespaces.add(r.namespace === '' ? CLUSTER_SCOPED : r.namespace);
      kinds.add(r.kind);
      for (const c of r.chips) phases.add(c.text);
    }
    const sets = {
      'filter-namespace': [...namespaces].sort(),
      'filter-kind': [...kinds].sort(),
      'filter-phase': [...phases].sort((a, b) => severity(a) - severity(b) || cmp(a, b)),
    };
    for (const id in sets) {
      const select = $(id);
      const values = sets[id];
      if (select.value && !values.includes(select.value)) values.push(select.value);
      const sig = values.join('\u0000');
      if (this.optionSigs[id] === sig) continue;
      this.optionSigs[id] = sig;
      const chosen = select.value;
      const first = select.options[0];
      select.replaceChildren(first, ...values.map((v) =>
        h('option', {value: v}, v === CLUSTER_SCOPED && id === 'filter-namespace' ? '(cluster-scoped)' : v)));
      select.value = chosen;
    }
  },

  renderWindow() {
    const tbody = $('workloads').tBodies[0];
    const n = this.list.length;
    const rowH = this.rowHeight || 32;
    // While hidden, the window stays where the table was left.
    if (this.active) this.bodyTop = tbody.getBoundingClientRect().top + window.scrollY;
    const scrollY = this.active ? window.scrollY : this.scrollY;
    const first = Math.floor((scrollY - (this.bodyTop || 0)) / rowH);
    const count = Math.ceil(innerHeight / rowH);
    let start = Math.max(0, first - MARGIN_ROWS);
    let end = Math.min(n, first + count + MARGIN_ROWS);
    if (start >= end) { // scrolled past the end of a list that shrank
      end = n;
      start = Math.max(0, n - count - MARGIN_ROWS);
    }
    const next = new Map();
    const trs = [];
    for (let i = start; i < end; i++) {
      const row = this.list[i];
      const old = this.rendered.get(row.key);
      const tr = old && old.row === row ? old.tr : buildWorkloadRow(row);
      tr.setAttribute('aria-rowindex', String(i + 2));
      next.set(row.key, {row, tr});
      trs.push(tr);
    }
    this.rendered = next;
    this.top.firstChild.style.height = start * rowH + 'px';
    this.top.hidden = start === 0;
    this.bottom.firstChild.style.height = (n - end) * rowH + 'px';
    this.bottom.hidden = end === n;

    const note = n > 0 ? ''
      : !store.loaded ? 'Loading…'
        : store.rows.size ? 'No workloads match the filters.' : '';
    if (note) {
      this.note.firstChild.textContent = note;
      trs.push(this.note);
    }
    const current = tbody.rows;
    const same = current.length === trs.length + 2 && trs.every((tr, i) => current[i + 1] === tr);
    if (!same) {
      // Moving a focused row out of the DOM blurs it: put focus back on the
      // same workload's link (the row may have been rebuilt by an update).
      const focused = document.activeElement;
      const focusedRow = focused && tbody.contains(focused) ? focused.closest('tr[data-key]') : null;
      const focusKey = this.focusKey || (focusedRow && focusedRow.dataset.key);
      tbody.replaceChildren(this.top, ...trs, this.bottom);
      if (focusKey) {
        const entry = next.get(focusKey);
        if (entry) {
          const target = focused && entry.tr.contains(focused) ? focused : entry.tr.querySelector('td.name a');
          if (target && document.activeElement !== target) target.focus({preventScroll: true});
        }
      }
    } else if (this.focusKey) {
      const entry = next.get(this.focusKey);
      if (entry) entry.tr.querySelector('td.name a').focus({preventScroll: true});
    }
    this.focusKey = null;
    if (!this.rowHeight && n > 0 && this.active) {
      // Measured once from a real row, so a larger font keeps the spacers exact.
      this.rowHeight = trs[0].getBoundingClientRect().height || 32;
      if (Math.abs(this.rowHeight - rowH) > 0.5) this.renderWindow();
    }
  },
};

function buildWorkloadRow(r) {
  const tr = h('tr', {
    'data-key': r.key,
    'data-namespace': r.namespace,
    'data-kind': r.kind,
    'data-name': r.name,
    'data-phase': r.primary,
    class: r.error ? 'row-error' : null,
  });
  const created = r.created === null ? '' : new Date(r.created).toISOString();
  tr.append(
    h('td', {class: 'namespace', title: r.namespace || 'cluster-scoped'}, r.namespace),
    h('td', {class: 'kind', title: r.group ? r.kind + '.' + r.group : r.kind}, r.kind),
    h('td', {class: 'name', title: r.cluster ? r.name + ' (cluster ' + r.cluster + ')' : r.name},
      h('a', {href: workloadHash(r.ref)}, r.name)),
    h('td', {class: 'phase'}, chipNodes(r.chips)),
    h('td', {class: 'components', title: r.error || componentsTitle(r)}, componentNodes(r)),
    h('td', {class: 'gpus num'}, String(r.gpus)),
    h('td', {class: 'age num', title: created ? 'created ' + created : ''}, fmtAge(ageOf(r))),
  );
  return tr;
}

// "leader 1/1 · worker 2/2": an instance is named by its id, a component
// without instance ids by its name (as `wmctl get`).
function componentNodes(r) {
  if (r.error) return h('span', {class: 'component-error'}, r.error);
  const nodes = [];
  r.components.forEach((c, i) => {
    if (i > 0) nodes.push(h('span', {class: 'sep'}, ' · '));
    const label = c.instanceId || c.name;
    if (c.error) {
      nodes.push(h('span', {class: 'component component-error', 'data-component': c.name,
        'data-ready': '0', 'data-desired': '0', title: c.error}, label + ' error'));
      return;
    }
    nodes.push(h('span', {
      class: 'component' + (c.ready < c.desired ? ' component-short' : ''),
      'data-component': c.name,
      'data-instance': c.instanceId,
      'data-ready': String(c.ready),
      'data-desired': String(c.desired),
    }, label + ' ' + c.ready + '/' + c.desired));
  });
  return nodes;
}

function componentsTitle(r) {
  return r.components.map((c) => (c.instanceId ? c.name + '[' + c.instanceId + ']' : c.name) +
    (c.error ? ' ' + c.error : ' ' + c.ready + '/' + c.desired + ' ready')).join('\n');
}

// ---------------------------------------------------------------- workload view

const workloadView = {
  params: null, // [cluster, namespace, group, kind, name]
  key: '',
  ctrl: null,
  timer: 0,
  active: false,

  init() {
    // Changes of this workload re-fetch it (with pods, which events leave
    // out), at most every 300 ms.
    store.listen((type, key) => {
      if (!this.active) return;
      if (type === 'DELETED' && key === this.key) {
        setMessage('view', 'This workload was deleted.', 'warn');
        $('workload-view').classList.add('deleted');
      } else if (key === this.key || type === 'reset') {
        if (key === this.key && $('workload-view').classList.contains('deleted')) {
          $('workload-view').classList.remove('deleted'); // created again
          setMessage('view', '');
        }
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.load(), 300);
      }
    });
  },

  enter(params) {
    this.active = true;
    this.params = params;
    this.key = params.join('/');
    const [, namespace, , kind, name] = params;
    const title = kind + ' ' + (namespace ? namespace + '/' : '') + name;
    $('workload-title').textContent = title;
    document.title = title + ' · workloadmap';
    $('workload-view').classList.remove('deleted');
    $('workload-view').setAttribute('aria-busy', 'true');
    for (const id of ['workload-phase', 'workload-meta', 'warnings']) $(id).replaceChildren();
    $('warnings').hidden = true;
    for (const id of ['components', 'conditions']) $(id).tBodies[0].replaceChildren();
    $('gang-body').replaceChildren(h('p', {class: 'muted'}, 'Loading…'));
    this.load();
  },
  leave() {
    this.active = false;
    clearTimeout(this.timer);
    if (this.ctrl) this.ctrl.abort();
  },

  async load() {
    if (!this.params) return;
    if (this.ctrl) this.ctrl.abort();
    this.ctrl = new AbortController();
    const signal = this.ctrl.signal;
    const [cluster, namespace, group, kind, name] = this.params;
    const base = namespace
      ? 'api/v1/namespaces/' + enc(namespace) + '/workloads/' + enc(kind) + '/' + enc(name)
      : 'api/v1/workloads/' + enc(kind) + '/' + enc(name);
    const query = [];
    if (group) query.push('group=' + enc(group));
    if (cluster) query.push('cluster=' + enc(cluster));
    const q = query.join('&');
    const [resolved, gang] = await Promise.allSettled([
      apiGet(base + '?' + (q ? q + '&' : '') + 'includePods=true', signal),
      apiGet(base + '/gang' + (q ? '?' + q : ''), signal),
    ]);
    if (signal.aborted || !this.active) return;
    $('workload-view').removeAttribute('aria-busy');
    if (resolved.status === 'rejected') {
      const e = resolved.reason;
      setMessage('view', e.httpStatus === 404
        ? 'Not found: ' + e.message
        : 'Could not load the workload: ' + e.message, 'error');
    } else {
      if (!$('workload-view').classList.contains('deleted')) setMessage('view', '');
      renderWorkload(resolved.value.workload || {});
    }
    if (gang.status === 'rejected') {
      $('gang-body').replaceChildren(h('p', {class: 'msg msg-error'}, 'Could not load the gang instructions: ' + gang.reason.message));
    } else {
      renderGang(gang.value.gang || {});
    }
  },
};

function renderWorkload(w) {
  const ref = w.ref || {};
  const status = w.status || {};
  const resolved = Boolean(w.definition && w.definition.name);
  const chips = resolved ? statusChips(status.phase || '', status.matchedStatuses || []) : [{text: 'Error', rank: 0, phase: true}];
  $('workload-phase').replaceChildren(...chipNodes(chips));

  const meta = [];
  const add = (term, ...value) => meta.push(h('dt', null, term), h('dd', null, ...value));
  if (ref.cluster) add('Cluster', ref.cluster);
  add('Namespace', ref.namespace || '(cluster-scoped)');
  add('API version', (ref.group ? ref.group + '/' : '') + (ref.version || ''));
  const def = w.definition || {};
  meta.push(h('dt', null, 'Definition'), h('dd', {id: 'definition'},
    def.name ? h('a', {href: '#/definitions', title: 'definitions in force'}, def.name) : 'none',
    def.origin ? ' (' + def.origin + ')' : ''));
  const created = parseTime(w.creationTimestamp);
  if (created !== null) {
    add('Created', fmtAge((Date.now() - (store.skewMs || 0) - created) / 1000) + ' ago', h('span', {class: 'muted'}, ' · ' + w.creationTimestamp));
  }
  add('Requests', fmtResources(w.resources) || 'none');
  const nodes = w.nodes || [];
  // A big job runs on hundreds of nodes: name a few, count the rest.
  const shown = nodes.slice(0, 12).join(', ') + (nodes.length > 12 ? ', … ' + (nodes.length - 12) + ' more' : '');
  meta.push(h('dt', null, 'Nodes'), h('dd', {title: nodes.join(', ')}, nodes.length ? nodes.length + ': ' + shown : 'none'));
  if (w.resourceVersion) add('Resource version', w.resourceVersion);
  $('workload-meta').replaceChildren(...meta);

  const warnings = w.warnings || [];
  $('warnings').replaceChildren(...warnings.map((t) => h('li', null, t)));
  $('warnings').hidden = warnings.length === 0;

  const rows = [];
  if (w.root) componentTreeRows(w.root, rows);
  $('components').tBodies[0].replaceChildren(...(rows.length ? rows
    : [h('tr', {class: 'empty'}, h('td', {colspan: 5}, 'No components'))]));

  const conditions = status.conditions || [];
  $('conditions').tBodies[0].replaceChildren(...(conditions.length
    ? conditions.map((c) => h('tr', {'data-condition': c.type},
      h('td', {class: 'type'}, c.type),
      h('td', {class: 'status'}, h('span', {class: 'cond cond-' + String(c.status).toLowerCase()}, c.status)),
      h('td', {class: 'reason'}, c.reason || ''),
      h('td', {class: 'message'}, c.message || '')))
    : [h('tr', {class: 'empty'}, h('td', {colspan: 4}, 'No conditions'))]));
}

// The component tree as `wmctl describe` draws it: a component row; below a
// component with instance ids, a row per instance; below each, its child
// components and its pods (by name). A single-instance component's pods and
// children sit right under its row.
function componentTreeRows(root, out) {
  const err = root.error;
  if (root.hasPodDefinition || (err && (err.message || err.fieldPath))) {
    addComponentRows(root, 0, out);
    return;
  }
  for (const inst of root.instances || []) {
    for (const child of inst.children || []) addComponentRows(child, 0, out);
  }
}

function nameCell(depth, label, note) {
  const td = h('td', {class: 'name'}, h('span', {class: 'tree-label'}, label),
    note ? h('span', {class: 'muted kind-note'}, ' ' + note) : null);
  // Through the CSSOM: the daemon's Content-Security-Policy refuses style attributes.
  td.style.setProperty('--depth', String(depth));
  return td;
}

function addComponentRows(c, depth, out) {
  const err = c.error;
  const kindName = c.kind && c.kind.kind;
  if (err && (err.message || err.fieldPath)) {
    out.push(h('tr', {class: 'component component-failed', 'data-component': c.name, 'data-depth': depth},
      nameCell(depth, c.name, kindName),
      h('td', {class: 'error', colspan: 4}, 'error: ' + (err.fieldPath ? err.fieldPath + ': ' : '') + (err.message || ''))));
    return;
  }
  const instances = c.instances || [];
  const multi = instances.some((i) => i.id);
  const counts = c.replicas || {};
  const start = out.length;
  out.push(countsRow('component', c, null, depth, c.name, kindName, counts, gpusOf(c.resources), c.nodes));
  for (const inst of instances) {
    const childDepth = multi ? depth + 2 : depth + 1;
    if (multi) {
      out.push(countsRow('instance', c, inst, depth + 1, inst.id, '', inst.replicas || {}, gpusOf(inst.resources), inst.nodes));
    }
    for (const child of inst.children || []) addComponentRows(child, childDepth, out);
    const pods = (inst.pods || []).slice().sort((a, b) => cmp(a.name, b.name));
    for (const p of pods) out.push(podRow(p, c, inst, childDepth));
  }
  // A grouping component with nothing in it (no pods, replicas, requests or
  // children) is left out, as describe does.
  if (!c.hasPodDefinition && out.length === start + 1 && !num(counts.desired) && !Object.keys((c.resources && c.resources.quantities) || {}).length) {
    out.length = start;
  }
}

function countsRow(cls, c, inst, depth, label, note, counts, gpus, nodes) {
  const ready = num(counts.ready);
  const desired = num(counts.desired);
  return h('tr', {
    class: cls + (ready < desired ? ' short' : ''),
    'data-component': c.name,
    'data-instance': inst ? inst.id : null,
    'data-ready': ready,
    'data-desired': desired,
    'data-depth': depth,
  },
  nameCell(depth, label, note),
  h('td', {class: 'state'}, ready < desired ? (desired - ready) + ' not ready' : ''),
  h('td', {class: 'ready'}, ready + '/' + desired),
  h('td', {class: 'gpus num'}, String(gpus)),
  h('td', {class: 'node', title: (nodes || []).join(', ')}, (nodes || []).join(', ')));
}

function podRow(p, c, inst, depth) {
  const unhealthy = !p.ready && p.phase !== 'Succeeded';
  return h('tr', {
    class: 'pod' + (unhealthy ? ' unhealthy' : ''),
    'data-pod': p.name,
    'data-phase': p.phase || '',
    'data-ready': p.ready ? 'true' : 'false',
    'data-component': c.name,
    'data-instance': inst.id || '',
    'data-depth': depth,
  },
  nameCell(depth, p.name, ''),
  h('td', {class: 'pod-phase'}, h('span', {class: severityClass(severity(p.phase || 'Unknown'))}, p.phase || 'Unknown'),
    p.reason ? h('span', {class: 'muted'}, ' ' + p.reason) : null),
  h('td', {class: 'pod-ready' + (p.ready ? '' : ' not-ready')}, p.ready ? 'ready' : 'not ready'),
  h('td', {class: 'gpus num'}, String(gpusOf(p.resources))),
  h('td', {class: 'node'}, p.node || '—'));
}

function renderGang(gang) {
  const groups = gang.podGroups || [];
  const assignments = gang.assignments || [];
  const body = $('gang-body');
  if (!groups.length) {
    body.replaceChildren(h('p', {class: 'muted'}, 'This workload has no gang scheduling.'));
    return;
  }
  const counts = new Map(); // "group\u0000subgroup" -> pods
  const failed = [];
  for (const a of assignments) {
    if (a.error) { failed.push(a); continue; }
    const keys = [a.podGroup + '\u0000'];
    if (a.subGroup) keys.push(a.podGroup + '\u0000' + a.subGroup);
    for (const k of keys) counts.set(k, (counts.get(k) || 0) + 1);
  }
  const opt = (v) => (v === undefined || v === null ? '—' : String(v));
  const topology = (t) => {
    if (!t || !t.topology) return '—';
    const levels = [t.requiredTopologyLevel && 'required ' + t.requiredTopologyLevel, t.preferredTopologyLevel && 'preferred ' + t.preferredTopologyLevel].filter(Boolean);
    return t.topology + (levels.length ? ' (' + levels.join(', ') + ')' : '');
  };
  const parts = [h('p', null, assignments.length + ' pod' + (assignments.length === 1 ? '' : 's') + ' assigned to ' +
    groups.length + ' pod group' + (groups.length === 1 ? '' : 's') + (failed.length ? ', ' + failed.length + ' not grouped' : '') + '.')];
  for (const g of groups) {
    parts.push(h('table', {class: 'grid gang-group', 'data-pod-group': g.name},
      h('caption', null, 'Pod group ', h('code', null, g.name)),
      h('thead', null, h('tr', null, ['Min member', 'Min subgroups', 'Queue', 'Priority class', 'Topology', 'Form', 'Pods'].map((t) => h('th', {scope: 'col'}, t)))),
      h('tbody', null, h('tr', null,
        h('td', {class: 'min-member num'}, opt(g.minMember)),
        h('td', {class: 'min-subgroup num'}, opt(g.minSubGroup)),
        h('td', null, g.queue || '—'),
        h('td', null, g.priorityClassName || '—'),
        h('td', null, topology(g.topology)),
        h('td', null, g.form || '—'),
        h('td', {class: 'assigned num'}, String(counts.get(g.name + '\u0000') || 0))))));
    const subs = g.subGroups || [];
    if (subs.length) {
      parts.push(h('table', {class: 'grid gang-subgroups', 'data-pod-group': g.name},
        h('caption', null, 'Subgroups of ', h('code', null, g.name)),
        h('thead', null, h('tr', null, ['Subgroup', 'Parent', 'Min member', 'Min subgroups', 'Topology', 'Pods'].map((t) => h('th', {scope: 'col'}, t)))),
        h('tbody', null, subs.map((s) => h('tr', {'data-subgroup': s.name},
          h('td', null, s.name), h('td', null, s.parent || '—'),
          h('td', {class: 'num'}, opt(s.minMember)), h('td', {class: 'num'}, opt(s.minSubGroup)),
          h('td', null, topology(s.topology)),
          h('td', {class: 'num'}, String(counts.get(g.name + '\u0000' + s.name) || 0)))))));
    }
  }
  if (failed.length) {
    parts.push(h('ul', {class: 'gang-errors'}, failed.map((a) => h('li', null, h('code', null, a.pod), ': ' + a.error))));
  }
  body.replaceChildren(...parts);
}

// ---------------------------------------------------------------- definitions view

const definitionsView = {
  ctrl: null,
  enter() {
    document.title = 'Definitions · workloadmap';
    this.load();
  },
  leave() {
    if (this.ctrl) this.ctrl.abort();
  },
  async load() {
    if (this.ctrl) this.ctrl.abort();
    this.ctrl = new AbortController();
    const signal = this.ctrl.signal;
    $('definitions-view').setAttribute('aria-busy', 'true');
    let data;
    try {
      data = await apiGet('api/v1/definitions', signal);
    } catch (e) {
      if (isAbort(e)) return;
      $('definitions-view').removeAttribute('aria-busy');
      setMessage('view', 'Could not list definitions: ' + e.message, 'error');
      return;
    }
    $('definitions-view').removeAttribute('aria-busy');
    setMessage('view', data.filtered
      ? "The cluster's own definitions (Karta objects) are left out: you may not list kartas.run.ai."
      : '');
    const defs = (data.definitions || []).slice().sort((a, b) => cmp(a.name, b.name));
    const yes = (v) => h('span', {class: v ? 'yes' : 'no'}, v ? 'yes' : 'no');
    $('definitions').tBodies[0].replaceChildren(...(defs.length ? defs.map((d) => {
      const k = d.rootKind || {};
      return h('tr', {'data-definition': d.name},
        h('td', {class: 'name', title: d.source || ''}, d.name),
        h('td', {class: 'origin'}, d.origin || ''),
        h('td', {class: 'root-kind'}, k.kind || '', h('span', {class: 'muted'}, ' ' + (k.group ? k.group + '/' : '') + (k.version || ''))),
        h('td', {class: 'components'}, (d.components || []).join(', ')),
        h('td', {class: 'gang'}, yes(d.gangScheduling)),
        h('td', {class: 'synced'}, yes(d.synced)));
    }) : [h('tr', {class: 'empty'}, h('td', {colspan: 6}, 'No definitions'))]));

    const rejected = (data.rejected || []).slice().sort((a, b) => cmp(a.name, b.name));
    $('rejected').tBodies[0].replaceChildren(...(rejected.length ? rejected.map((r) =>
      h('tr', {'data-definition': r.name},
        h('td', {class: 'name'}, r.name || '(unnamed)'),
        h('td', {class: 'source'}, r.source || ''),
        h('td', {class: 'findings'}, h('ul', null, (r.findings || []).map((f) => h('li', {class: 'finding'},
          h('span', {class: 'chip chip-' + (f.severity === 'error' ? 'danger' : 'warn')}, f.severity || 'finding'), ' ',
          f.path ? h('code', {class: 'path'}, f.path) : null, f.path ? ' ' : null,
          h('span', {class: 'finding-message'}, f.message || ''))))))
    ) : [h('tr', {class: 'empty'}, h('td', {colspan: 3}, 'No rejected definitions'))]));
    $('definitions-count').textContent = defs.length + ' in force, ' + rejected.length + ' rejected';
  },
};

// ---------------------------------------------------------------- router

const VIEWS = {
  workloads: {section: 'workloads-view', nav: 'nav-workloads', view: workloadsView},
  workload: {section: 'workload-view', nav: 'nav-workloads', view: workloadView},
  definitions: {section: 'definitions-view', nav: 'nav-definitions', view: definitionsView},
};

const router = {
  current: '',
  params: null,

  parse(hash) {
    if (hash === '' || hash === '#' || hash === '#/') return ['workloads', null];
    if (hash === '#/definitions') return ['definitions', null];
    if (hash.startsWith('#/workload/')) {
      const parts = hash.slice('#/workload/'.length).split('/');
      if (parts.length === 5 && parts[3] && parts[4]) {
        try { return ['workload', parts.map(decodeURIComponent)]; } catch { /* a malformed escape */ }
      }
    }
    return [null, null];
  },

  go(initial) {
    let [name, params] = router.parse(location.hash);
    if (!name) {
      setMessage('view', 'No such page: ' + location.hash, 'warn');
      name = 'workloads';
    } else {
      setMessage('view', '');
    }
    if (router.current) VIEWS[router.current].view.leave();
    router.current = name;
    router.params = params;
    for (const key in VIEWS) $(VIEWS[key].section).hidden = key !== name;
    for (const nav of ['nav-workloads', 'nav-definitions']) {
      if (nav === VIEWS[name].nav) $(nav).setAttribute('aria-current', 'page');
      else $(nav).removeAttribute('aria-current');
    }
    if (name !== 'workloads') window.scrollTo(0, 0);
    renderMessages();
    VIEWS[name].view.enter(params);
    // After a navigation, screen readers start at the new view's heading.
    if (!initial) {
      const heading = $(VIEWS[name].section).querySelector('h1');
      if (heading) heading.focus({preventScroll: true});
    }
  },

  // Fetch the current view's data again (after signing in).
  reload() {
    if (router.current && router.current !== 'workloads') {
      VIEWS[router.current].view.enter(router.params);
    }
  },
};

function main() {
  auth.init();
  workloadsView.init();
  workloadView.init();
  window.addEventListener('hashchange', () => router.go(false));
  router.go(true);
  startSync();
}

main();
