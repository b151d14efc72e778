/**
 * What a receive claim's route (docs/adr/0023 step 2) adds per frame on the sending side:
 * ClaimRouteSender.next, i.e. one hashed probe of the claim-route mirror and one load of the route
 * word, in CPU nanoseconds per frame, in three cases: no claim announced for the frame's key (the
 * engine path), the frame's route open and joined (the claim's socket), and a frame of another key
 * while the key's route is open (the engine path). A loop of 5,000,000 calls per figure, 3
 * repetitions; process CPU time. The consumer's side is route-cost.bench.ts's intake figure.
 * Run: npx tsx packages/core/src/device/claim-route-cost.bench.ts
 */
import { ClaimRouteSender } from './claim-route-sender.ts';
import { ClaimRouteTable } from './claim-route-table.ts';
import { ClaimTable } from './claim-table.ts';
import { ROUTE_STATE, RouteTable } from './route-table.ts';

const N = 5_000_000;
const LAYOUT = { processCount: 2, endpointsPerProcess: 1, threads: 64 };
const routes = new RouteTable(new SharedArrayBuffer(RouteTable.bytesFor(LAYOUT)), LAYOUT);
const claims = new ClaimRouteTable(new SharedArrayBuffer(ClaimRouteTable.bytesFor(2, 64)), 2, 64);
const sender = new ClaimRouteSender(routes, claims, 3, 1);
const always = (): boolean => true;
const D = 1;
const CTX = 0;
let sink = 0;

function cpuNsPerCall(run: () => void): number {
  const before = process.cpuUsage();
  run();
  const d = process.cpuUsage(before);
  return ((d.user + d.system) * 1000) / N;
}

function measure(name: string, tag: number): void {
  for (let rep = 0; rep < 3; rep++) {
    const ns = cpuNsPerCall(() => {
      for (let i = 0; i < N; i++) sink += sender.next(D, CTX, tag, always).path;
    });
    console.log(JSON.stringify({ case: name, rep, sendNsPerFrame: +ns.toFixed(1) }));
  }
}

measure('no claim announced', 1);
// Process 1's claim of (endpoint 0, CTX, tag 1), announced: the entry it would take in its own table.
const entry = new ClaimTable(new SharedArrayBuffer(ClaimTable.bytesFor(64)), 64).claim(0, CTX, 1, 2).entry;
claims.setRoute(1, entry, 0, CTX, 1, 1, ROUTE_STATE.OPEN);
measure('on the route', 1);
// Leave the route once (a frame of another key), then stay off it: every frame of tag 2 probes and goes by the engine.
sender.next(D, CTX, 2, always);
measure('another key, route open', 2);
if (sink === -1) console.log('unreachable');
