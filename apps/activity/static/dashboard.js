// Stoa activity dashboard: one static script, no dependencies. Agent output is untrusted, so every piece of
// event text goes into the page through textContent (or an attribute the browser treats as data), never as HTML.
'use strict';

(() => {
  const GROUPS = {
    exec: ['code_executed', 'code_failed'],
    job: ['job_started', 'job_finished', 'batch_cancelled'],
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
  const filters = { server: '', user: '', group: '' };
  let source;
  let lastId = '';

  const $ = (id) => document.getElementById(id);

  /** An element with text content and optional class; children appended in order. */
  function el(tag, opts = {}, ...children) {
    const e = document.createElement(tag);
    if (opts.cls) e.className = opts.cls;
    if (opts.text !== undefined && opts.text !== null) e.textContent = String(opts.text);
    if (opts.data) for (const [k, v] of Object.entries(opts.data)) e.dataset[k] = String(v ?? '');
    for (const c of children) if (c) e.append(c);
    return e;
  }

  function setConn(state, text) {
    const c = $('conn');
    c.dataset.state = state;
    c.textContent = text;
  }

  /** A link only for http(s) URLs (never javascript: or data: from an event). */
  function safeLink(url, text) {
    try {
      const u = new URL(String(url), location.href);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') return el('span', { text });
      const a = el('a', { text });
      a.href = u.href;
      a.rel = 'noopener noreferrer';
      a.target = '_blank';
      return a;
    } catch {
      return el('span', { text });
    }
  }

  function block(label, text, open) {
    if (text === undefined || text === null || text === '') return null;
    const d = el('details', {}, el('summary', { text: label }), el('pre', { text }));
    d.open = Boolean(open);
    d.dataset.field = label;
    return d;
  }

  function figures(e) {
    const list = e.displays || [];
    if (!list.length) return null;
    const box = el('div', { cls: 'figures' });
    for (const d of list) {
      if (!d.figure) {
        const size = d.metadata && d.metadata.size_bytes;
        box.append(el('p', { cls: 'muted', text: `figure omitted (${size || '?'} bytes, over the size cap)` }));
        continue;
      }
      const img = document.createElement('img');
      img.alt = `figure (${d.mime_type})`;
      img.src = `figures/${encodeURIComponent(d.figure)}`;
      img.dataset.mime = d.mime_type;
      box.append(img);
    }
    const det = el('details', {}, el('summary', { text: `figures (${list.length})` }), box);
    det.open = true;
    return det;
  }

  function files(label, list) {
    if (!list || !list.length) return null;
    const ul = el('ul');
    for (const f of list) {
      const li = el('li', {}, el('span', { text: `💾 saved ${f.name}` }));
      if (f.download_url) li.append(' — ', safeLink(f.download_url, '⬇ download'));
      if (label === 'saved')
        li.append(el('span', { cls: 'muted', text: ' · or ask the agent to publish it to share' }));
      ul.append(li);
    }
    return el('details', {}, el('summary', { text: `${label} (${list.length})` }), ul);
  }

  function toolCalls(e) {
    const calls = e.tool_calls || [];
    if (!calls.length) return null;
    const t = el('table', { cls: 'calls' });
    for (const c of calls) {
      const args = c.args ? JSON.stringify(c.args) : '';
      t.append(
        el(
          'tr',
          {},
          el('td', { text: c.tool_name }),
          el('td', { cls: 'muted', text: args.length > 200 ? `${args.slice(0, 200)}…` : args }),
          el('td', { text: c.duration_ms !== undefined ? `${Math.round(c.duration_ms)} ms` : '' }),
          el('td', { cls: c.success === false ? 'bad' : 'ok', text: c.success === false ? '✗' : '✓' }),
        ),
      );
    }
    return el('details', {}, el('summary', { text: `tool calls (${calls.length})` }), t);
  }

  function details(e) {
    const out = [];
    if (e.type === 'tool_search') {
      const names = [...(e.matched_tools || []), ...(e.matched_skills || [])].join(', ');
      if (names) out.push(el('div', { cls: 'muted', text: `matched: ${names}` }));
    }
    if (e.type === 'data_searched' && (e.matched_artifacts || []).length)
      out.push(el('div', { cls: 'muted', text: `matched: ${e.matched_artifacts.join(', ')}` }));
    if (e.type === 'workflow_planned') {
      const parts = ['domain', 'mode', 'current_state', 'target_state', 'tool_name']
        .filter((k) => e[k])
        .map((k) => `${k}=${e[k]}`);
      out.push(el('div', { cls: 'muted', text: parts.join(' ') }));
    }
    if (e.type === 'tool_called')
      out.push(el('div', { cls: 'muted', text: `tool ${e.tool_name || '?'} → upstream ${e.target_server || '?'}` }));
    if (e.remote_uri) out.push(el('div', {}, safeLink(e.remote_uri, e.name || e.remote_uri)));
    return out;
  }

  function card(e) {
    const time = new Date((e.timestamp || 0) * 1000).toLocaleTimeString();
    const status =
      e.success === true
        ? el('span', { cls: 'ok', text: '✓' })
        : e.success === false
          ? el('span', { cls: 'bad', text: '✗' })
          : null;
    const head = el(
      'div',
      { cls: 'head' },
      el('span', { cls: `badge ${e.type}`, text: e.type }),
      el('span', { cls: 'server', text: e.server }),
      status,
      e.batch_id ? el('span', { cls: 'badge', text: `batch ${e.batch_id}` }) : null,
      e.job_id ? el('span', { cls: 'muted', text: `job ${e.job_id}` }) : null,
      e.duration_ms !== undefined && e.duration_ms !== null
        ? el('span', { cls: 'muted', text: `${Math.round(e.duration_ms)} ms` })
        : null,
      el('span', { cls: 'muted', text: time }),
      el('span', { cls: 'desc', text: e.description }),
    );
    const c = el(
      'article',
      { cls: 'card', data: { id: e.id, type: e.type, server: e.server, user: e.user || '' } },
      head,
      ...details(e),
      block('code', e.code),
      block('stdout', e.stdout, true),
      block('stderr', e.stderr, true),
      block('error', e.error, true),
      toolCalls(e),
      figures(e),
      files('artifacts', e.artifacts),
      files('saved', e.saved_files),
    );
    return c;
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
    l.cards.prepend(card(e));
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
    for (const l of lanes.values()) {
      let any = false;
      for (const c of l.cards.children) {
        const ok = visible(seen.get(c.dataset.id));
        c.classList.toggle('hidden', !ok);
        if (ok) {
          any = true;
          shown++;
        }
      }
      l.el.classList.toggle('hidden', !any);
    }
    $('stats').textContent = `${shown} / ${seen.size} events · ${servers.size} server${servers.size === 1 ? '' : 's'}`;
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
})();
