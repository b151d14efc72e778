/**
 * Property-based fuzzing of the frame parser (issue 17): random byte strings,
 * valid frame streams and valid streams mutated (bit flips, truncation,
 * oversized length fields, garbage kinds), each fed in random chunks, one byte
 * at a time, or read straight into the parser's unfilled target the way the
 * socket does (read-buffer.ts).
 *
 * The oracle is a reference decoder written independently of the parser (a
 * DataView walk over the whole input): the parser must deliver exactly its
 * frames, in order, with identical headers and payloads; report TOO_LARGE or
 * UNSOLICITED (a status, never an exception) exactly when the reference meets
 * a length above the limit, or above the unsolicited bound for a payload the
 * sink did not ask for, and deliver nothing after that. The parser does not
 * judge kinds: a garbage kind is delivered as it is and the device decides
 * (the channel is already authenticated by the job-key handshake).
 *
 * Two configurations: PRODUCTION is the one inbound-connection.ts uses (no
 * bound below the u32 length field, unsolicited payloads bounded by the eager
 * limit, default or a small one, and sometimes the eager hook taking
 * whole frames); SMALL_LIMIT a small maximum, so that TOO_LARGE is reached.
 *
 * Runs: TSMPI_FUZZ_RUNS (default 300 per property); TSMPI_FUZZ_SEED replays a
 * failure (fast-check prints the seed and path when a property fails).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FrameHeader } from '@tsmpi/core/transport';
import { HEADER_BYTES, encodeHeader } from './frame-codec.ts';
import { FrameParser, PARSE_STATUS, type FrameSink } from './frame-parser.ts';
import { MAX_PAYLOAD_BYTES } from './tuning.ts';

const RUNS = Number(process.env['TSMPI_FUZZ_RUNS'] ?? '') || 300;
const SEED = process.env['TSMPI_FUZZ_SEED'] === undefined ? undefined : Number(process.env['TSMPI_FUZZ_SEED']);
const params = (): fc.Parameters<unknown> => (SEED === undefined ? { numRuns: RUNS } : { numRuns: RUNS, seed: SEED });

/** Small limit, so that random and mutated length fields often exceed it. */
const MAX_PAYLOAD = 4096;
/** The device's default eager limit (core settings), production's unsolicited bound. */
const DEFAULT_EAGER_LIMIT = 64 * 1024;
/** The test sink asks for payloads up to this size (mode 1), as a device does for a receive it matched: never for a huge one. */
const SINK_TARGET_CAP = 1 << 20;

/** How a parser is made: the bounds, and whether an eager hook takes plain EAGER frames (0 none, 1 every one, 2 every other one). */
interface Config {
  readonly maxPayload: number;
  readonly maxUnsolicited: number;
  readonly hook: number;
}

const configArb: fc.Arbitrary<Config> = fc.oneof(
  // production (inbound-connection.ts): the default eager limit, or a small one (--eager-limit), or 0
  fc.record({ maxPayload: fc.constant(MAX_PAYLOAD_BYTES), maxUnsolicited: fc.constantFrom(DEFAULT_EAGER_LIMIT, 256, 0, 600), hook: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ maxPayload: fc.constant(MAX_PAYLOAD), maxUnsolicited: fc.constant(MAX_PAYLOAD), hook: fc.constant(0) }),
);
const PRODUCTION: Config = { maxPayload: MAX_PAYLOAD_BYTES, maxUnsolicited: DEFAULT_EAGER_LIMIT, hook: 0 };

interface Frame {
  header: FrameHeader;
  payload: number[];
}

/**
 * Reference decoder: the frames a correct parser delivers, and why it stops (null: it does not).
 * A payload above the unsolicited bound passes only when the sink supplies its array (mode 1, up to its cap).
 */
