// Stoa activity dashboard: the page's state, the live stream and the filters (cards.js renders each event). No
// dependencies, no build step; a module script, so nothing here is a global.
import { batchDone, card, el } from './cards.js';

const GROUPS = {
  exec: ['code_executed', 'code_failed'],
  job: ['job_started', 'job_finished', 'batch_progress', 'batch_cancelled'],
  orch: ['tool_search', 'data_searched', 'skill_loaded', 'workflow_planned'],
  transfer: ['object_sent', 'object_received'],
  artifact: ['artifact_published'],
  proxy: ['tool_called'],
};
const NO_SESSION = '(no session)';
const seen = new Map(); // id → event
const lanes = new Map(); // session → { el, cards, last }
const servers = new Set();
const users = new Set();
const batches = new Map(); // batch id → { event, card }: the batch_progress its card shows
const filters = { server: '', user: '', group: '' };
let source;
let lastId = '';

const $ = (id) => document.getElementById(id);

function setConn(state, text) {
  const c = $('conn');
  c.dataset.state = state;
  c.textContent = text;
}

function lane(session, e) {
  let l = lanes.get(session);
  if (!l) {
    const title = el('span', { cls: 'sid', text: session });
    const meta = el('span', { cls: 'meta' });
    const cards = el('div', { cls: 'cards' });
    const d = el('details', { cls: 'lane', data: { session } }, el('summary', {}, title, meta), cards);
    d.open = true;
    l = { el: d, cards, meta, last: 0, count: 0, user: e.user || '', servers: new Set() };
    lanes.set(session, l);
  }
  return l;
}

function add(e) {
  if (!e || !e.id || seen.has(e.id)) return;
  seen.set(e.id, e);
  if (e.id > lastId) lastId = e.id;
  addOption('filter-server', servers, e.server);
  if (e.user) addOption('filter-user', users, e.user);
  const session = e.session_id || NO_SESSION;
  const l = lane(session, e);
  if (e.type === 'batch_progress') showBatch(l, e);
  else l.cards.prepend(card(e));
  l.count++;
  l.servers.add(e.server);
  l.last = Math.max(l.last, e.timestamp || 0);
  l.meta.textContent = `${[...l.servers].join(', ')} · ${l.user || 'unknown user'} · ${l.count} event${l.count === 1 ? '' : 's'}`;
  // Lanes ordered by most recent activity.
  const main = $('lanes');
  if (main.firstElementChild !== l.el) main.prepend(l.el);
  $('empty').classList.add('hidden');
  apply();
}

/**
 * One card per batch, replaced as its items end. Progress events of one batch may arrive out of order (items end
 * on several replicas): a card only moves forward.
 */
function showBatch(l, e) {
  const shown = batches.get(e.batch_id);
  if (shown && batchDone(shown.event) >= batchDone(e)) return;
  const c = card(e);
  shown?.card.remove();
  l.cards.prepend(c);
  batches.set(e.batch_id, { event: e, card: c });
}

function addOption(id, set, value) {
  if (!value || set.has(value)) return;
  set.add(value);
  const o = el('option', { text: value });
  o.value = value;
  $(id).append(o);
}

function visible(e) {
  if (filters.server && e.server !== filters.server) return false;
  if (filters.user && e.user !== filters.user) return false;
  if (filters.group && !GROUPS[filters.group].includes(e.type)) return false;
  return true;
}

function apply() {
  let shown = 0;
  let total = 0;
  for (const l of lanes.values()) {
    let any = false;
    for (const c of l.cards.children) {
      total++;
      const ok = visible(seen.get(c.dataset.id));
      c.classList.toggle('hidden', !ok);
      if (ok) {
        any = true;
        shown++;
      }
    }
    l.el.classList.toggle('hidden', !any);
  }
  // Cards, not events: a batch's progress events share one card.
  $('stats').textContent = `${shown} / ${total} events · ${servers.size} server${servers.size === 1 ? '' : 's'}`;
}

/** Credentials from the URL fragment (never sent to a server or logged): #bearer=<token> or #admin=<admin token>. */
function credentials() {
  const h = new URLSearchParams(location.hash.slice(1));
  if (h.get('admin')) return { path: 'admin/v1/stream-token', headers: { 'X-Stoa-Admin-Token': h.get('admin') } };
  if (h.get('bearer')) return { path: 'stream-token', headers: { Authorization: `Bearer ${h.get('bearer')}` } };
  return { path: 'stream-token', headers: {} };
}

async function connect() {
  setConn('connecting', 'connecting…');
  const cred = credentials();
  let res;
  try {
    res = await fetch(cred.path, { method: 'POST', headers: cred.headers, credentials: 'same-origin' });
  } catch {
    setConn('offline', 'offline — retrying');
    return void setTimeout(connect, 3000);
  }
  if (!res.ok) {
    const body = await res.json().catch(() => ({}));
    setConn('error', `not signed in: ${body.error_description || res.status}`);
    return;
  }
  const who = await res.json();
  $('who').textContent = `${who.user}${who.admin ? ' (admin: all sessions)' : ''}`;
  if (source) source.close();
  source = new EventSource(lastId ? `stream?last_event_id=${lastId}` : 'stream');
  source.addEventListener('open', () => setConn('live', 'live'));
  source.addEventListener('activity', (m) => {
    try {
      add(JSON.parse(m.data));
    } catch {
      /* a malformed event is skipped */
    }
  });
  source.addEventListener('token_expired', () => {
    source.close();
    void connect();
  });
  source.addEventListener('error', () => {
    // EventSource reconnects by itself (with Last-Event-ID); a refused reconnect (expired cookie) closes it.
    if (source.readyState === EventSource.CLOSED) setTimeout(connect, 2000);
    setConn('connecting', 'reconnecting…');
  });
}

for (const [id, key] of [
  ['filter-server', 'server'],
  ['filter-user', 'user'],
  ['filter-type', 'group'],
])
  $(id).addEventListener('change', (ev) => {
    filters[key] = ev.target.value;
    apply();
  });

void connect();
