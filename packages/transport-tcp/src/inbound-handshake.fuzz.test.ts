/**
 * Property-based fuzzing of the job-key handshake's decisions without sockets
 * (issue 17): the listening side's state machine (inbound-handshake.ts) and
 * the connecting side's (handshake.ts ClientHandshake), fed garbage, garbage
 * behind the magic, truncated, oversized, replayed, bit-flipped and
 * wrong-key HELLOs, and HELLOs with the key from processes or for channels
 * this side refuses, in random chunks and split at every point.
 *
 * The oracle is a reference verifier written from the protocol's description
 * (handshake.ts header), not from the code: the first byte that breaks the
 * magic refuses at once; 80 bytes decide by HMAC-SHA256(key, "C" nonceS
 * nonceC process channel listener) against this connection's own nonce and
 * listener (a HELLO made for another listener is a relay), then by the
 * channel and the process index. Properties:
 *   - nothing throws; every action is WAIT, CLOSE with a known reason, or one
 *     ACCEPT, and exactly the reference's, at the chunk holding the deciding
 *     byte; a stream the reference leaves undecided waits for timeout();
 *   - ACCEPT only when the reference verifier finds a valid MAC for this key
 *     and nonce, with the reference's ACCEPT reply and identity;
 *   - never more than HELLO_BYTES buffered; `rest` is a view of the chunk
 *     (no copy, whatever follows: oversized tails up to 1 MiB);
 *   - a correct HELLO split at any single point is accepted exactly once with
 *     the bytes after it intact;
 *   - the client sends HELLO once, and reports DONE only for an ACCEPT whose
 *     MAC proves the key to both nonces.
 *
 * Runs: TSMPI_FUZZ_RUNS (default 300 per property); TSMPI_FUZZ_SEED replays a
 * failure (fast-check prints the seed and path when a property fails).
 * scripts/fuzz-long.sh runs it at 1,000,000 (docs/RELIABILITY.md).
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { ACCEPT_BYTES, ClientHandshake, HANDSHAKE_STATUS, HELLO_BYTES } from './handshake.ts';
import { INBOUND_ACTION, InboundHandshake, type InboundAction, type InboundPolicy } from './inbound-handshake.ts';

const RUNS = Number(process.env['TSMPI_FUZZ_RUNS'] ?? '') || 300;
const SEED = process.env['TSMPI_FUZZ_SEED'] === undefined ? undefined : Number(process.env['TSMPI_FUZZ_SEED']);
const params = (runs = RUNS): fc.Parameters<unknown> => (SEED === undefined ? { numRuns: runs } : { numRuns: runs, seed: SEED });

const KEY = '5f3c9a0e7b214d68a1c2e3f405162738';
const MAGIC = Uint8Array.of(0x54, 0x53, 0x4d, 0x50, 0x49, 0x00, 0x02, 0x00);
/** The listener every machine here runs on (handshake.ts listenerBinding). */
const LISTENER = 'tcp 127.0.0.1:4000';
const REASONS = new Set([
  'bad magic in hello',
  'job key proof does not match',
  'channel not owned by this transport',
  'process index out of range',
  'handshake timed out',
  'handshake already finished',
]);

/** A failed check; vitest's expect costs more than the machine under test, so the hot checks use this. */
function check(isTrue: boolean, what: string, detail?: unknown): void {
  if (!isTrue) throw new Error(detail === undefined ? what : `${what}: ${JSON.stringify(detail)}`);
}

function sameAction(a: InboundAction, b: InboundAction): boolean {
  return a.kind === b.kind && (a.kind !== INBOUND_ACTION.CLOSE || (b.kind === INBOUND_ACTION.CLOSE && a.reason === b.reason));
}

// ---- the reference, from the protocol's description ----