function reference(bytes: Uint8Array, config: Config, targetMode: number): { frames: Frame[]; stop: number | null } {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const frames: Frame[] = [];
  let at = 0;
  while (bytes.length - at >= HEADER_BYTES) {
    const header: FrameHeader = {
      kind: dv.getUint8(at),
      flags: dv.getUint8(at + 1),
      contextId: dv.getUint16(at + 2, true),
      srcEndpoint: dv.getUint32(at + 4, true),
      dstEndpoint: dv.getUint32(at + 8, true),
      tag: dv.getInt32(at + 12, true),
      seq: dv.getUint32(at + 16, true),
      aux: dv.getUint32(at + 20, true),
      aux2: dv.getUint32(at + 24, true),
      payloadLength: dv.getUint32(at + 28, true),
    };
    if (header.payloadLength > config.maxPayload) return { frames, stop: PARSE_STATUS.TOO_LARGE };
    const isAskedFor = targetMode === 1 && header.payloadLength <= SINK_TARGET_CAP;
    if (header.payloadLength > config.maxUnsolicited && !isAskedFor) return { frames, stop: PARSE_STATUS.UNSOLICITED };
    const end = at + HEADER_BYTES + header.payloadLength;
    if (end > bytes.length) break;
    frames.push({ header, payload: Array.from(bytes.subarray(at + HEADER_BYTES, end)) });
    at = end;
  }
  return { frames, stop: null };
}

/** The header of the frame at `offset` of `buf`, decoded by hand (to check what the eager hook is given). */
function headerAt(buf: Uint8Array, offset: number): FrameHeader {
  const dv = new DataView(buf.buffer, buf.byteOffset + offset, HEADER_BYTES);
  return {
    kind: dv.getUint8(0), flags: dv.getUint8(1), contextId: dv.getUint16(2, true), srcEndpoint: dv.getUint32(4, true),
    dstEndpoint: dv.getUint32(8, true), tag: dv.getInt32(12, true), seq: dv.getUint32(16, true), aux: dv.getUint32(20, true),
    aux2: dv.getUint32(24, true), payloadLength: dv.getUint32(28, true),
  };
}

class RecordingSink implements FrameSink {
  readonly frames: Frame[] = [];
  /** How frameTarget answers: 0 null, 1 a right-sized array, 2 a wrong-sized array (the parser must ignore it). */
  readonly targetMode: number;
  constructor(targetMode: number) {
    this.targetMode = targetMode;
  }
  frameArrived(header: FrameHeader, payload: Uint8Array): void {
    expect(payload.length).toBe(header.payloadLength);
    this.frames.push({ header: { ...header }, payload: Array.from(payload) });
  }
  frameTarget(header: FrameHeader): Uint8Array | null {
    if (this.targetMode === 0 || header.payloadLength > SINK_TARGET_CAP) return null;
    return new Uint8Array(this.targetMode === 1 ? header.payloadLength : header.payloadLength + 1);
  }
}

/** Feeds `bytes` cut at `cuts`; with `readsIntoTarget`, reads into unfilledTarget like the socket does. */
function runParser(bytes: Uint8Array, cuts: number[], targetMinBytes: number, targetMode: number, readsIntoTarget: boolean, config: Config) {
  const sink = new RecordingSink(targetMode);
  let offered = 0;
  const hook = config.hook === 0 ? null : (ctx: number, src: number, dst: number, tag: number, buf: Uint8Array, start: number, end: number): boolean => {
    // Takes the frame (every one, or every other one offered): recorded where frameArrived would have.
    if (config.hook === 2 && offered++ % 2 === 1) return false;
    // The header lies right before the payload: the numbers given must be its fields, and it must be plain EAGER.
    const header = headerAt(buf, start - HEADER_BYTES);
    expect([header.kind, header.flags, header.contextId, header.srcEndpoint, header.dstEndpoint, header.tag, header.payloadLength]).toEqual([1, 0, ctx, src, dst, tag, end - start]);
    expect(header.payloadLength).toBeLessThanOrEqual(config.maxUnsolicited);
    sink.frames.push({ header, payload: Array.from(buf.subarray(start, end)) });
    return true;
  };
  const parser = new FrameParser(sink, targetMinBytes, config.maxPayload, config.maxUnsolicited, hook);
  const bounds = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  bounds.push(bytes.length);
  let statuses: number[] = [];
  let from = 0;
  for (const to of bounds) {
    let pos = from;
    while (pos < to) {
      const target = readsIntoTarget ? parser.unfilledTarget(1) : null;
      if (target !== null) {
        const n = Math.min(target.length, to - pos);
        target.set(bytes.subarray(pos, pos + n));
        statuses.push(parser.feed(target.subarray(0, n)));
        pos += n;
      } else {
        // Copy the chunk, as a socket hands out a fresh buffer: views must not outlive the call.
        statuses.push(parser.feed(bytes.slice(pos, to)));
        pos = to;
      }
    }
    from = to;
  }
  statuses = statuses.filter((s) => s !== PARSE_STATUS.OK);
  return { frames: sink.frames, statuses, bufferedBytes: parser.bufferedBytes };
}

