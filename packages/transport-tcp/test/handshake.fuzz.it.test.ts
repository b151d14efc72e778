// testlist: { file: 'handshake.fuzz.it.test.ts', np: [1] } — real TCP transports on 127.0.0.1 attacked over raw sockets.
/**
 * Property-based fuzzing of the job-key handshake over real loopback sockets
 * against a real listening transport (issue 17). fast-check builds batches of
 * attacks, each on its own connection, written in random pieces:
 *
 *   garbage     random bytes, sometimes behind the protocol's magic
 *   truncated   a HELLO (right or wrong key) cut short: the server must time out
 *   oversized   a HELLO with the wrong key followed by up to 2 MiB of bytes
 *   replayed    a HELLO that proved the key to an earlier connection's nonce
 *   badIds      the right key, but a process index or channel this transport refuses
 *
 * For every attack the server sends its CHALLENGE and nothing more (never an
 * ACCEPT), closes the connection itself and logs exactly one warning with a
 * known reason; the attacked transport never reports a lost peer. After all
 * batches the two legitimate transports connect for the first time and
 * exchange frames both ways, all delivered in order.
 *
 * A separate test covers an authenticated peer (it has the key) that sends
 * frames with garbage kinds and then drops the connection without GOODBYE:
 * every frame is delivered as sent, the peer is reported lost (in a job, the
 * job then ends naming it), and the listener keeps serving.
 *
 * Runs: TSMPI_FUZZ_RUNS (default 20 batches here: truncated attacks wait for
 * the 300 ms handshake timeout); TSMPI_FUZZ_SEED replays a failure.
 */
import net from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader, type TransportHandlers } from '@tsmpi/core/transport';
import { HEADER_BYTES, encodeHeader } from '../src/frame-codec.ts';
import { CHALLENGE_BYTES, ClientHandshake, HANDSHAKE_STATUS, HELLO_BYTES, listenerBinding } from '../src/handshake.ts';
import { hostPort, makeTcpJob, recordingLog, tcpListener, type LogRecord } from './tcp-harness.ts';

const RUNS = Number(process.env['TSMPI_FUZZ_RUNS'] ?? '') || 20;
const SEED = process.env['TSMPI_FUZZ_SEED'] === undefined ? undefined : Number(process.env['TSMPI_FUZZ_SEED']);
const KEY = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const MAGIC = Uint8Array.of(0x54, 0x53, 0x4d, 0x50, 0x49, 0x00, 0x02, 0x00);
const REASONS = new Set([
  'bad magic in hello',
  'job key proof does not match',
  'handshake timed out',
  'process index out of range',
  'channel not owned by this transport',
]);

class Rec implements TransportHandlers {
  frames: { src: number; seq: number }[] = [];
  lost: { process: number; code: string }[] = [];
  onDeliver(src: number, h: FrameHeader): void {
    this.frames.push({ src, seq: h.seq });
  }
  onSent(): void {}
  onPeerLost(process: number, err: { code: string }): void {
    this.lost.push({ process, code: err.code });
  }
}

async function waitUntil(cond: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** What the attacker sends once it has the server's CHALLENGE. */
type Plan = (challenge: Uint8Array) => Uint8Array;

interface Outcome {
  received: number;
}

/**
 * Connects, waits for the CHALLENGE, writes plan(challenge) in pieces cut at
 * `cuts`, and resolves when the connection has closed. Unless
 * `endsAfterWriting`, we never close it first, so every outcome is the
 * server's decision.
 */
function attack(address: string, plan: Plan, cuts: number[], endsAfterWriting = false): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const s = net.connect(hostPort(address));
    const got: Buffer[] = [];
    let received = 0;
    let isSent = false;
    const guard = setTimeout(() => {
      s.destroy();
      reject(new Error('the server kept an attacking connection open for 20 s'));
    }, 20_000);
    s.on('data', (d: Buffer) => {
      received += d.length;
      got.push(d);
      if (isSent || received < CHALLENGE_BYTES) return;
      isSent = true;
      const bytes = plan(Buffer.concat(got).subarray(0, CHALLENGE_BYTES));
      const bounds = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
      bounds.push(bytes.length);
      let from = 0;
      const writeNext = (): void => {
        const to = bounds.shift();
        if (s.destroyed) return;
        if (to === undefined) {
          if (endsAfterWriting) s.end();
          return;
        }
        if (to > from) s.write(bytes.subarray(from, to));
        from = to;
        setImmediate(writeNext);
      };
      writeNext();
    });
    s.on('error', () => {}); // a reset after the server's destroy is expected
    s.on('close', () => {
      clearTimeout(guard);
      resolve({ received });
    });
  });
}

