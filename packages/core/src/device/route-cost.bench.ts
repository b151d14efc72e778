/**
 * What ADR 0019's route switch adds per frame where nothing switches (the common case): the
 * sender's RouteSender.next (one load of the route word, the tag) and a consumer's
 * RouteIntakes.offer of a tagged frame with nothing held, in CPU nanoseconds per frame, with d's
 * route closed (engine path) and open (reader path). A loop of 5,000,000 calls per figure, 3
 * repetitions; process CPU time. Run: npx tsx packages/core/src/device/route-cost.bench.ts
 */
import { newFrameHeader } from '../transport/index.ts';
import { RouteIntakes } from './route-intake.ts';
import { RouteSender } from './route-sender.ts';
import { ROUTE_STATE, RouteTable } from './route-table.ts';

const N = 5_000_000;
const LAYOUT = { processCount: 2, endpointsPerProcess: 2, threads: 64 };
const senderSide = new RouteTable(new SharedArrayBuffer(RouteTable.bytesFor(LAYOUT)), LAYOUT);
const receiverSide = new RouteTable(new SharedArrayBuffer(RouteTable.bytesFor(LAYOUT)), LAYOUT);
const sender = new RouteSender(senderSide, 3);
let sink = 0;
const intakes = new RouteIntakes(receiverSide, 0, (_p, h) => {
  sink += h.tag;
});
const header = newFrameHeader();
header.dstEndpoint = 1;
const payload = new Uint8Array(32);

function cpuNsPerCall(run: () => void): number {
  const before = process.cpuUsage();
  run();
  const d = process.cpuUsage(before);
  return ((d.user + d.system) * 1000) / N;
}

for (const open of [false, true]) {
  if (open) senderSide.setRoute(1, 1, ROUTE_STATE.OPEN);
  for (let rep = 0; rep < 3; rep++) {
    const send = cpuNsPerCall(() => {
      for (let i = 0; i < N; i++) sink += sender.next(1).tag & 1;
    });
    header.seq = sender.next(1).tag;
    // The mark that opened the reader's epoch (the engine path's consumer reads it in a job).
    if (open && rep === 0) intakes.offer(1, header, payload, true);
    const receive = cpuNsPerCall(() => {
      for (let i = 0; i < N; i++) {
        header.tag = i;
        intakes.offer(1, header, payload, false);
      }
    });
    console.log(JSON.stringify({ routeOpen: open, rep, sendNsPerFrame: +send.toFixed(1), intakeNsPerFrame: +receive.toFixed(1), held: intakes.heldCount }));
  }
}
if (sink === -1) console.log('unreachable');
