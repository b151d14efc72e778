/**
 * The transport conformance suite: what every implementation of interface.ts
 * must do, written once and run against each transport (loopback in core's
 * unit tests, TCP with real sockets in transport-tcp's integration tests),
 * like MPICH's netmod API checks or Open MPI's btl tests.
 *
 * The test functions are injected (`t.describe`, `t.it`, `t.expect`), so core
 * has no test-framework import. `make` builds `processCount` wired-up,
 * started transports (listen, exchange addresses, start) with the given
 * handlers; the suite closes or destroys everything it made.
 *
 * Covered: header fields round trip; per-(s, d) order under many frames over
 * several turns; many frames queued in one turn; zero-length and 1 MiB
 * payloads (copied); payloadTarget; channel selection channelOf(s, d, J, C)
 * seen in channelStats, with one and with two endpoints per process; onSent
 * once per referenced payload; the high-water mark; close() delivering what
 * was queued before it, also when every process closes at once; a destroyed
 * peer reported once through onPeerLost; a send to a closed peer reported
 * through onPeerLost.
 */
import { channelOf, newFrameHeader, type FrameHeader, type Transport, type TransportHandlers } from './interface.ts';

/** Builds `processCount` started transports, process i using handlers[i]. */
export type MakeTransports = (spec: {
  readonly processCount: number;
  readonly channelCount: number;
  /** endpoints per process (TransportOptions.endpointsPerProcess); absent: 1 */
  readonly endpointsPerProcess?: number;
  readonly handlers: readonly TransportHandlers[];
}) => Promise<Transport[]> | Transport[];

/** The assertions the suite uses (a subset of vitest/jest `expect`). */
export interface ConformanceAssertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toBeGreaterThan(expected: number): void;
}

/** The test functions the suite is written against (vitest's describe/it/expect fit). */
export interface ConformanceTestApi {
  describe(name: string, fn: () => void): void;
  it(name: string, fn: () => Promise<void>, timeoutMs?: number): void;
  expect(actual: unknown): ConformanceAssertion;
}

const TEST_TIMEOUT_MS = 30_000;
const WAIT_TIMEOUT_MS = 20_000;
const MIB = 1024 * 1024;

interface Received {
  src: number;
  header: FrameHeader;
  payload: Uint8Array;
}

/** Records everything a transport reports; payloads are copied only when asked. */
class Recorder implements TransportHandlers {
  readonly frames: Received[] = [];
  readonly sentTokens: number[] = [];
  readonly lost: { process: number; code: string }[] = [];
  keepPayloads = true;
  target: ((src: number, header: FrameHeader) => Uint8Array | null) | null = null;
  targetCalls = 0;

  onDeliver(src: number, header: FrameHeader, payload: Uint8Array): void {
    this.frames.push({ src, header: { ...header }, payload: this.keepPayloads ? payload.slice() : new Uint8Array(0) });
  }
  onSent(token: number): void {
    this.sentTokens.push(token);
  }
  onPeerLost(process: number, err: { code: string }): void {
    this.lost.push({ process, code: err.code });
  }
  payloadTarget(src: number, header: FrameHeader): Uint8Array | null {
    this.targetCalls++;
    return this.target === null ? null : this.target(src, header);
  }
}

function header(fields: Partial<FrameHeader>): FrameHeader {
  return { ...newFrameHeader(), kind: 1, ...fields };
}

function pattern(length: number, seed: number): Uint8Array {
  const b = new Uint8Array(length);
  for (let i = 0; i < length; i++) b[i] = (i * 31 + seed) & 255;
  return b;
}