/** A HELLO answering `challenge` as (process, channel) with `key`, made for the listener `listener` (handshake.ts). */
function hello(key: string, process: number, channel: number, challenge: Uint8Array, listener: string): Uint8Array {
  const hs = new ClientHandshake(key, process, channel, listener);
  expect(hs.feed(challenge)).toBe(HANDSHAKE_STATUS.PENDING);
  return hs.hello!;
}

type Attack =
  | { kind: 'garbage'; bytes: Uint8Array; hasMagic: boolean }
  | { kind: 'truncated'; hasKey: boolean; at: number }
  | { kind: 'oversized'; extra: number }
  | { kind: 'replayed' }
  | { kind: 'relayed' }
  | { kind: 'badIds'; process: number; channel: number };

const attackArb: fc.Arbitrary<Attack> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('garbage' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 300 }), hasMagic: fc.boolean() }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('truncated' as const), hasKey: fc.boolean(), at: fc.integer({ min: 0, max: HELLO_BYTES - 1 }) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('oversized' as const), extra: fc.integer({ min: 1, max: 2 << 20 }) }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'replayed' as const }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'relayed' as const }), weight: 1 },
  {
    arbitrary: fc.oneof(
      fc.record({ kind: fc.constant('badIds' as const), process: fc.integer({ min: 2, max: 0xffffffff }), channel: fc.integer({ min: 0, max: 1 }) }),
      fc.record({ kind: fc.constant('badIds' as const), process: fc.integer({ min: 0, max: 1 }), channel: fc.integer({ min: 2, max: 0xffffffff }) }),
    ),
    weight: 2,
  },
);

/** Runs one attack; returns how many refusals it should have caused. */
async function run(address: string, a: Attack, cuts: number[]): Promise<number> {
  const outcomes: Outcome[] = [];
  switch (a.kind) {
    case 'garbage':
      outcomes.push(await attack(address, () => (a.hasMagic ? Buffer.concat([MAGIC, a.bytes]) : a.bytes.length > 0 && a.bytes[0] === MAGIC[0] ? Uint8Array.of(0, ...a.bytes) : a.bytes), cuts));
      break;
    case 'truncated':
      // `at` 0 sends nothing: a silent connection, refused by the timeout too.
      outcomes.push(await attack(address, (c) => hello(a.hasKey ? KEY : 'not-the-key', 0, 0, c, tcpListener(address)).subarray(0, a.at), cuts));
      break;
    case 'oversized':
      outcomes.push(await attack(address, (c) => Buffer.concat([hello('not-the-key', 0, 0, c, tcpListener(address)), Buffer.alloc(a.extra, 0xab)]), cuts));
      break;
    case 'replayed': {
      // Capture a HELLO that really proves the key to connection 1's nonce, spoil
      // connection 1 with a flipped MAC bit, then replay the good HELLO on connection 2.
      let captured: Uint8Array | null = null;
      outcomes.push(await attack(address, (c) => {
        captured = hello(KEY, 0, 1, c, tcpListener(address));
        const spoiled = Uint8Array.from(captured);
        spoiled[HELLO_BYTES - 1]! ^= 1;
        return spoiled;
      }, cuts));
      outcomes.push(await attack(address, () => captured!, cuts));
      break;
    }
    case 'relayed':
      // The key and a good identity, but made for a same-host socket: carried from one to this TCP port.
      outcomes.push(await attack(address, (c) => hello(KEY, 0, 1, c, listenerBinding('unix', '/tmp/tsmpi-relay/t-1-1')), cuts));
      break;
    case 'badIds':
      outcomes.push(await attack(address, (c) => hello(KEY, a.process, a.channel, c, tcpListener(address)), cuts));
      break;
  }
  for (const o of outcomes) {
    expect(o.received, `${a.kind}: the challenge and nothing more (no ACCEPT)`).toBe(CHALLENGE_BYTES);
  }
  return outcomes.length;
}

function refusals(records: LogRecord[]): string[] {
  return records.filter((r) => r.msg === 'refused a connection that failed the handshake').map((r) => (r.obj as { reason: string }).reason);
}

function hdr(seq: number): FrameHeader {
  return { ...newFrameHeader(), kind: 1, seq, srcEndpoint: 0, dstEndpoint: 1 };
}

