/**
 * mpiexec --dashboard's page: one static HTML document with its script and
 * style inline (no CDN, no external URL: it works offline, and the server's
 * content security policy forbids anything else). The script opens the
 * WebSocket `/ws` with the token of its own URL and redraws a table from each
 * snapshot (dashboard-state.ts): per rank its state, each MPI thread's call,
 * counters and rates. Text is set with textContent only (what ranks report is
 * never parsed as HTML).
 *
 * Rows carry data-rank and data-thread, and the call cell the class "call",
 * for tests and scripts that read the page.
 */
export const DASHBOARD_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<title>tsmpi job</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1em 2em; color: #222; background: #fafafa; }
h1 { font-size: 1.2em; margin: 0 0 .3em; }
#status { color: #555; margin-bottom: .8em; }
#status.ended { color: #a40; }
table { border-collapse: collapse; }
th, td { text-align: left; padding: .25em .6em; border-bottom: 1px solid #ddd; white-space: nowrap; }
th { background: #eee; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.thread td { color: #555; border-bottom: 1px dotted #e4e4e4; }
tr.thread td.who { padding-left: 2em; }
.state { font-weight: 600; }
.s-in-MPI { color: #b35c00; }
.s-computing { color: #1a7f37; }
.s-finalized, .s-ended { color: #666; }
.s-failed { color: #c00; }
.s-starting { color: #0550ae; }
td.call { font-family: ui-monospace, monospace; white-space: normal; max-width: 42em; }
.detail { color: #777; font-weight: normal; font-size: .85em; display: block; }
</style>
</head>
<body>
<h1>tsmpi job</h1>
<div id="status">connecting…</div>
<table>
<thead><tr>
<th>rank / thread</th><th>host</th><th>pid</th><th>state</th><th>MPI call now</th>
<th>sent (msgs, bytes)</th><th>received</th><th>collectives</th><th>out, per s</th><th>in, per s</th>
</tr></thead>
<tbody id="ranks"></tbody>
</table>
<script>
(function () {
  'use strict';
  var status = document.getElementById('status');
  var body = document.getElementById('ranks');
  var token = new URLSearchParams(location.search).get('token') || '';
  function fmt(n) {
    if (n === null || n === undefined) return '';
    if (n >= 1e9) return (n / 1e9).toFixed(1) + 'G';
    if (n >= 1e6) return (n / 1e6).toFixed(1) + 'M';
    if (n >= 1e4) return (n / 1e3).toFixed(1) + 'k';
    return String(Math.round(n));
  }
  function cell(tr, text, cls) {
    var td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }
  function row(r, t, first) {
    var tr = document.createElement('tr');
    tr.setAttribute('data-rank', String(r.rank));
    tr.setAttribute('data-thread', t === null ? 'main' : t.thread);
    tr.setAttribute('data-state', r.state);
    if (!first) tr.className = 'thread';
    cell(tr, first ? 'rank ' + r.rank + (t !== null && t.thread !== 'main' ? ' (thread ' + t.thread + ')' : '') : 'thread ' + t.thread, 'who');
    cell(tr, first ? r.host : '');
    cell(tr, first && r.pid !== null ? String(r.pid) : '');
    var st = cell(tr, '', 'state s-' + r.state.replace(/ /g, '-'));
    if (first) {
      st.textContent = r.state;
      if (r.detail) { var d = document.createElement('span'); d.className = 'detail'; d.textContent = r.detail; st.appendChild(d); }
    }
    var call = t !== null ? t.call : (r.state === 'in MPI' ? '' : r.state);
    if (t !== null && t.peer !== null) call += '  ← waits for rank ' + t.peer;
    cell(tr, call, 'call');
    var c = first ? r.counters : null, q = first ? r.rates : null;
    function pair(m, b) { return m === null || m === undefined ? '' : fmt(m) + ' · ' + fmt(b) + ' B'; }
    cell(tr, c ? pair(c.messagesSent, c.bytesSent) : '', 'num');
    cell(tr, c ? pair(c.messagesReceived, c.bytesReceived) : '', 'num');
    cell(tr, c ? fmt(c.collectives) : '', 'num');
    cell(tr, q ? pair(q.messagesSent, q.bytesSent) : '', 'num');
    cell(tr, q ? pair(q.messagesReceived, q.bytesReceived) : '', 'num');
    return tr;
  }
  function draw(s) {
    var frag = document.createDocumentFragment();
    s.ranks.forEach(function (r) {
      if (r.threads.length === 0) { frag.appendChild(row(r, null, true)); return; }
      r.threads.forEach(function (t, i) { frag.appendChild(row(r, t, i === 0)); });
      if (r.moreThreads > 0) { var tr = document.createElement('tr'); tr.className = 'thread'; cell(tr, '… ' + r.moreThreads + ' more threads', 'who'); frag.appendChild(tr); }
    });
    if (s.moreRanks > 0) { var tr = document.createElement('tr'); cell(tr, '… ' + s.moreRanks + ' more ranks', 'who'); frag.appendChild(tr); }
    body.replaceChildren(frag);
    var inMpi = s.ranks.filter(function (r) { return r.state === 'in MPI'; }).length;
    status.textContent = s.size + ' processes; ' + inMpi + ' in an MPI call; updated ' + new Date(s.timeMs).toLocaleTimeString();
  }
  var ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws?token=' + encodeURIComponent(token));
  ws.onmessage = function (ev) {
    var s;
    try { s = JSON.parse(ev.data); } catch (e) { return; }
    if (s && s.v === 1 && Array.isArray(s.ranks)) draw(s);
  };
  ws.onclose = function () { status.className = 'ended'; status.textContent = 'job ended (or mpiexec is gone); last state below. ' + status.textContent; };
})();
</script>
</body>
</html>
`;
