// Stoa activity dashboard: how one event becomes a card. Agent output is untrusted, so every piece of event text
// goes into the page through textContent (or an attribute the browser treats as data), never as HTML.

/** An element with text content and optional class; children appended in order. */
export function el(tag, opts = {}, ...children) {
  const e = document.createElement(tag);
  if (opts.cls) e.className = opts.cls;
  if (opts.text !== undefined && opts.text !== null) e.textContent = String(opts.text);
  if (opts.data) for (const [k, v] of Object.entries(opts.data)) e.dataset[k] = String(v ?? '');
  for (const c of children) if (c) e.append(c);
  return e;
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
    if (label === 'saved') li.append(el('span', { cls: 'muted', text: ' · or ask the agent to publish it to share' }));
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

/** Items of a batch that ended (completed, failed or cancelled): batch_progress counts only grow. */
export function batchDone(e) {
  return (Number(e.completed) || 0) + (Number(e.failed) || 0);
}

/** "n/m done" with a bar, the failed count, and what still runs. */
function batchProgress(e) {
  const total = Number(e.total) || 0;
  const done = batchDone(e);
  const bar = document.createElement('progress');
  bar.max = total;
  bar.value = done;
  return el(
    'div',
    { cls: 'progress', data: { done, total } },
    bar,
    el('span', { cls: 'count', text: `${done}/${total} done` }),
    e.failed ? el('span', { cls: 'failed bad', text: `${e.failed} failed` }) : null,
    e.running ? el('span', { cls: 'muted', text: `${e.running} running` }) : null,
  );
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
  if (e.type === 'batch_progress') out.push(batchProgress(e));
  if (e.type === 'tool_called')
    out.push(el('div', { cls: 'muted', text: `tool ${e.tool_name || '?'} → upstream ${e.target_server || '?'}` }));
  if (e.remote_uri) out.push(el('div', {}, safeLink(e.remote_uri, e.name || e.remote_uri)));
  return out;
}

/** One event as an `<article class="card">`; data attributes carry what the filters and tests select on. */
export function card(e) {
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
    { cls: 'card', data: { id: e.id, type: e.type, server: e.server, user: e.user || '', batch: e.batch_id || '' } },
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