describe('job-key handshake under fuzzing over real sockets (fast-check)', () => {
  it('garbage, truncated, oversized, replayed and wrong-id handshakes are refused and logged; real peers then connect', async () => {
    const log = recordingLog();
    const rs = [new Rec(), new Rec()];
    const { transports: ts, addresses } = await makeTcpJob({ processCount: 2, channelCount: 2, handlers: rs, log, jobKey: KEY, tuning: { handshakeTimeoutMs: 300 } });
    try {
      let expected = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(attackArb, { minLength: 1, maxLength: 3 }), fc.array(fc.nat(), { maxLength: 6 }), async (attacks, cuts) => {
          const counts = await Promise.all(attacks.map((a) => run(addresses[1]!, a, cuts)));
          expected += counts.reduce((x, y) => x + y, 0);
          // The warning is logged before the socket is destroyed, so it is already there.
          const reasons = refusals(log.records);
          expect(reasons.length).toBe(expected);
          expect(log.records.length, 'nothing logged but the refusals').toBe(expected);
          for (const r of reasons) expect(REASONS.has(r), `unknown reason ${r}`).toBe(true);
          expect(rs[1]!.lost).toEqual([]);
          expect(rs[1]!.frames).toEqual([]);
        }),
        SEED === undefined ? { numRuns: RUNS } : { numRuns: RUNS, seed: SEED },
      );
      expect(log.records.filter((r) => r.level === 'error')).toEqual([]);
      // Now the legitimate processes connect (lazily, for the first time) and talk both ways.
      for (let i = 0; i < 200; i++) {
        ts[0]!.send(1, hdr(i), Uint8Array.of(i & 255), -1);
        ts[1]!.send(0, hdr(i), null, -1);
      }
      await waitUntil(() => rs[1]!.frames.length === 200 && rs[0]!.frames.length === 200, 'legitimate frames after the attacks');
      expect(rs[1]!.frames).toEqual(Array.from({ length: 200 }, (_, seq) => ({ src: 0, seq })));
      expect(rs[0]!.frames).toEqual(Array.from({ length: 200 }, (_, seq) => ({ src: 1, seq })));
      expect(rs[0]!.lost.length + rs[1]!.lost.length).toBe(0);
      await Promise.all(ts.map((t) => t.close()));
    } finally {
      for (const t of ts) t.destroy();
    }
  });

  it('an authenticated peer that sends frames with garbage kinds and drops the connection is reported lost; the listener keeps serving', async () => {
    // Payload lengths stay small: the transport accepts any u32 length from an
    // authenticated peer and allocates it when the payload spans reads (the
    // limits are a later part of issue 17, see docs/RELIABILITY.md).
    const frameArb = fc.tuple(fc.integer({ min: 0, max: 254 }), fc.nat(), fc.uint8Array({ maxLength: 200 }));
    await fc.assert(
      fc.asyncProperty(fc.array(frameArb, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 4 }), async (frames, cuts) => {
        // A fresh job each time: a transport reports each peer lost only once. Nothing here waits for the
        // handshake timeout, so it is the default (10 s): a correct handshake slowed by a loaded machine is not refused.
        const log = recordingLog();
        const rs = [new Rec(), new Rec()];
        const { transports: ts, addresses } = await makeTcpJob({ processCount: 2, channelCount: 2, handlers: rs, log, jobKey: KEY });
        try {
          const o = await attack(addresses[1]!, (c) => {
            const hs = new ClientHandshake(KEY, 0, 1, tcpListener(addresses[1]!));
            hs.feed(c);
            const parts: Uint8Array[] = [hs.hello!];
            for (const [kind, seq, payload] of frames) {
              const h = new Uint8Array(HEADER_BYTES);
              encodeHeader(h, 0, { ...hdr(seq), kind }, payload.length);
              parts.push(h, payload);
            }
            return Buffer.concat(parts);
          }, cuts, true);
          expect(o.received).toBeGreaterThan(CHALLENGE_BYTES); // the ACCEPT came: the key was right
          await waitUntil(() => rs[1]!.lost.length === 1, 'the peer reported lost');
          expect(rs[1]!.lost).toEqual([{ process: 0, code: 'TSMPI_ERR_PEER_CLOSED' }]);
          expect(log.records.filter((r) => r.msg === 'peer lost').map((r) => (r.obj as { peer: number }).peer)).toEqual([0]);
          // Every frame was delivered as sent, garbage kinds included: judging kinds is the device's job.
          expect(rs[1]!.frames).toEqual(frames.map(([, seq]) => ({ src: 0, seq })));
          // Still serving: a garbage connection gets its challenge and is refused.
          expect(await run(addresses[1]!, { kind: 'garbage', bytes: Uint8Array.of(1, 2, 3), hasMagic: false }, [])).toBe(1);
          expect(refusals(log.records)).toEqual(['bad magic in hello']);
        } finally {
          for (const t of ts) t.destroy();
        }
      }),
      { numRuns: Math.max(1, Math.ceil(RUNS / 2)), ...(SEED === undefined ? {} : { seed: SEED }) },
    );
  });
});
