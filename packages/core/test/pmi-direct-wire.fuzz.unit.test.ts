/**
 * Property-based fuzzing of the direct-launch PMI wire formats (core/src/pmi-direct:
 * pmi1-wire.ts, pmi2-wire.ts, kvs-value.ts, process-mapping.ts, issue 38): what a
 * PMI server sends is parsed without ever throwing (null for the malformed), what
 * tsmpi formats parses back to itself, a stream split at any boundaries yields the
 * same lines or frames as in one piece, and any string survives the value encoding
 * as a single wire token of both PMI versions.
 *
 * Runs: TSMPI_FUZZ_RUNS (default 300 per property); TSMPI_FUZZ_SEED replays a
 * failure (fast-check prints the seed and path when a property fails).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Pmi1LineReader, formatPmi1Command, parsePmi1Line } from '../src/pmi-direct/pmi1-wire.ts';
import { Pmi2FrameReader, encodePmi2Command, parsePmi2Body } from '../src/pmi-direct/pmi2-wire.ts';
import { decodeKvsValue, encodeKvsValue } from '../src/pmi-direct/kvs-value.ts';
import { localPlace, parseProcessMapping } from '../src/pmi-direct/process-mapping.ts';

const RUNS = Number(process.env['TSMPI_FUZZ_RUNS'] ?? '') || 300;
const SEED = process.env['TSMPI_FUZZ_SEED'] === undefined ? undefined : Number(process.env['TSMPI_FUZZ_SEED']);
const params = (): fc.Parameters<unknown> => (SEED === undefined ? { numRuns: RUNS } : { numRuns: RUNS, seed: SEED });

/** A PMI-1 wire token: no space, "=", or control character. */
const token = fc.string({ minLength: 1, maxLength: 12, unit: fc.constantFrom(...'abcXYZ019_-.:/(),%'.split('')) });
const fields = fc.uniqueArray(fc.tuple(token.filter((k) => k !== 'cmd'), fc.oneof(token, fc.constant(''))), { maxLength: 6, selector: ([k]) => k });

/** Splits `bytes` at random cut points. */
const chunked = <T extends { length: number; subarray(a: number, b?: number): T }>(bytes: T, cuts: number[]): T[] => {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: T[] = [];
  let at = 0;
  for (const p of points) {
    out.push(bytes.subarray(at, p));
    at = p;
  }
  out.push(bytes.subarray(at));
  return out;
};

describe('PMI-1 wire (fuzz)', () => {
  it('parses any text without throwing', () => {
    fc.assert(fc.property(fc.string({ maxLength: 200 }), (text) => {
      const r = parsePmi1Line(text);
      if (r !== null) expect(r.cmd.length).toBeGreaterThan(0);
    }), params());
  });

  it('parses what it formats back to the same command and fields', () => {
    fc.assert(fc.property(token, fields, (cmd, f) => {
      const line = formatPmi1Command(cmd, f);
      const r = parsePmi1Line(line.slice(0, -1));
      expect(r).toEqual({ cmd, fields: new Map(f) });
    }), params());
  });

  it('splits a stream into the same lines at any chunk boundaries', () => {
    fc.assert(fc.property(fc.array(fc.tuple(token, fields), { maxLength: 5 }), fc.array(fc.nat(), { maxLength: 8 }), (cmds, cuts) => {
      const text = cmds.map(([c, f]) => formatPmi1Command(c, f)).join('');
      const reader = new Pmi1LineReader();
      const lines = chunked(Buffer.from(text, 'latin1'), cuts).flatMap((b) => reader.push(b.toString('latin1')));
      expect(lines).toEqual(text.split('\n').slice(0, -1));
    }), params());
  });
});

describe('PMI-2 wire (fuzz)', () => {
  it('parses any body and any stream without throwing other than the documented header error', () => {
    fc.assert(fc.property(fc.string({ maxLength: 200 }), fc.uint8Array({ maxLength: 64 }), (body, bytes) => {
      parsePmi2Body(body);
      try {
        new Pmi2FrameReader().push(Buffer.from(bytes));
      } catch (e) {
        expect((e as Error).message).toMatch(/PMI-2 length header/);
      }
    }), params());
  });

  it('parses what it encodes back, ";" in values included, at any chunk boundaries', () => {
    const value = fc.string({ maxLength: 20 });
    const f2 = fc.uniqueArray(fc.tuple(token.filter((k) => k !== 'cmd'), value), { maxLength: 5, selector: ([k]) => k });
    fc.assert(fc.property(fc.array(fc.tuple(token, f2), { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { maxLength: 8 }), (cmds, cuts) => {
      const stream = Buffer.concat(cmds.map(([c, f]) => encodePmi2Command(c, f)));
      const reader = new Pmi2FrameReader();
      const bodies = chunked(stream, cuts).flatMap((b) => reader.push(b));
      expect(bodies.map(parsePmi2Body)).toEqual(cmds.map(([cmd, f]) => ({ cmd, fields: new Map(f) })));
    }), params());
  });
});

describe('kvs values and process mappings (fuzz)', () => {
  it('encodes any string as one wire token of both versions and decodes it back', () => {
    fc.assert(fc.property(fc.string({ maxLength: 100, unit: 'binary' }), (value) => {
      const encoded = encodeKvsValue(value);
      expect(encoded).toMatch(/^[A-Za-z0-9._:/@,+%-]*$/);
      expect(decodeKvsValue(encoded)).toBe(value);
    }), params());
  });

  it('decodes any text without throwing', () => {
    fc.assert(fc.property(fc.string({ maxLength: 60 }), (text) => {
      const v = decodeKvsValue(text);
      if (v !== null) expect(encodeKvsValue(v)).toBe(text);
    }), params());
  });

  it('places every rank of a mapping it accepts, and local places add up', () => {
    const triple = fc.tuple(fc.nat({ max: 8 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 4 }));
    fc.assert(fc.property(fc.array(triple, { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 40 }), (triples, size) => {
      const nodeOf = parseProcessMapping(`(vector,${triples.map((t) => `(${t.join(',')})`).join(',')})`, size);
      expect(nodeOf).not.toBeNull();
      expect(nodeOf!.length).toBe(size);
      const places = nodeOf!.map((_, r) => localPlace(nodeOf!, r));
      for (const p of places) expect(p.localRank).toBeLessThan(p.localSize);
      expect(places.filter((p) => p.localRank === 0).length).toBe(places[0]!.nodes);
    }), params());
    fc.assert(fc.property(fc.string({ maxLength: 60 }), fc.integer({ min: -1, max: 10 }), (text, size) => {
      parseProcessMapping(text, size);
    }), params());
  });
});
