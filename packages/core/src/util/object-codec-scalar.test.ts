// The plain form's scalars (object-codec-plain.ts): a lone number, boolean or null is written byte for
// byte as msgpackr's plain encoder writes it, read back without msgpackr, and neither direction loads
// msgpackr (checked in a child Node, whose CommonJS cache this file's own import of msgpackr cannot touch).
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { decodeObject, encodeObject } from './object-codec.ts';

/** msgpackr with the plain form's flags (object-codec-plain.ts). */
const reference = new Packr({ useRecords: false, mapsAsObjects: true, structuredClone: false, moreTypes: true, copyBuffers: true });
const MARK = [0xd4, 0x50, 0];

/** Every encoding's edges: fixints, 8/16/32-bit unsigned and signed, doubles, non-finite, -0, booleans, null. */
const SCALARS: readonly (number | boolean | null)[] = [
  0, 1, 0x1f, 0x20, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0xffffffff, 0x100000000,
  -1, -0x20, -0x21, -0x80, -0x81, -0x8000, -0x8001, -0x80000000, -0x80000001,
  0.5, -2.25, 1e300, -1e-300, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, Number.EPSILON,
  NaN, Infinity, -Infinity, -0, true, false, null,
];

describe('object codec: scalars in the plain form', () => {
  it.each(SCALARS.map((v) => [String(Object.is(v, -0) ? '-0' : v), v] as const))('%s is written as msgpackr writes it and read back', (_name, v) => {
    const bytes = encodeObject(v, 'send').slice();
    expect([...bytes]).toEqual([...MARK, ...reference.pack(v)]);
    // -0 arrives as 0, as it did through msgpackr (an integer test passes it).
    expect(Object.is(decodeObject(bytes, 'recv'), Object.is(v, -0) ? 0 : v)).toBe(true);
  });

  it('reads the plain form of other values and of scalars that msgpackr wrote', () => {
    for (const v of SCALARS) {
      expect(Object.is(decodeObject(Uint8Array.from([...MARK, ...reference.pack(v)]), 'recv'), Object.is(v, -0) ? 0 : v)).toBe(true);
    }
    for (const v of ['a string', [1, 2], { a: 1 }, new Float64Array([1.5]), undefined]) {
      expect(decodeObject(encodeObject(v, 'send').slice(), 'recv')).toEqual(v);
    }
  });

  it('does not load msgpackr for scalars; another value does (a child Node)', () => {
    const codec = pathToFileURL(new URL('./object-codec.ts', import.meta.url).pathname).href;
    const loaded = (values: string): string[] => {
      const r = spawnSync(process.execPath, [
        '--conditions=@tsmpi/source', '--import', 'tsx', '--input-type=module', '-e',
        `import { createRequire } from 'node:module';
         const { encodeObject, decodeObject } = await import(${JSON.stringify(codec)});
         for (const v of ${values}) if (!Object.is(decodeObject(encodeObject(v, 'send').slice(), 'recv'), v)) throw new Error('round trip ' + v);
         console.log(JSON.stringify(Object.keys(createRequire(process.cwd() + '/x.js').cache).filter((k) => k.includes('/msgpackr'))));`,
      ], { encoding: 'utf8', timeout: 60_000 });
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout.trim().split('\n').pop()!) as string[];
    };
    expect(loaded('[0, 1, -1, 300, -70000, 0.5, 1e300, true, false, null]')).toEqual([]);
    expect(loaded("['a']").length).toBeGreaterThan(0);
  }, 90_000);
});