function refMac(key: string, side: string, nonceS: Uint8Array, nonceC: Uint8Array, process: number, channel: number, listener = LISTENER): Uint8Array {
  const ids = new Uint8Array(8);
  new DataView(ids.buffer).setUint32(0, process, true);
  new DataView(ids.buffer).setUint32(4, channel, true);
  return createHmac('sha256', key).update(side).update(nonceS).update(nonceC).update(ids).update(listener).digest();
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

interface Policy extends InboundPolicy {
  readonly owned: readonly number[];
}

type Verdict =
  | { kind: 'wait' }
  | { kind: 'close'; reason: string; at: number }
  | { kind: 'accept'; process: number; channel: number; reply: Uint8Array; at: number };

/** What a correct listener decides for `stream`, and the index of the byte that decides it. */
function reference(stream: Uint8Array, key: string, nonceS: Uint8Array, policy: Policy): Verdict {
  for (let i = 0; i < MAGIC.length && i < stream.length; i++) {
    if (stream[i] !== MAGIC[i]) return { kind: 'close', reason: 'bad magic in hello', at: i };
  }
  if (stream.length < 80) return { kind: 'wait' };
  const dv = new DataView(stream.buffer, stream.byteOffset, 80);
  const process = dv.getUint32(8, true);
  const channel = dv.getUint32(12, true);
  const nonceC = stream.subarray(16, 48);
  if (!sameBytes(stream.subarray(48, 80), refMac(key, 'C', nonceS, nonceC, process, channel))) {
    return { kind: 'close', reason: 'job key proof does not match', at: 79 };
  }
  if (!policy.owned.includes(channel)) return { kind: 'close', reason: 'channel not owned by this transport', at: 79 };
  if (process >= policy.processCount) return { kind: 'close', reason: 'process index out of range', at: 79 };
  const reply = new Uint8Array(40);
  reply.set(MAGIC);
  reply.set(refMac(key, 'S', nonceS, nonceC, process, channel), 8);
  return { kind: 'accept', process, channel, reply, at: 79 };
}

/** A HELLO as a client with `key` would send it to a server whose nonce is `nonceS`. */
function hello(key: string, nonceS: Uint8Array, nonceC: Uint8Array, process: number, channel: number, listener = LISTENER): Uint8Array {
  const out = new Uint8Array(80);
  out.set(MAGIC);
  new DataView(out.buffer).setUint32(8, process, true);
  new DataView(out.buffer).setUint32(12, channel, true);
  out.set(nonceC, 16);
  out.set(refMac(key, 'C', nonceS, nonceC, process, channel, listener), 48);
  return out;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// ---- generators ----

const nonceArb = fc.uint8Array({ minLength: 32, maxLength: 32 });
const policyArb: fc.Arbitrary<Policy> = fc
  .record({ processCount: fc.integer({ min: 1, max: 8 }), owned: fc.uniqueArray(fc.integer({ min: 0, max: 5 }), { maxLength: 4 }) })
  .map(({ processCount, owned }) => ({ processCount, owned, listener: LISTENER, isChannelOwned: (c: number) => owned.includes(c) }));
// Mostly near the limits; sometimes any 31-bit value (the top bit is the
// protocol's own business: a flag, so never a channel of ours).
const processArb = fc.oneof({ arbitrary: fc.integer({ min: 0, max: 9 }), weight: 4 }, { arbitrary: fc.integer({ min: 0, max: 0x7fffffff }), weight: 1 });
const channelArb = fc.oneof({ arbitrary: fc.integer({ min: 0, max: 6 }), weight: 4 }, { arbitrary: fc.integer({ min: 0, max: 0x7fffffff }), weight: 1 });
const BIG_TAIL = new Uint8Array(1 << 20).fill(0xa5);
/** What follows a HELLO: nothing, a few frames' worth, or an oversized tail (up to 1 MiB, not generated byte by byte). */
const tailArb = fc.oneof(
  { arbitrary: fc.constant(new Uint8Array(0)), weight: 5 },
  { arbitrary: fc.uint8Array({ maxLength: 100 }), weight: 5 },
  { arbitrary: fc.integer({ min: 1, max: 1 << 20 }).map((n) => BIG_TAIL.subarray(0, n)), weight: 1 },
);

/** A stream for a listener with nonce `nonceS`: every kind of attack, and correct HELLOs. */
function streamArb(nonceS: Uint8Array): fc.Arbitrary<Uint8Array> {
  const any = fc.record({ nonceC: nonceArb, process: processArb, channel: channelArb, tail: tailArb });
  const otherKey = fc.string({ minLength: 0, maxLength: 40 }).filter((k) => k !== KEY);
  return fc.oneof(
    // garbage, and garbage behind the magic or part of it
    fc.uint8Array({ maxLength: 200 }),
    fc.tuple(fc.integer({ min: 1, max: 8 }), fc.uint8Array({ maxLength: 120 })).map(([n, g]) => concat(MAGIC.subarray(0, n), g)),
    // correct, possibly from a refused process or for a refused channel
    any.map((h) => concat(hello(KEY, nonceS, h.nonceC, h.process, h.channel), h.tail)),
    // truncated
    fc.tuple(any, fc.integer({ min: 0, max: 79 })).map(([h, cut]) => hello(KEY, nonceS, h.nonceC, h.process, h.channel).subarray(0, cut)),
    // without the key
    fc.tuple(any, otherKey).map(([h, k]) => concat(hello(k, nonceS, h.nonceC, h.process, h.channel), h.tail)),
    // replayed: it proved the key to another connection's nonce
    fc.tuple(any, nonceArb).map(([h, other]) => concat(hello(KEY, other, h.nonceC, h.process, h.channel), h.tail)),
    // relayed: made for another listener (a same-host socket, another rank's port)
    fc.tuple(any, fc.constantFrom('unix /tmp/tsmpi-0/t-0-4000', 'tcp 127.0.0.1:4001', 'tcp 127.0.0.1:4000 ', '')).map(([h, l]) => concat(hello(KEY, nonceS, h.nonceC, h.process, h.channel, l), h.tail)),
    // one bit flipped anywhere in a correct HELLO
    fc.tuple(any, fc.integer({ min: 0, max: 80 * 8 - 1 })).map(([h, bit]) => {
      const b = hello(KEY, nonceS, h.nonceC, h.process, h.channel);
      b[bit >> 3]! ^= 1 << (bit & 7);
      return concat(b, h.tail);
    }),
  );
}

function chunksOf(stream: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let at = 0;
  // Each chunk in its own ArrayBuffer, as sockets deliver them, so that a view can be told from a copy.
  for (const p of [...points, stream.length]) {
    if (p > at || (p === stream.length && out.length === 0)) out.push(stream.slice(at, p));
    at = Math.max(at, p);
  }
  return out;
}

// ---- the driver ----

const FINISHED: InboundAction = { kind: INBOUND_ACTION.CLOSE, reason: 'handshake already finished' };

/** Feeds `chunks` as InboundConnection does, and keeps feeding after the decision (which must not change it). */
function drive(machine: InboundHandshake, chunks: readonly Uint8Array[]): { chunk: number; action: InboundAction }[] {
  const actions: { chunk: number; action: InboundAction }[] = [];
  for (let i = 0; i < chunks.length; i++) {
    const action = machine.feed(chunks[i]!);
    check(machine.bufferedBytes <= HELLO_BYTES, 'buffered more than a HELLO', machine.bufferedBytes);
    if (action.kind === INBOUND_ACTION.WAIT) continue;
    if (action.kind === INBOUND_ACTION.CLOSE) check(REASONS.has(action.reason), 'unknown reason', action.reason);
    // Decided once: every later chunk is refused, never accepted again.
    if (actions.length > 0) check(sameAction(action, FINISHED), 'a second decision', action);
    actions.push({ chunk: i, action });
  }
  return actions;
}

function checkStream(stream: Uint8Array, cuts: readonly number[], nonceS: Uint8Array, policy: Policy): void {
  const chunks = chunksOf(stream, cuts);
  const machine = new InboundHandshake(KEY, policy, nonceS);
  check(sameBytes(machine.start(), concat(MAGIC, nonceS)), 'CHALLENGE is magic and nonce');
  const want = reference(stream, KEY, nonceS, policy);
  const actions = drive(machine, chunks);
  if (want.kind === 'wait') {
    check(actions.length === 0, 'decided an undecided stream', actions);
    check(sameAction(machine.timeout(), { kind: INBOUND_ACTION.CLOSE, reason: 'handshake timed out' }), 'timeout closes');
    check(machine.timeout().kind === INBOUND_ACTION.WAIT, 'a second timeout does nothing');
    check(sameAction(machine.feed(Uint8Array.of(1)), FINISHED), 'bytes after the timeout are refused');
    return;
  }
  check(actions.length > 0, 'no decision', want);
  const first = actions[0]!;
  // Decided at the chunk that holds the deciding byte, not later.
  let before = 0;
  let decidingChunk = 0;
  while (before + chunks[decidingChunk]!.length <= want.at) before += chunks[decidingChunk++]!.length;
  check(first.chunk === decidingChunk, 'decided at the wrong chunk', { got: first.chunk, want: decidingChunk });
  check(machine.timeout().kind === INBOUND_ACTION.WAIT, 'a timeout after the decision does nothing');
  const a = first.action;
  if (want.kind === 'close') {
    check(sameAction(a, { kind: INBOUND_ACTION.CLOSE, reason: want.reason }), 'wrong decision', { got: a, want: want.reason });
    return;
  }
  if (a.kind !== INBOUND_ACTION.ACCEPT) throw new Error(`expected ACCEPT, got ${JSON.stringify(a)}`);
  // Accepted only with a MAC valid for this key and this connection's nonce.
  check(sameBytes(stream.subarray(48, 80), refMac(KEY, 'C', nonceS, stream.subarray(16, 48), a.process, a.channel)), 'accepted without a valid MAC');
  check(a.process === want.process && a.channel === want.channel, 'wrong identity', { got: [a.process, a.channel], want: [want.process, want.channel] });
  check(sameBytes(a.reply, want.reply) && a.reply.length === ACCEPT_BYTES, 'wrong ACCEPT reply');
  // rest: the bytes of the deciding chunk after HELLO, as a view of that chunk (no copy).
  const chunk = chunks[first.chunk]!;
  check(a.rest.buffer === chunk.buffer, 'rest is a copy, not a view of the chunk');
  check(sameBytes(a.rest, stream.subarray(80, before + chunk.length)), 'wrong rest');
}

describe('inbound handshake state machine under fuzzing (fast-check, reference verifier as oracle)', () => {
  it('garbage, truncated, oversized, replayed, bit-flipped, wrong-key and refused HELLOs in random chunks: exactly the reference decision, bounded buffering', () => {
    fc.assert(
      fc.property(
        nonceArb.chain((nonceS) => fc.tuple(fc.constant(nonceS), streamArb(nonceS), fc.array(fc.nat(), { maxLength: 6 }), policyArb)),
        ([nonceS, stream, cuts, policy]) => checkStream(stream, cuts, nonceS, policy),
      ),
      params(),
    );
  });

  it('a correct HELLO split at every single point is accepted exactly once, the bytes after it intact', () => {
    const policy: Policy = { processCount: 4, owned: [0, 1], listener: LISTENER, isChannelOwned: (c) => c <= 1 };
    fc.assert(
      fc.property(nonceArb, nonceArb, fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 1 }), fc.uint8Array({ maxLength: 24 }), (nonceS, nonceC, process, channel, tail) => {
        const stream = concat(hello(KEY, nonceS, nonceC, process, channel), tail);
        for (let cut = 0; cut <= stream.length; cut++) {
          const machine = new InboundHandshake(KEY, policy, nonceS);
          const chunks = chunksOf(stream, [cut]);
          const actions = drive(machine, chunks);
          const accepts = actions.filter((a) => a.action.kind === INBOUND_ACTION.ACCEPT);
          check(accepts.length === 1, 'accepted other than once', { cut, actions });
          const a = accepts[0]!.action;
          if (a.kind !== INBOUND_ACTION.ACCEPT) throw new Error('unreachable');
          check(a.process === process && a.channel === channel, 'wrong identity', { cut });
          // What the frame parser gets: the rest of the deciding chunk, then every later chunk.
          check(sameBytes(concat(a.rest, ...chunks.slice(accepts[0]!.chunk + 1)), tail), 'bytes after HELLO changed', { cut });
        }
      }),
      // Each run feeds its stream once per split point (81 to 105 machines), hence the smaller count.
      params(Math.max(3, Math.ceil(RUNS / 100))),
    );
  });

  it('the client sends HELLO once and finishes only on an ACCEPT that proves the key to both nonces', () => {
    fc.assert(
      fc.property(
        nonceArb,
        fc.oneof(fc.constant(KEY), fc.string({ maxLength: 40 })),
        fc.integer({ min: 0, max: 2 }),
        fc.uint8Array({ maxLength: 120 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.boolean(),
        (nonceS, serverKey, shape, garbage, cuts, isGarbageChallenge) => {
          const client = new ClientHandshake(KEY, 3, 1, LISTENER);
          // The server's bytes: a CHALLENGE (or garbage) then an ACCEPT made with serverKey (correct, bit-flipped or garbage).
          const challenge = isGarbageChallenge ? garbage.subarray(0, 40) : concat(MAGIC, nonceS);
          let statuses: number[] = [];
          let hellos = 0;
          const feedAll = (bytes: Uint8Array): void => {
            for (const c of chunksOf(bytes, cuts)) {
              const s = client.feed(c);
              statuses.push(s);
              if (client.hello !== null) hellos = 1;
            }
          };
          feedAll(challenge);
          const sent = client.hello;
          if (sent === null) {
            // Only a complete CHALLENGE with the magic yields HELLO.
            check(!(challenge.length === 40 && sameBytes(challenge.subarray(0, 8), MAGIC)), 'no HELLO for a valid CHALLENGE');
            check(!statuses.includes(HANDSHAKE_STATUS.DONE), 'DONE without a CHALLENGE');
            return;
          }
          check(hellos === 1 && sent.length === HELLO_BYTES, 'one HELLO');
          const nonceSent = challenge.subarray(8, 40);
          const nonceC = sent.subarray(16, 48);
          check(sameBytes(sent, hello(KEY, nonceSent, nonceC, 3, 1)), 'HELLO as the protocol says');
          let accept = concat(MAGIC, refMac(serverKey, 'S', nonceSent, nonceC, 3, 1));
          if (shape === 1) accept[(garbage.length * 7) % 40]! ^= 1 << (garbage.length % 8);
          if (shape === 2) accept = garbage;
          statuses = [];
          feedAll(accept);
          const isValid = accept.length >= 40 && sameBytes(accept.subarray(0, 8), MAGIC) && sameBytes(accept.subarray(8, 40), refMac(KEY, 'S', nonceSent, nonceC, 3, 1));
          check(statuses.includes(HANDSHAKE_STATUS.DONE) === isValid, isValid ? 'refused a valid ACCEPT' : 'accepted an ACCEPT without the proof');
          check(statuses.filter((s) => s === HANDSHAKE_STATUS.DONE).length <= 1, 'DONE twice');
          check(client.hello === sent, 'HELLO replaced');
          if (isValid) check(client.feed(Uint8Array.of(0)) === HANDSHAKE_STATUS.FAILED, 'bytes after DONE go to the parser, not here');
        },
      ),
      params(),
    );
  });
});
