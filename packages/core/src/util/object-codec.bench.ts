/**
 * What an object message's encode+decode costs in one process, per shape of the object-rate bench
 * (packages/bench/src/object-rate.ts, plus a 1 MiB binary), for one of three codecs:
 *   codec     this tree's object codec (encodeObject / decodeObject, ADR 0033)
 *   msgpack   msgpackr with the flags tsmpi used before ADR 0033 (b3186cf: no records, no
 *             reference tracking, a Map arrives as an object): the rate issue 39 must keep
 *   v8        Node's own structured clone, v8.serialize / v8.deserialize (ADR 0033's amendment)
 * CPU microseconds per round trip (process.cpuUsage), the median of 7 blocks after a warm-up.
 * One codec per process: msgpackr's encoder is shared code, and two configurations in one process
 * slow each other. Interleave processes and take medians, e.g.
 *   for r in 1 2 3 4 5; do for c in msgpack codec v8; do npx tsx packages/core/src/util/object-codec.bench.ts $c; done; done
 */
import { serialize, deserialize } from 'node:v8';
import { Packr } from 'msgpackr';
import { decodeObject, encodeObject } from './object-codec.ts';

const plain = new Packr({ useRecords: false, moreTypes: true, copyBuffers: true, structuredClone: false });
const CODECS: Record<string, (v: unknown) => unknown> = {
  codec: (v) => decodeObject(encodeObject(v, 'send'), 'recv'),
  msgpack: (v) => plain.unpack(plain.pack(v)),
  v8: (v) => deserialize(serialize(v)),
};
const SHAPES: Record<string, [() => unknown, number]> = {
  small: [() => ({ step: 1, data: new Float64Array([1, 2]) }), 20_000],
  object: [() => ({ a: 1, b: 'x', c: [1, 2, 3], d: { e: true } }), 20_000],
  records: [() => Array.from({ length: 100 }, (_, i) => ({ id: i, name: `n${i}`, v: i * 1.5 })), 2_000],
  map: [() => new Map(Array.from({ length: 20 }, (_, i) => [`key${i}`, i])), 20_000],
  large: [() => ({ step: 1, data: new Float64Array(131_072) }), 200],
};

const name = process.argv[2] ?? 'codec';
const roundTrip = CODECS[name];
if (roundTrip === undefined) {
  console.error(`usage: object-codec.bench.ts [${Object.keys(CODECS).join('|')}]`);
  process.exit(2);
}
let sink = 0;
const row: string[] = [];
for (const [shape, [make, n]] of Object.entries(SHAPES)) {
  const value = make();
  for (let i = 0; i < n; i++) sink += roundTrip(value) === undefined ? 0 : 1;
  const blocks: number[] = [];
  for (let b = 0; b < 7; b++) {
    const before = process.cpuUsage();
    for (let i = 0; i < n; i++) sink += roundTrip(value) === undefined ? 0 : 1;
    const d = process.cpuUsage(before);
    blocks.push((d.user + d.system) / n);
  }
  blocks.sort((x, y) => x - y);
  row.push(`${shape} ${blocks[3]!.toFixed(2)}`);
}
console.log(`${name}: ${row.join('  ')} (us of CPU per encode+decode; ${sink > 0 ? 'ok' : 'none'})`);
