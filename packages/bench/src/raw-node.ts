/**
 * Raw Node.js sockets doing the benchmarks' patterns, with no MPI at all: the
 * ceiling that tsmpi's TCP path is measured against (docs/PERFORMANCE.md).
 *
 *   npx tsx packages/bench/src/raw-node.ts [msgrate|pingpong] [--iterations N]
 *
 * msgrate: two processes, one loopback socket; each iteration both sides write
 * 12 frames of 32 bytes (the size of a tsmpi header) in one write and wait for
 * the peer's 12 (both sides send first, as Isend/Irecv/waitall does). pingpong: one 32-byte frame back and forth; median round trip.
 */
import { fork } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

const FRAME = 32;
const WINDOW = 12;
const mode = process.argv[2] === 'pingpong' ? 'pingpong' : 'msgrate';
const itIdx = process.argv.indexOf('--iterations');
const iterations = itIdx > 0 ? Number(process.argv[itIdx + 1]) : mode === 'msgrate' ? 10_000 : 20_000;

/** Calls `onBatch` each time `frames` whole frames have arrived (any chunking). */
function frameCounter(frames: number, onBatch: () => void): (d: Buffer) => void {
  let bytes = 0;
  const need = frames * FRAME;
  return (d) => {
    bytes += d.length;
    while (bytes >= need) {
      bytes -= need;
      onBatch();
    }
  };
}

if (process.argv.includes('--peer')) {
  const port = Number(process.argv[process.argv.indexOf('--peer') + 1]);
  const s = net.connect(port, '127.0.0.1');
  s.setNoDelay(true);
  const batch = Buffer.alloc(mode === 'msgrate' ? WINDOW * FRAME : FRAME);
  s.on('data', frameCounter(mode === 'msgrate' ? WINDOW : 1, () => s.write(batch)));
  s.on('error', () => process.exit(0));
  // msgrate: like MPI's Isend/Irecv/waitall, both sides send their batch without waiting for the peer's.
  if (mode === 'msgrate') s.on('connect', () => s.write(batch));
} else {
  const server = net.createServer((s) => {
    s.setNoDelay(true);
    const batch = Buffer.alloc(mode === 'msgrate' ? WINDOW * FRAME : FRAME);
    const times: number[] = [];
    let done = 0;
    let t0 = performance.now();
    let tIter = t0;
    s.on('data', frameCounter(mode === 'msgrate' ? WINDOW : 1, () => {
      const now = performance.now();
      if (mode === 'pingpong') times.push(now - tIter);
      if (++done === iterations) {
        if (mode === 'msgrate') {
          console.log(`raw-node msgrate: ${((WINDOW * iterations) / ((now - t0) / 1000) / 1e6).toFixed(3)} M messages/s (${WINDOW} x ${iterations} iterations, one write per batch)`);
        } else {
          times.sort((a, b) => a - b);
          console.log(`raw-node pingpong: round trip median ${(times[times.length >> 1]! * 1000).toFixed(2)} us (${iterations} iterations)`);
        }
        s.destroy();
        server.close();
        child.kill();
        return;
      }
      tIter = performance.now();
      s.write(batch);
    }));
    t0 = performance.now();
    tIter = t0;
    s.write(batch);
  });
  let child: ReturnType<typeof fork>;
  server.listen(0, '127.0.0.1', () => {
    const port = (server.address() as net.AddressInfo).port;
    child = fork(fileURLToPath(import.meta.url), [mode, '--peer', String(port)], { execArgv: process.execArgv });
  });
}
