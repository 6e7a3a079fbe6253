// The square's live view: reads the admin SSE stream with fetch (so the admin token travels in a header, never in
// a URL) and renders every snapshot. Everything from the square is set as text, never parsed as HTML.
'use strict';

const STREAM = 'admin/v1/square/live';
const KEY = 'stoa-square-live-token';
const $ = (id) => document.getElementById(id);
let watching;

function setConn(state, text) {
  const el = $('conn');
  el.dataset.state = state;
  el.textContent = text;
}

function cell(tr, text, cls) {
  const td = document.createElement('td');
  td.textContent = text === null || text === undefined ? '' : String(text);
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

/** A caption with a count, a header row from data-columns, and a body. */
function prepareTable(table) {
  const count = document.createElement('span');
  count.className = 'count';
  count.id = `${table.id}-count`;
  table.createCaption().append(`${table.dataset.title} `, count);
  const head = document.createElement('tr');
  for (const name of table.dataset.columns.split('|')) {
    const th = document.createElement('th');
    th.textContent = name;
    head.appendChild(th);
  }
  table.createTHead().appendChild(head);
  table.createTBody();
}

function fillTable(id, rows, render) {
  const body = $(id).querySelector('tbody');
  body.replaceChildren(
    ...rows.map((row) => {
      const tr = document.createElement('tr');
      render(tr, row);
      return tr;
    }),
  );
  $(`${id}-count`).textContent = `(${rows.length})`;
}

function time(iso) {
  return iso ? new Date(iso).toLocaleTimeString() : '';
}

function render(s) {
  const names = new Map(s.agents.map((a) => [a.id, a.name]));
  fillTable('agents', s.agents, (tr, a) => {
    tr.dataset.agent = a.id;
    tr.dataset.status = a.status;
    cell(tr, a.name);
    cell(tr, a.status, 'status');
    cell(tr, a.role);
    cell(tr, a.principal);
    cell(tr, time(a.last_heartbeat_at));
    cell(tr, a.id, 'id');
  });
  fillTable('channels', s.channels, (tr, c) => {
    tr.dataset.channel = c.name;
    cell(tr, c.name);
    cell(tr, c.message_count);
    cell(tr, s.waiters[c.name] ?? 0);
    cell(tr, time(c.last_activity_at));
    cell(tr, c.topic);
  });
  fillTable('board', s.board, (tr, b) => {
    cell(tr, b.key);
    cell(tr, b.version);
    cell(tr, names.get(b.updated_by) ?? b.updated_by);
    cell(tr, time(b.updated_at));
  });
  fillTable('locks', s.locks, (tr, l) => {
    cell(tr, l.name);
    cell(tr, l.holder_name ?? l.holder);
    cell(tr, l.fencing_token);
    cell(tr, time(l.expires_at));
  });
  const list = $('messages');
  const atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
  list.replaceChildren(
    ...s.messages.map((m) => {
      const li = document.createElement('li');
      li.dataset.message = m.id;
      const meta = document.createElement('span');
      meta.className = 'meta';
      meta.textContent = `${time(m.created_at)} ${m.channel} ${names.get(m.agent_id) ?? m.agent_id}`;
      const content = document.createElement('span');
      content.className = 'content';
      content.textContent = m.content;
      li.append(meta, content);
      return li;
    }),
  );
  if (atBottom) list.scrollTop = list.scrollHeight;
  $('updated').textContent = `updated ${time(s.at)}`;
}

/** Why the square refused (its problem+json detail), as text. */
async function refusal(res) {
  const text = await res.text();
  try {
    const body = JSON.parse(text);
    return body.detail || body.message || body.title || text;
  } catch {
    return text || `HTTP ${res.status}`;
  }
}

async function watch(token, signal) {
  const res = await fetch(STREAM, { headers: { authorization: `Bearer ${token}` }, signal, cache: 'no-store' });
  if (res.status === 401 || res.status === 403) {
    const why = await refusal(res);
    const err = new Error(why);
    err.refused = true;
    throw err;
  }
  if (!res.ok || !res.body) throw new Error(`the live stream answered HTTP ${res.status}`);
  setConn('live', 'live');
  $('view').hidden = false;
  const reader = res.body.pipeThrough(new window.TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (!data.length) continue;
      if (event === 'snapshot') render(JSON.parse(data.join('\n')));
      else if (event === 'problem')
        $('problem').textContent = `The square could not read its state: ${JSON.parse(data.join('\n')).error}`;
    }
  }
}

/** Watches until signed out or refused; a dropped stream reconnects after a second. */
async function start(token) {
  watching?.abort();
  const ctl = new window.AbortController();
  watching = ctl;
  $('problem').textContent = '';
  while (!ctl.signal.aborted) {
    setConn('connecting', 'connecting…');
    try {
      await watch(token, ctl.signal);
    } catch (err) {
      if (ctl.signal.aborted) return;
      if (err.refused) {
        window.sessionStorage.removeItem(KEY);
        setConn('error', 'refused');
        $('problem').textContent = err.message;
        return;
      }
      setConn('error', 'reconnecting');
    }
    await new Promise((done) => setTimeout(done, 1000));
  }
}

$('signin').addEventListener('submit', (e) => {
  e.preventDefault();
  const token = $('token').value.trim();
  if (!token) return;
  window.sessionStorage.setItem(KEY, token);
  $('token').value = '';
  void start(token);
});

for (const table of document.querySelectorAll('table[data-columns]')) prepareTable(table);
const saved = window.sessionStorage.getItem(KEY);
if (saved) void start(saved);