const headerArb: fc.Arbitrary<FrameHeader> = fc.record({
  kind: fc.integer({ min: 0, max: 255 }),
  flags: fc.integer({ min: 0, max: 255 }),
  contextId: fc.integer({ min: 0, max: 0xffff }),
  srcEndpoint: fc.nat(),
  dstEndpoint: fc.nat(),
  tag: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  seq: fc.nat(),
  aux: fc.nat(),
  aux2: fc.nat(),
  payloadLength: fc.constant(0),
});

const validStreamArb = fc.array(fc.tuple(headerArb, fc.uint8Array({ maxLength: 600 })), { maxLength: 12 }).map((frames) => {
  const out = new Uint8Array(frames.reduce((n, [, p]) => n + HEADER_BYTES + p.length, 0));
  let at = 0;
  for (const [h, p] of frames) {
    encodeHeader(out, at, h, p.length);
    out.set(p, at + HEADER_BYTES);
    at += HEADER_BYTES + p.length;
  }
  return out;
});

type Mutation =
  | { op: 'flip'; at: number; bit: number }
  | { op: 'truncate'; at: number }
  | { op: 'length'; at: number; value: number }
  | { op: 'kind'; at: number; value: number }
  | { op: 'insert'; at: number; bytes: Uint8Array };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    op: fc.constant('length' as const),
    at: fc.nat(),
    value: fc.oneof(
      fc.constantFrom(0xffffffff, 0x80000000, MAX_PAYLOAD + 1, MAX_PAYLOAD, DEFAULT_EAGER_LIMIT, DEFAULT_EAGER_LIMIT + 1, 256, 257, 600, 601, SINK_TARGET_CAP + 1),
      fc.nat(),
    ),
  }),
  fc.record({ op: fc.constant('kind' as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ op: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 40 }) }),
);

/** Applies a mutation; 'length' and 'kind' hit the field of the frame header at or before `at`. */
function mutate(stream: Uint8Array, m: Mutation): Uint8Array {
  if (stream.length === 0) return m.op === 'insert' ? m.bytes : stream;
  const at = m.at % stream.length;
  const out = stream.slice();
  switch (m.op) {
    case 'flip':
      out[at]! ^= 1 << m.bit;
      return out;
    case 'truncate':
      return out.subarray(0, at);
    case 'insert': {
      const grown = new Uint8Array(stream.length + m.bytes.length);
      grown.set(stream.subarray(0, at));
      grown.set(m.bytes, at);
      grown.set(stream.subarray(at), at + m.bytes.length);
      return grown;
    }
    case 'length':
    case 'kind': {
      const starts = frameStarts(stream);
      const start = starts.filter((s) => s <= at).pop();
      if (start === undefined) return out; // shorter than one header: nothing to hit
      const dv = new DataView(out.buffer);
      if (m.op === 'length') dv.setUint32(start + 28, m.value >>> 0, true);
      else dv.setUint8(start, m.value);
      return out;
    }
  }
}

function frameStarts(stream: Uint8Array): number[] {
  const dv = new DataView(stream.buffer, stream.byteOffset, stream.byteLength);
  const starts: number[] = [];
  for (let at = 0; stream.length - at >= HEADER_BYTES; at += HEADER_BYTES + dv.getUint32(at + 28, true)) starts.push(at);
  return starts;
}

const inputArb = fc.oneof(
  { arbitrary: fc.uint8Array({ maxLength: 2000 }), weight: 2 },
  { arbitrary: validStreamArb, weight: 3 },
  { arbitrary: fc.tuple(validStreamArb, fc.array(mutationArb, { minLength: 1, maxLength: 3 })).map(([s, ms]) => ms.reduce(mutate, s)), weight: 5 },
);