function isPattern(b: Uint8Array, length: number, seed: number): boolean {
  if (b.length !== length) return false;
  for (let i = 0; i < length; i++) if (b[i] !== ((i * 31 + seed) & 255)) return false;
  return true;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitUntil(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_TIMEOUT_MS;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

/** Runs `body` with fresh transports and recorders, destroying the transports afterwards. */
async function withTransports(
  make: MakeTransports, processCount: number, channelCount: number,
  body: (ts: Transport[], rs: Recorder[]) => Promise<void>,
  endpointsPerProcess?: number,
): Promise<void> {
  const rs = Array.from({ length: processCount }, () => new Recorder());
  const ts = await make({ processCount, channelCount, handlers: rs, ...(endpointsPerProcess === undefined ? {} : { endpointsPerProcess }) });
  try {
    await body(ts, rs);
  } finally {
    for (const t of ts) t.destroy();
  }
}

/**
 * Declares the conformance suite for one transport.
 * @param name shown in the describe block
 * @param make builds started, wired-up transports
 * @param t describe/it/expect of the test framework
 */
export function transportConformance(name: string, make: MakeTransports, t: ConformanceTestApi): void {
  const { describe, it, expect } = t;

  describe(`transport conformance: ${name}`, () => {
    it('carries every header field and the payload bytes exactly', async () => {
      await withTransports(make, 2, 1, async (ts, rs) => {
        const h = header({
          kind: 7, flags: 3, contextId: 0xffff, srcEndpoint: 0xfffffffe, dstEndpoint: 1, tag: -123456,
          seq: 0xffffffff, aux: 0x80000000, aux2: 12345, payloadLength: 5,
        });
        ts[0]!.send(1, h, Uint8Array.of(1, 2, 3, 4, 5), -1);
        h.tag = 0; // the transport copied the header
        await waitUntil(() => rs[1]!.frames.length === 1, 'one frame');
        const got = rs[1]!.frames[0]!;
        expect(got.src).toBe(0);
        expect(got.header).toEqual({
          kind: 7, flags: 3, contextId: 0xffff, srcEndpoint: 0xfffffffe, dstEndpoint: 1, tag: -123456,
          seq: 0xffffffff, aux: 0x80000000, aux2: 12345, payloadLength: 5,
        });
        expect(Array.from(got.payload)).toEqual([1, 2, 3, 4, 5]);
      });
    }, TEST_TIMEOUT_MS);

    it('keeps per-(s, d) order under many frames over several turns', async () => {
      const P = 3;
      const C = 3;
      const perPair = 1500;
      const J = 2; // endpoints per process: endpoint id = process * J + k
      await withTransports(make, P, C, async (ts, rs) => {
        for (const r of rs) r.keepPayloads = false;
        const checks = rs.map(() => new Map<string, number>());
        let bad = 0;
        rs.forEach((r, p) => {
          r.onDeliver = (src, h, payload) => {
            const key = `${h.srcEndpoint}>${h.dstEndpoint}`;
            const next = checks[p]!.get(key) ?? 0;
            if (h.seq !== next || Math.floor(h.srcEndpoint / J) !== src || !isPattern(payload, h.seq % 97, h.seq + h.srcEndpoint)) bad++;
            checks[p]!.set(key, next + 1);
            r.frames.push({ src, header: h, payload });
          };
        });
        const hdr = newFrameHeader();
        hdr.kind = 1;
        const expected = P * (P - 1) * J * J * perPair;
        let total = 0;
        for (let seq = 0; seq < perPair; seq++) {
          for (let s = 0; s < P * J; s++) {
            for (let d = 0; d < P * J; d++) {
              const sp = Math.floor(s / J);
              const dp = Math.floor(d / J);
              if (sp === dp) continue;
              hdr.srcEndpoint = s;
              hdr.dstEndpoint = d;
              hdr.seq = seq;
              ts[sp]!.send(dp, hdr, pattern(seq % 97, seq + s), -1);
              total++;
            }
          }
          if (seq % 250 === 249) await new Promise((r) => setImmediate(r));
        }
        expect(total).toBe(expected);
        await waitUntil(() => rs.reduce((n, r) => n + r.frames.length, 0) === expected, `${expected} frames`);
        expect(bad).toBe(0);
      });
    }, TEST_TIMEOUT_MS);

    it('delivers every frame queued in one turn', async () => {
      await withTransports(make, 2, 2, async (ts, rs) => {
        const n = 20_000;
        const h = header({ srcEndpoint: 0, dstEndpoint: 1 });
        const small = Uint8Array.of(9, 8, 7);
        for (let i = 0; i < n; i++) {
          h.seq = i;
          ts[0]!.send(1, h, i % 2 === 0 ? small : null, -1);
        }
        await waitUntil(() => rs[1]!.frames.length === n, `${n} frames`);
        let inOrder = true;
        rs[1]!.frames.forEach((f, i) => {
          if (f.header.seq !== i || f.payload.length !== (i % 2 === 0 ? 3 : 0)) inOrder = false;
        });
        expect(inOrder).toBe(true);
      });
    }, TEST_TIMEOUT_MS);

    it('carries zero-length and 1 MiB payloads (copied when sentToken < 0)', async () => {
      await withTransports(make, 2, 1, async (ts, rs) => {
        const big = pattern(MIB, 5);
        ts[0]!.send(1, header({ seq: 0 }), null, -1);
        ts[0]!.send(1, header({ seq: 1 }), new Uint8Array(0), -1);
        ts[0]!.send(1, header({ seq: 2 }), big, -1);
        ts[0]!.send(1, header({ seq: 3 }), null, -1);
        big.fill(0); // copied before send() returned
        await waitUntil(() => rs[1]!.frames.length === 4, '4 frames');
        const f = rs[1]!.frames;
        expect(f.map((x) => x.header.seq)).toEqual([0, 1, 2, 3]);
        expect(f.map((x) => x.payload.length)).toEqual([0, 0, MIB, 0]);
        expect(f.map((x) => x.header.payloadLength)).toEqual([0, 0, MIB, 0]);
        expect(isPattern(f[2]!.payload, MIB, 5)).toBe(true);
      });
    }, TEST_TIMEOUT_MS);

    it('receives large payloads into payloadTarget', async () => {
      await withTransports(make, 2, 1, async (ts, rs) => {
        const into = new Uint8Array(MIB);
        let deliveredInto = false;
        const r = rs[1]!;
        r.target = (src, h) => (src === 0 && h.tag === 77 ? into : null);
        r.onDeliver = (src, h, payload) => {
          if (h.tag === 77) deliveredInto = payload === into;
          r.frames.push({ src, header: { ...h }, payload: payload.slice() });
        };
        ts[0]!.send(1, header({ tag: 77, payloadLength: MIB }), pattern(MIB, 1), -1);
        ts[0]!.send(1, header({ tag: 78, payloadLength: MIB }), pattern(MIB, 2), -1);
        await waitUntil(() => r.frames.length === 2, '2 frames');
        expect(r.targetCalls).toBeGreaterThan(1);
        expect(deliveredInto).toBe(true);
        expect(isPattern(into, MIB, 1)).toBe(true);
        expect(isPattern(r.frames[1]!.payload, MIB, 2)).toBe(true);
      });
    }, TEST_TIMEOUT_MS);

    it('selects channel (s + d) mod C with one endpoint per process, as channelStats shows', async () => {
      await withTransports(make, 2, 4, async (ts, rs) => {
        const pairs: [number, number][] = [[0, 1], [2, 1], [0, 3], [4, 4], [5, 6], [1, 0], [7, 7]];
        for (const [s, d] of pairs) ts[0]!.send(1, header({ srcEndpoint: s, dstEndpoint: d }), null, -1);
        await waitUntil(() => rs[1]!.frames.length === pairs.length, 'all frames');
        const want = [0, 0, 0, 0];
        for (const [s, d] of pairs) want[(s + d) % 4]!++;
        expect(ts[0]!.channelStats().map((x) => x.sent)).toEqual(want);
        expect(ts[1]!.channelStats().map((x) => x.received)).toEqual(want);
        expect(ts[0]!.channelStats().map((x) => x.received)).toEqual([0, 0, 0, 0]);
      });
    }, TEST_TIMEOUT_MS);

    it('spreads the endpoints of a process over the channels (two endpoints per process, channelOf)', async () => {
      // Endpoint i of process 0 talks to endpoint i of process 1 (0 <-> 2, 1 <-> 3): the paper's (s + d) mod C
      // on global ranks put both pairs on channel 0; each pair must have a channel of its own, both ways.
      await withTransports(make, 2, 2, async (ts, rs) => {
        const pairs: [number, number][] = [[0, 2], [1, 3], [1, 3], [0, 3]];
        for (const [s, d] of pairs) ts[0]!.send(1, header({ srcEndpoint: s, dstEndpoint: d }), null, -1);
        for (const [s, d] of pairs) ts[1]!.send(0, header({ srcEndpoint: d, dstEndpoint: s }), null, -1);
        await waitUntil(() => rs[1]!.frames.length === pairs.length && rs[0]!.frames.length === pairs.length, 'all frames');
        const want = [0, 0];
        for (const [s, d] of pairs) want[channelOf(s, d, 2, 2)]!++;
        expect(want).toEqual([2, 2]); // (s + d) mod C: [3, 1]
        expect(ts[0]!.channelStats().map((x) => x.sent)).toEqual(want);
        expect(ts[1]!.channelStats().map((x) => x.received)).toEqual(want);
        expect(ts[1]!.channelStats().map((x) => x.sent)).toEqual(want);
        expect(ts[0]!.channelStats().map((x) => x.received)).toEqual(want);
      }, 2);
    }, TEST_TIMEOUT_MS);

    it('calls onSent once for every payload sent by reference', async () => {
      await withTransports(make, 2, 2, async (ts, rs) => {
        const sizes = [0, 10, 1000, 20_000, 100_000, MIB, 3, MIB + 7];
        sizes.forEach((size, token) => {
          ts[0]!.send(1, header({ seq: token, srcEndpoint: token, dstEndpoint: 1 }), pattern(size, token), token);
        });
        ts[0]!.send(1, header({ seq: 99, srcEndpoint: 0, dstEndpoint: 1 }), pattern(50, 99), -1);
        await waitUntil(() => rs[1]!.frames.length === sizes.length + 1 && rs[0]!.sentTokens.length >= sizes.length, 'frames and onSent');
        await sleep(20);
        expect([...rs[0]!.sentTokens].sort((a, b) => a - b)).toEqual(sizes.map((_, i) => i));
        for (const f of rs[1]!.frames) {
          const seq = f.header.seq;
          expect(isPattern(f.payload, seq === 99 ? 50 : sizes[seq]!, seq)).toBe(true);
        }
      });
    }, TEST_TIMEOUT_MS);

    it('returns false past the high-water mark and still delivers everything', async () => {
      await withTransports(make, 2, 1, async (ts, rs) => {
        const chunk = pattern(MIB, 3);
        let sent = 0;
        let sawFalse = false;
        while (!sawFalse && sent < 256) {
          sawFalse = !ts[0]!.send(1, header({ seq: sent }), chunk, -1);
          sent++;
        }
        expect(sawFalse).toBe(true);
        rs[1]!.keepPayloads = false;
        await waitUntil(() => rs[1]!.frames.length === sent, `${sent} frames`);
      });
    }, TEST_TIMEOUT_MS);

    it('close() delivers the frames queued before it', async () => {
      await withTransports(make, 2, 2, async (ts, rs) => {
        for (let i = 0; i < 100; i++) ts[0]!.send(1, header({ seq: i, srcEndpoint: i % 2, dstEndpoint: 0 }), pattern(i, i), -1);
        ts[0]!.send(1, header({ seq: 100 }), pattern(MIB, 100), -1);
        await ts[0]!.close();
        await waitUntil(() => rs[1]!.frames.length === 101, '101 frames');
        expect(rs[1]!.frames.every((f) => isPattern(f.payload, f.header.seq === 100 ? MIB : f.header.seq, f.header.seq))).toBe(true);
        await sleep(20);
        await ts[1]!.close();
        expect(rs[0]!.lost.length + rs[1]!.lost.length).toBe(0);
      });
    }, TEST_TIMEOUT_MS);

    it('loses nothing and reports no loss when every process closes at once', async () => {
      const P = 3;
      await withTransports(make, P, 2, async (ts, rs) => {
        const sendAll = (round: number): void => {
          for (let s = 0; s < P; s++) {
            for (let d = 0; d < P; d++) {
              if (s === d) continue;
              for (let k = 0; k < 2; k++) ts[s]!.send(d, header({ seq: round, srcEndpoint: s, dstEndpoint: d + k }), pattern(100, round), -1);
            }
          }
        };
        sendAll(0); // warm up: every channel connected
        await waitUntil(() => rs.every((r) => r.frames.length === (P - 1) * 2), 'warm-up frames');
        sendAll(1);
        await Promise.all(ts.map((x) => x.close()));
        await waitUntil(() => rs.every((r) => r.frames.length === (P - 1) * 4), 'all frames');
        expect(rs.reduce((n, r) => n + r.lost.length, 0)).toBe(0);
      });
    }, TEST_TIMEOUT_MS);

    it('reports a destroyed peer once through onPeerLost', async () => {
      await withTransports(make, 3, 1, async (ts, rs) => {
        for (let s = 0; s < 3; s++) for (let d = 0; d < 3; d++) if (s !== d) ts[s]!.send(d, header({ srcEndpoint: s, dstEndpoint: d }), null, -1);
        await waitUntil(() => rs.every((r) => r.frames.length === 2), 'warm-up frames');
        ts[2]!.destroy();
        await waitUntil(() => rs[0]!.lost.length > 0 && rs[1]!.lost.length > 0, 'onPeerLost');
        ts[0]!.send(2, header({ srcEndpoint: 0, dstEndpoint: 2 }), null, -1); // must not throw
        await sleep(50);
        for (const r of [rs[0]!, rs[1]!]) expect(r.lost).toEqual([{ process: 2, code: 'TSMPI_ERR_PEER_CLOSED' }]);
        expect(rs[2]!.lost.length).toBe(0);
        // the survivors still talk
        ts[0]!.send(1, header({ seq: 5, srcEndpoint: 0, dstEndpoint: 1 }), null, -1);
        await waitUntil(() => rs[1]!.frames.some((f) => f.header.seq === 5), 'survivor traffic');
      });
    }, TEST_TIMEOUT_MS);

    it('reports a send to a closed peer through onPeerLost', async () => {
      await withTransports(make, 2, 1, async (ts, rs) => {
        await ts[1]!.close();
        await sleep(20);
        expect(rs[0]!.lost.length).toBe(0);
        ts[0]!.send(1, header({ srcEndpoint: 0, dstEndpoint: 1 }), null, -1);
        await waitUntil(() => rs[0]!.lost.length > 0, 'onPeerLost');
        expect(rs[0]!.lost.map((l) => l.process)).toEqual([1]);
        expect(rs[0]!.lost[0]!.code.startsWith('TSMPI_ERR_')).toBe(true);
      });
    }, TEST_TIMEOUT_MS);
  });
}
