/**
 * mpiexec --dashboard's page: one static HTML document with its script and
 * style inline (no CDN, no external URL: it works offline, and the server's
 * content security policy forbids anything else). The script opens the
 * WebSocket `/ws` with the token of its own URL and redraws a table from each
 * snapshot (dashboard-state.ts): per rank its state, each MPI thread's call,
 * counters and rates. Text is set with textContent only (what ranks report is
 * never parsed as HTML).
 *
 * Below the table, the job-wide views (dashboard-views.ts): who waits for
 * whom (a wait-for cycle, a deadlock, in red), the collectives in flight with
 * the ranks that have not arrived, the rank x rank traffic matrix as a heat
 * map, the frames per channel; and the output tail of the selected rank (a
 * click on its row), fetched from /tail.
 *
 * Rows carry data-rank and data-thread, and the call cell the class "call";
 * the views' elements carry data-from/data-to, data-cycle, data-comm and
 * data-call: for tests and scripts that read the page.
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
#ranks tr[data-rank] { cursor: pointer; }
#ranks tr.selected td { background: #e8f0fe; }
h2 { font-size: 1em; margin: 1.2em 0 .4em; }
.views { display: flex; flex-wrap: wrap; gap: 0 2.5em; align-items: flex-start; }
.cycle { color: #c00; font-weight: 600; }
.none { color: #888; }
#matrix td { width: 2.2em; height: 1.6em; text-align: center; font-size: .75em; padding: 0; border: 1px solid #fff; }
#matrix th { font-size: .75em; padding: 0 .3em; }
#tail-lines { background: #1e1e1e; color: #ddd; padding: .6em; max-height: 18em; overflow: auto; font: 12px/1.35 ui-monospace, monospace; white-space: pre-wrap; min-width: 40em; }
#tail-lines .err { color: #ff8a80; }
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
<div class="views">
<section><h2>Who waits for whom</h2><div id="waits"><span class="none">nobody</span></div></section>
<section><h2>Collectives in flight</h2><table><thead><tr><th>communicator</th><th>call</th><th>arrived</th><th>not arrived</th></tr></thead><tbody id="collectives"></tbody></table></section>
<section><h2>Traffic, bytes from row to column</h2><table id="matrix"></table></section>
<section><h2>Channels</h2><table><thead><tr><th>channel</th><th>frames sent</th><th>received</th></tr></thead><tbody id="channels"></tbody></table></section>
</div>
<section><h2 id="tail-title">Output of rank 0</h2><pre id="tail-lines"></pre></section>
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
  var selected = 0;
  function list(a) { return a.length === 0 ? '—' : a.join(', '); }
  function drawWaits(v) {
    var box = document.getElementById('waits');
    var frag = document.createDocumentFragment();
    v.cycles.forEach(function (c) {
      var d = document.createElement('div'); d.className = 'cycle'; d.setAttribute('data-cycle', c.join(','));
      d.textContent = 'deadlock: rank ' + c.concat([c[0]]).join(' → rank ') + ' (each waits for the next)';
      frag.appendChild(d);
    });
    v.waits.forEach(function (w) {
      var d = document.createElement('div'); d.setAttribute('data-from', String(w.from)); d.setAttribute('data-to', String(w.to));
      d.textContent = 'rank ' + w.from + ' waits for rank ' + w.to + ' in ' + w.call;
      frag.appendChild(d);
    });
    if (v.waits.length === 0) { var n = document.createElement('span'); n.className = 'none'; n.textContent = 'nobody waits for a peer'; frag.appendChild(n); }
    box.replaceChildren(frag);
  }
  function drawCollectives(v) {
    var frag = document.createDocumentFragment();
    v.collectives.forEach(function (c) {
      var tr = document.createElement('tr'); tr.setAttribute('data-comm', c.comm); tr.setAttribute('data-call', c.call);
      cell(tr, c.comm); cell(tr, c.call); cell(tr, list(c.arrived), 'arrived'); cell(tr, c.missing === null ? '(members not known)' : list(c.missing), 'missing');
      frag.appendChild(tr);
    });
    if (v.collectives.length === 0) { var tr = document.createElement('tr'); cell(tr, 'none', 'none'); frag.appendChild(tr); }
    document.getElementById('collectives').replaceChildren(frag);
  }
  function drawMatrix(v) {
    var t = document.getElementById('matrix');
    var frag = document.createDocumentFragment();
    var m = v.matrix;
    if (m === null) { var tr0 = document.createElement('tr'); cell(tr0, 'too many ranks for a matrix here', 'none'); frag.appendChild(tr0); t.replaceChildren(frag); return; }
    var max = 1;
    m.bytes.forEach(function (row) { row.forEach(function (b) { if (b > max) max = b; }); });
    var head = document.createElement('tr'); head.appendChild(document.createElement('th'));
    for (var c = 0; c < m.size; c++) { var th = document.createElement('th'); th.textContent = String(c); head.appendChild(th); }
    frag.appendChild(head);
    m.bytes.forEach(function (row, r) {
      var tr = document.createElement('tr'); var th = document.createElement('th'); th.textContent = String(r); tr.appendChild(th);
      row.forEach(function (b, c) {
        var td = cell(tr, b > 0 ? fmt(b) : '');
        td.setAttribute('data-from', String(r)); td.setAttribute('data-to', String(c)); td.title = r + ' → ' + c + ': ' + b + ' bytes';
        var x = b > 0 ? Math.log(1 + b) / Math.log(1 + max) : 0;
        td.style.background = b > 0 ? 'hsl(' + Math.round(220 - 200 * x) + ', 80%, ' + Math.round(92 - 45 * x) + '%)' : '#f0f0f0';
      });
      frag.appendChild(tr);
    });
    t.replaceChildren(frag);
  }
  function drawChannels(v) {
    var frag = document.createDocumentFragment();
    v.channels.forEach(function (c) { var tr = document.createElement('tr'); tr.setAttribute('data-channel', String(c.channel)); cell(tr, String(c.channel)); cell(tr, fmt(c.framesSent), 'num'); cell(tr, fmt(c.framesReceived), 'num'); frag.appendChild(tr); });
    document.getElementById('channels').replaceChildren(frag);
  }
  function drawTail() {
    document.getElementById('tail-title').textContent = 'Output of rank ' + selected + ' (click a rank to choose)';
    fetch('/tail?rank=' + selected + '&token=' + encodeURIComponent(token)).then(function (r) { return r.json(); }).then(function (t) {
      if (t.rank !== selected) return;
      var frag = document.createDocumentFragment();
      t.lines.forEach(function (l) { var sp = document.createElement('span'); if (l.fd === 2) sp.className = 'err'; sp.textContent = l.text + '\\n'; frag.appendChild(sp); });
      document.getElementById('tail-lines').replaceChildren(frag);
    }).catch(function () {});
  }
  body.addEventListener('click', function (ev) {
    var tr = ev.target.closest('tr[data-rank]');
    if (tr === null) return;
    selected = Number(tr.getAttribute('data-rank'));
    body.querySelectorAll('tr.selected').forEach(function (x) { x.classList.remove('selected'); });
    drawTail();
  });
  function draw(s) {
    var frag = document.createDocumentFragment();
    s.ranks.forEach(function (r) {
      if (r.threads.length === 0) { frag.appendChild(row(r, null, true)); return; }
      r.threads.forEach(function (t, i) { frag.appendChild(row(r, t, i === 0)); });
      if (r.moreThreads > 0) { var tr = document.createElement('tr'); tr.className = 'thread'; cell(tr, '… ' + r.moreThreads + ' more threads', 'who'); frag.appendChild(tr); }
    });
    if (s.moreRanks > 0) { var tr = document.createElement('tr'); cell(tr, '… ' + s.moreRanks + ' more ranks', 'who'); frag.appendChild(tr); }
    body.replaceChildren(frag);
    body.querySelectorAll('tr[data-rank="' + selected + '"]').forEach(function (x) { x.classList.add('selected'); });
    if (s.views) { drawWaits(s.views); drawCollectives(s.views); drawMatrix(s.views); drawChannels(s.views); }
    drawTail();
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
