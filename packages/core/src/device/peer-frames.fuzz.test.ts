/**
 * Property-based fuzzing of the frames a device takes from an authenticated peer (issue 35): the
 * transport has checked the job key and the frame's length against the eager limit, so whatever
 * else a frame says reaches the device as it is. Two simulated ranks over the loopback transport
 * (loopback-job.test-util.ts); rank 1 holds live state (a posted receive, a rendezvous receive
 * waiting for its data, a synchronous send waiting for its SYNC_ACK, a rendezvous send waiting for
 * its CTS), and "rank 0" sends it frames of every kind (CANCEL_SEND and CANCEL_ACK included, and
 * unknown kinds) with every field at its boundaries: endpoints of no process or of the wrong one, request slots past the table, of free
 * slots or of other requests, lengths against the eager limit, flags, tags and contexts.
 *
 * Properties, for every sequence of frames:
 *   - the device never throws from a transport upcall (a crash of the rank);
 *   - a frame it refuses fails it as a protocol error naming the peer: ERR_PROC_FAILED, process 0
 *     blamed, its message naming "process 0" (or, when a forged frame made rank 1 send what rank
 *     0 never asked for, rank 0 fails the same way naming process 1);
 *   - otherwise it still works (no hang): a correct message sent afterwards is received.
 *
 * Runs: TSMPI_FUZZ_RUNS (default 300); TSMPI_FUZZ_SEED replays a failure.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader, type TransportFactory } from '../transport/index.ts';
import { createLoopbackFactory } from '../transport/kit.ts';
import { ERR_PROC_FAILED, type MPIError } from '../util/index.ts';
import type { DevRequest } from './dev-request.ts';
import { Device } from './device.ts';
import { CTX, EAGER_LIMIT, done, recv, send, silentLog } from './loopback-job.test-util.ts';
import { SharedState } from './shared-state.ts';

const RUNS = Number(process.env['TSMPI_FUZZ_RUNS'] ?? '') || 300;
const SEED = process.env['TSMPI_FUZZ_SEED'] === undefined ? undefined : Number(process.env['TSMPI_FUZZ_SEED']);
const SLOTS = 16;
const U32_MAX = 0xffff_ffff;

const running: Device[] = [];
afterEach(() => {
  for (const d of running.splice(0)) d.destroy();
});

/** Two devices over loopback, as simulatedJob makes them, with every upcall of rank 1 watched for exceptions. */
async function watchedJob(thrown: unknown[]): Promise<[Device, Device]> {
  const loopback = createLoopbackFactory(2, 1);
  const factory: TransportFactory = (options) => {
    if (options.process !== 1) return loopback(options);
    const h = options.handlers;
    const watch = <A extends unknown[], R>(f: ((...a: A) => R) | undefined, none: R) => (f === undefined ? undefined : (...a: A): R => {
      try {
        return f(...a);
      } catch (err) {
        thrown.push(err);
        return none;
      }
    });
    return loopback({
      ...options,
      handlers: {
        onDeliver: watch(h.onDeliver.bind(h), undefined)!,
        onSent: watch(h.onSent.bind(h), undefined)!,
        onPeerLost: watch(h.onPeerLost.bind(h), undefined)!,
        ...(h.payloadTarget === undefined ? {} : { payloadTarget: watch(h.payloadTarget.bind(h), null)! }),
      },
    });
  };
  const devices = [0, 1].map((p) => new Device({
    process: p, processCount: 2, endpointsPerProcess: 1, eagerLimit: EAGER_LIMIT, channels: 1, jobKey: 'k', listenHost: '127.0.0.1',
    transportFactory: factory, log: silentLog, threadId: 0, hosted: [0], statsRow: 0, refcount: 'predefined',
  }, SharedState.create({ processCount: 2, endpointsPerProcess: 1, channels: 1, matching: 'parallel', requestSlots: SLOTS, multithreaded: false, blockedSlotBytes: 4 })));
  const addresses = await Promise.all(devices.map((d) => d.listen()));
  for (const d of devices) d.start(addresses as string[]);
  running.push(...devices);
  return [devices[0]!, devices[1]!];
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Resolves with r once done, or rejects naming `what` after 5 s (a hang, not a timing). */
function within(r: DevRequest, what: string): Promise<DevRequest> {
  return Promise.race([done(r), new Promise<DevRequest>((_, reject) => setTimeout(() => reject(new Error(`hang: ${what}`)), 5_000))]);
}

// ---- generators: every field at its boundaries ----

const u32Arb = fc.oneof(
  fc.constantFrom(0, 1, 2, 3, SLOTS - 1, SLOTS, SLOTS + 1, EAGER_LIMIT, EAGER_LIMIT + 1, 0x7fff_ffff, 0x8000_0000, U32_MAX - 1, U32_MAX),
  fc.nat({ max: 64 }),
  fc.integer({ min: 0, max: U32_MAX }),
);
const endpointArb = fc.oneof({ arbitrary: fc.constantFrom(0, 1), weight: 4 }, { arbitrary: u32Arb, weight: 1 });
const slotArb = fc.oneof({ arbitrary: fc.nat({ max: SLOTS + 1 }), weight: 4 }, { arbitrary: u32Arb, weight: 1 });
const frameArb = fc.record({
  kind: fc.oneof({ arbitrary: fc.integer({ min: 1, max: 9 }), weight: 6 }, { arbitrary: fc.integer({ min: 0, max: 255 }), weight: 1 }),
  flags: fc.oneof(fc.constantFrom(0, 1, 2, 3), fc.integer({ min: 0, max: 255 })),
  contextId: fc.oneof(fc.constantFrom(CTX, 0, 1, CTX + 1, 0xffff), fc.integer({ min: 0, max: 0xffff })),
  srcEndpoint: endpointArb,
  dstEndpoint: endpointArb,
  tag: fc.oneof(fc.constantFrom(0, 1, 5, -1, -2, 0x7fff_ffff, -(2 ** 31)), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
  seq: u32Arb,
  aux: slotArb,
  aux2: fc.oneof(slotArb, u32Arb),
  payload: fc.oneof(
    { arbitrary: fc.constant(0), weight: 3 },
    { arbitrary: fc.constantFrom(1, 8, EAGER_LIMIT - 1, EAGER_LIMIT), weight: 2 },
    // msgpack-looking bytes for object frames: a map, an array, junk
    { arbitrary: fc.constant(-1), weight: 1 },
  ),
  bytes: fc.uint8Array({ maxLength: 16 }),
});
type FuzzFrame = typeof frameArb extends fc.Arbitrary<infer T> ? T : never;

function toWire(f: FuzzFrame): { header: FrameHeader; payload: Uint8Array } {
  const payload = f.payload === -1 ? Uint8Array.of(0x81, 0xa1, 0x61, ...f.bytes) : new Uint8Array(f.payload).fill(f.bytes[0] ?? 0x55);
  const header = { ...newFrameHeader(), kind: f.kind, flags: f.flags, contextId: f.contextId, srcEndpoint: f.srcEndpoint >>> 0, dstEndpoint: f.dstEndpoint >>> 0, tag: f.tag | 0, seq: f.seq >>> 0, aux: f.aux >>> 0, aux2: f.aux2 >>> 0, payloadLength: payload.length };
  return { header, payload };
}

describe('device: frames from an authenticated peer under fuzzing (fast-check, loopback)', () => {
  it('every kind, every field at its boundaries: a protocol error naming the peer, never a throw or a hang', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(frameArb, { minLength: 1, maxLength: 6 }), async (frames) => {
        const thrown: unknown[] = [];
        const [d0, d1] = await watchedJob(thrown);
        const fatal: { err: MPIError; lost: number | null }[] = [];
        d1.onFatal = (err, lost) => fatal.push({ err, lost });
        // Rank 0 is honest, but what rank 1 does on a forged frame (a forged CTS makes it send data
        // rank 0 never asked for) may be a protocol error of rank 1's for rank 0: named alike.
        const fatal0: { err: MPIError; lost: number | null }[] = [];
        d0.onFatal = (err, lost) => fatal0.push({ err, lost });
        // Live state on rank 1: a posted receive, a rendezvous receive with its CTS sent, a
        // synchronous send and a rendezvous send to rank 0 that rank 0 has not matched.
        const posted = recv(d1, 1, 0, 1, 64);
        const bigIn = recv(d1, 1, 0, 2, 4 * EAGER_LIMIT);
        send(d0, 0, 1, 2, new Uint8Array(4 * EAGER_LIMIT));
        const syncOut = send(d1, 1, 0, 3, Uint8Array.of(7), true);
        const bigOut = send(d1, 1, 0, 4, new Uint8Array(3 * EAGER_LIMIT));
        for (let i = 0; i < 3; i++) await turn();
        for (const f of frames) {
          const { header, payload } = toWire(f);
          d0.transport!.send(1, header, payload, -1);
        }
        for (let i = 0; i < 4; i++) await turn();
        expect(thrown.map((e) => String((e as Error).stack ?? e)), 'an upcall threw').toEqual([]);
        if (fatal.length > 0) {
          const { err, lost } = fatal[0]!;
          expect(err.errorClass, err.message).toBe(ERR_PROC_FAILED);
          expect(lost).toBe(0);
          expect(err.message).toMatch(/process 0\b/);
          return;
        }
        if (fatal0.length > 0) {
          const { err, lost } = fatal0[0]!;
          expect(err.errorClass, err.message).toBe(ERR_PROC_FAILED);
          expect(lost).toBe(1);
          expect(err.message).toMatch(/process 1\b/);
          return;
        }
        // Still working: a fresh message of a tag no junk used arrives.
        const probe = recv(d1, 1, 0, 1234, 8);
        send(d0, 0, 1, 1234, Uint8Array.of(1, 2, 3));
        await within(probe, 'a correct message after the fuzzed frames');
        expect(thrown).toEqual([]);
        if (fatal.length === 0) expect(probe.error, String(probe.error?.message)).toBe(null);
        void posted;
        void bigIn;
        void syncOut;
        void bigOut;
      }),
      SEED === undefined ? { numRuns: RUNS } : { numRuns: RUNS, seed: SEED },
    );
  }, 300_000);
});