function checkAgainstReference(bytes: Uint8Array, cuts: number[], targetMinBytes: number, targetMode: number, readsIntoTarget: boolean, config: Config): void {
  const want = reference(bytes, config, targetMode);
  const got = runParser(bytes, cuts, targetMinBytes, targetMode, readsIntoTarget, config);
  expect(got.frames).toEqual(want.frames);
  // TOO_LARGE or UNSOLICITED once, and nothing after it (the parser stops itself).
  expect(got.statuses).toEqual(want.stop === null ? [] : [want.stop]);
  // Never more held than one header and one payload the bounds allow.
  expect(got.bufferedBytes).toBeLessThanOrEqual(HEADER_BYTES + Math.max(config.maxUnsolicited, targetMode === 1 ? SINK_TARGET_CAP : 0));
}

describe('frame parser under fuzzing (fast-check, reference decoder as oracle)', () => {
  it('random, valid and mutated streams in random chunks: exactly the reference frames, TOO_LARGE and UNSOLICITED as statuses', () => {
    fc.assert(
      fc.property(
        inputArb,
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.integer({ min: 1, max: 1024 }),
        fc.integer({ min: 0, max: 2 }),
        fc.boolean(),
        configArb,
        (bytes, cuts, targetMinBytes, targetMode, readsIntoTarget, config) => {
          checkAgainstReference(bytes, cuts, targetMinBytes, targetMode, readsIntoTarget, config);
        },
      ),
      params(),
    );
  });

  it('valid streams split at every single point give the same frames', () => {
    fc.assert(
      fc.property(validStreamArb.filter((s) => s.length <= 1500), fc.integer({ min: 1, max: 700 }), fc.integer({ min: 0, max: 2 }), configArb, (bytes, targetMinBytes, targetMode, config) => {
        for (let cut = 0; cut <= bytes.length; cut++) checkAgainstReference(bytes, [cut], targetMinBytes, targetMode, true, config);
      }),
      // Each run parses its stream once per split point (up to ~1500 inputs), hence the smaller count.
      { ...params(), numRuns: Math.max(3, Math.ceil(RUNS / 1000)) },
    );
  });

  it('valid and mutated streams fed one byte at a time give the reference frames', () => {
    fc.assert(
      fc.property(inputArb.filter((s) => s.length <= 1500), fc.integer({ min: 1, max: 700 }), configArb, (bytes, targetMinBytes, config) => {
        checkAgainstReference(bytes, Array.from({ length: bytes.length }, (_, i) => i), targetMinBytes, 1, false, config);
      }),
      { ...params(), numRuns: Math.max(1, Math.ceil(RUNS / 5)) },
    );
  });

  it('a header with every length field value above the limit is TOO_LARGE, never a huge allocation', () => {
    fc.assert(
      fc.property(headerArb, fc.integer({ min: MAX_PAYLOAD + 1, max: 0xffffffff }), (h, len) => {
        const buf = new Uint8Array(HEADER_BYTES);
        encodeHeader(buf, 0, h, len);
        const sink = new RecordingSink(0);
        const parser = new FrameParser(sink, 64, MAX_PAYLOAD);
        expect(parser.feed(buf)).toBe(PARSE_STATUS.TOO_LARGE);
        expect(parser.feed(new Uint8Array(100))).toBe(PARSE_STATUS.OK);
        expect(sink.frames).toEqual([]);
      }),
      params(),
    );
  });

  it('production\'s bounds: a header announcing any length above the eager limit that no receive asked for is UNSOLICITED before any allocation', () => {
    fc.assert(
      fc.property(headerArb, fc.integer({ min: DEFAULT_EAGER_LIMIT + 1, max: 0xffffffff }), fc.boolean(), (h, len, withPayload) => {
        const buf = new Uint8Array(HEADER_BYTES + (withPayload ? 1000 : 0));
        encodeHeader(buf, 0, h, len);
        const sink = new RecordingSink(0);
        const parser = new FrameParser(sink, 64 * 1024, PRODUCTION.maxPayload, PRODUCTION.maxUnsolicited);
        expect(parser.feed(buf)).toBe(PARSE_STATUS.UNSOLICITED);
        expect(parser.header.payloadLength).toBe(len);
        expect(parser.bufferedBytes).toBe(0);
        expect(parser.feed(new Uint8Array(100))).toBe(PARSE_STATUS.OK);
        expect(sink.frames).toEqual([]);
      }),
      params(),
    );
  });
});
