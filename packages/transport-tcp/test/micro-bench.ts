/**
 * Micro-benchmark of the TCP transport alone, two instances in ONE process
 * (both ends share one event loop, so numbers are rough; packages/bench runs
 * the real two-process benchmark). Not a test: run it by hand.
 *
 *   npx tsx --conditions=@tsmpi/source packages/transport-tcp/test/micro-bench.ts
 *
 * 3 rounds of 1 s each.
 *
 * - ping-pong: one 0-byte frame back and forth; reports round trips/s and us per round trip.
 * - message rate: each side sends 12 0-byte frames in a row, then awaits the
 *   peer's 12 (the SQMR pattern of papers/multichannel-parallel-queues.txt section 4).
 */
import { newFrameHeader, type FrameHeader, type TransportHandlers } from '@tsmpi/core/transport';
import { makeTcpTransports } from './tcp-harness.ts';

const SECONDS = 1;

class Counter implements TransportHandlers {
  count = 0;
  wake: (() => void) | null = null;
  want = 0;
  onArrive: ((h: FrameHeader) => void) | null = null;
  onDeliver(_src: number, h: FrameHeader): void {
    this.count++;
    if (this.onArrive !== null) this.onArrive(h);
    if (this.wake !== null && this.count >= this.want) {
      const w = this.wake;
      this.wake = null;
      w();
    }
  }
  onSent(): void {}
  onPeerLost(p: number, err: { code: string }): void {
    console.error('lost', p, err.code);
  }
  until(n: number): Promise<void> {
    if (this.count >= n) return Promise.resolve();
    this.want = n;
    return new Promise((r) => {
      this.wake = r;
    });
  }
}

async function pingPong(): Promise<void> {
  const rs = [new Counter(), new Counter()];
  const ts = await makeTcpTransports({ processCount: 2, channelCount: 1, handlers: rs });
  const h0 = { ...newFrameHeader(), kind: 1, srcEndpoint: 0, dstEndpoint: 1 };
  const h1 = { ...newFrameHeader(), kind: 1, srcEndpoint: 1, dstEndpoint: 0 };
  rs[1]!.onArrive = () => ts[1]!.send(0, h1, null, -1);
  let trips = 0;
  let done: () => void = () => {};
  const end = Date.now() + SECONDS * 1000;
  rs[0]!.onArrive = () => {
    trips++;
    if ((trips & 255) === 0 && Date.now() > end) done();
    else ts[0]!.send(1, h0, null, -1);
  };
  const t0 = process.hrtime.bigint();
  await new Promise<void>((r) => {
    done = r;
    ts[0]!.send(1, h0, null, -1);
  });
  const sec = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(`ping-pong: ${Math.round(trips / sec)} round trips/s, ${((sec / trips) * 1e6).toFixed(1)} us per round trip`);
  await Promise.all(ts.map((t) => t.close()));
}

async function messageRate(): Promise<void> {
  const rs = [new Counter(), new Counter()];
  const ts = await makeTcpTransports({ processCount: 2, channelCount: 1, handlers: rs });
  const hs = [
    { ...newFrameHeader(), kind: 1, srcEndpoint: 0, dstEndpoint: 1 },
    { ...newFrameHeader(), kind: 1, srcEndpoint: 1, dstEndpoint: 0 },
  ];
  const side = async (me: number, iterations: number): Promise<void> => {
    const peer = 1 - me;
    for (let it = 1; it <= iterations; it++) {
      for (let k = 0; k < 12; k++) ts[me]!.send(peer, hs[me]!, null, -1);
      await rs[me]!.until(it * 12);
    }
  };
  await Promise.all([side(0, 100), side(1, 100)]); // warm-up
  rs[0]!.count = 0;
  rs[1]!.count = 0;
  let iterations = 0;
  const t0 = process.hrtime.bigint();
  const end = Date.now() + SECONDS * 1000;
  while (Date.now() < end) {
    await Promise.all([side(0, 200), side(1, 200)]);
    iterations += 200;
    rs[0]!.count = 0;
    rs[1]!.count = 0;
  }
  const sec = Number(process.hrtime.bigint() - t0) / 1e9;
  const messages = iterations * 24;
  console.log(`message rate: ${Math.round(messages / sec)} msgs/s (${iterations} iterations of 12+12 in ${sec.toFixed(2)} s)`);
  await Promise.all(ts.map((t) => t.close()));
}

// Transports hold no event-loop reference (the device's job): keep the loop alive here.
const keepAlive = setInterval(() => undefined, 1 << 30);
for (let round = 0; round < 3; round++) {
  await pingPong();
  await messageRate();
}
clearInterval(keepAlive);
