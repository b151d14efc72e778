// Split collective I/O and data sieving (issue 37, API.md Part 2 "Parallel I/O (File)"; MPI 4.0
// 14.4.5; ROMIO's data sieving). Split collectives: each *Begin/*End pair writes and reads exactly
// the bytes of its blocking form (two files, compared byte for byte), and the misuse errors: a
// second begin on the file, an end with nothing begun, the end of another routine, another buffer.
// Data sieving: every rank writes its strided view (a resized vector, a 3-D subarray) independently
// and at the same time, with romio_ds_* disable, enable and enable with tiny buffers: the files are
// the same and as computed; reads over holes and past the end give the same bytes and counts. The
// node:fs calls are counted (FileHandle.prototype wrapped here, in the program) to see that sieving
// reads and writes an extent where the unsieved access makes one call per run.
// Usage: file-split-sieve.ts <directory> [romio_cb = automatic | enable | disable]
import fs from 'node:fs';
import path from 'node:path';
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';
import { coordsOf, tileData, tileOf } from './grid-tile.ts';

const dir = process.argv[2]!;
const cb = process.argv[3] ?? 'automatic';
await MPI.init();
const world = MPI.COMM_WORLD;
const me = world.rank;
const np = world.size;
const ints = (n: number, seed: number): Int32Array => Int32Array.from({ length: n }, (_, i) => seed * 1_000_000 + i);
const sync = async (...files: MPI.File[]): Promise<void> => {
  for (const f of files) await f.sync();
  await world.barrier();
  for (const f of files) await f.sync();
};

// node:fs calls of this process, counted by wrapping the FileHandle prototype's read and write.
const calls = { read: 0, write: 0 };
{
  const probeName = path.join(dir, `probe-${me}`);
  const probe = await fs.promises.open(probeName, 'w');
  const proto = Object.getPrototypeOf(probe) as Record<'read' | 'write', (...a: unknown[]) => unknown>;
  await probe.close();
  fs.rmSync(probeName);
  for (const kind of ['read', 'write'] as const) {
    const original = proto[kind];
    proto[kind] = function counted(this: unknown, ...a: unknown[]): unknown {
      calls[kind]++;
      return original.apply(this, a);
    };
  }
}
const counting = async (run: () => Promise<unknown>): Promise<{ read: number; write: number }> => {
  const r0 = calls.read;
  const w0 = calls.write;
  await run();
  return { read: calls.read - r0, write: calls.write - w0 };
};

// --- split collectives against the blocking forms -------------------------------------------------
{
  const hints = new MPI.Info({ romio_cb_read: cb, romio_cb_write: cb, cb_buffer_size: '512' });
  const N = 300;
  // Rank r sees column r of an N x np array of INT32: the processes' data interleave in the file.
  const ft = MPI.Datatype.subarray([N, np], [N, 1], [0, me], 'C', MPI.INT32).commit();
  const splitName = path.join(dir, 'split.dat');
  const blockingName = path.join(dir, 'blocking.dat');
  const split = await MPI.File.open(world, splitName, MPI.MODE_CREATE | MPI.MODE_RDWR, hints);
  const blocking = await MPI.File.open(world, blockingName, MPI.MODE_CREATE | MPI.MODE_RDWR, hints);
  for (const f of [split, blocking]) await f.setView(0, MPI.INT32, ft);

  const a = ints(N, me + 1);
  split.WriteAtAllBegin(0, a);
  // Between begin and end: an independent access of another file.
  equal((await blocking.ReadAt(0, new Int32Array(4))).getCount(MPI.INT32), 0, 'an independent read between begin and end');
  equal((await split.WriteAtAllEnd(a)).getCount(MPI.INT32), N, 'WriteAtAllEnd count');
  equal((await blocking.WriteAtAll(0, a)).getCount(MPI.INT32), N, 'WriteAtAll count');

  const b = ints(N / 2, me + 11);
  for (const f of [split, blocking]) f.seek(N);
  split.WriteAllBegin(b);
  equal(split.getPosition(), N + N / 2, 'WriteAllBegin moved the individual pointer');
  equal((await split.WriteAllEnd(b)).getCount(MPI.INT32), N / 2, 'WriteAllEnd count');
  await blocking.WriteAll(b);

  const c = ints(me + 3, me + 21);
  for (const f of [split, blocking]) await f.seekShared(2 * N);
  split.WriteOrderedBegin(c);
  equal((await split.WriteOrderedEnd(c)).getCount(MPI.INT32), me + 3, 'WriteOrderedEnd count');
  await blocking.WriteOrdered(c);
  await sync(split, blocking);
  if (me === 0) {
    const s = fs.readFileSync(splitName);
    const w = fs.readFileSync(blockingName);
    check(s.length >= 4 * (2 * N * np + 3 * np), `split.dat holds ${s.length} bytes`);
    check(s.equals(w), 'the split collectives wrote the bytes of the blocking forms');
  }

  const r1 = new Int32Array(N);
  const r2 = new Int32Array(N);
  split.ReadAtAllBegin(0, r1);
  equal((await split.ReadAtAllEnd(r1)).getCount(MPI.INT32), N, 'ReadAtAllEnd count');
  await blocking.ReadAtAll(0, r2);
  equal(Array.from(r1), Array.from(r2), 'ReadAtAllBegin/End = ReadAtAll');
  equal(Array.from(r1), Array.from(a), 'ReadAtAllBegin/End data');
  const r3 = new Int32Array(N / 2);
  split.seek(N);
  split.ReadAllBegin(r3);
  equal(split.getPosition(), N + N / 2, 'ReadAllBegin moved the individual pointer');
  await split.ReadAllEnd(r3);
  equal(Array.from(r3), Array.from(b), 'ReadAllBegin/End data');
  const r4 = new Int32Array(me + 3);
  const r5 = new Int32Array(me + 3);
  for (const f of [split, blocking]) await f.seekShared(2 * N);
  split.ReadOrderedBegin(r4);
  await split.ReadOrderedEnd(r4);
  await blocking.ReadOrdered(r5);
  equal(Array.from(r4), Array.from(r5), 'ReadOrderedBegin/End = ReadOrdered');
  equal(Array.from(r4), Array.from(c), 'ReadOrderedBegin/End data');

  // Misuse: one split collective per file handle; the end must match the begin, its routine and its buffer.
  const m = new Int32Array(N);
  split.ReadAtAllBegin(0, m);
  await throwsMPI(() => split.ReadAllBegin(new Int32Array(1)), MPI.ERR_IO, 'File.ReadAllBegin', 'a second split collective on the file');
  await throwsMPI(() => split.WriteAtAllBegin(0, a), MPI.ERR_IO, 'File.WriteAtAllBegin', 'a second split collective (a write)');
  await throwsMPI(() => split.ReadAllEnd(m), MPI.ERR_IO, 'File.ReadAllEnd', 'the end of another routine');
  await throwsMPI(() => split.ReadAtAllEnd(new Int32Array(N)), MPI.ERR_ARG, 'File.ReadAtAllEnd', 'the end with another buffer');
  // Another file has its own split collective.
  const other = new Int32Array(N);
  blocking.ReadAtAllBegin(0, other);
  equal((await split.ReadAtAllEnd(m)).getCount(MPI.INT32), N, 'the right end after the misuse');
  equal(Array.from(m), Array.from(a), 'the data of the split collective that saw the misuse');
  await blocking.ReadAtAllEnd(other);
  equal(Array.from(other), Array.from(a), 'a split collective on another file at the same time');
  await throwsMPI(() => split.ReadAtAllEnd(m), MPI.ERR_IO, 'File.ReadAtAllEnd', 'an end with nothing begun');
  await throwsMPI(() => split.ReadAtAllBegin(-1, m), MPI.ERR_ARG, 'File.ReadAtAllBegin', 'a negative offset');
  await throwsMPI(() => split.ReadAtAllEnd(m), MPI.ERR_IO, 'File.ReadAtAllEnd', 'an end after a begin that failed');
  await split.close();
  await blocking.close();
  const ro = await MPI.File.open(world, splitName, MPI.MODE_RDONLY);
  await throwsMPI(() => ro.WriteAllBegin(a), MPI.ERR_READ_ONLY, 'File.WriteAllBegin', 'a split write to a RDONLY file');
  await throwsMPI(() => ro.WriteAllEnd(a), MPI.ERR_IO, 'File.WriteAllEnd', 'the end of a begin that failed');
  await ro.close();
  await throwsMPI(() => ro.ReadAllEnd(r3), MPI.ERR_FILE, 'File.ReadAllEnd', 'an end on a closed file');
  ft.free();
}

// --- data sieving on and off --------------------------------------------------------------------------
const configs: [string, Record<string, string>][] = [
  ['off', { romio_ds_read: 'disable', romio_ds_write: 'disable' }],
  ['on', { romio_ds_read: 'enable', romio_ds_write: 'enable' }],
  ['tiny', { romio_ds_read: 'enable', romio_ds_write: 'enable', ind_rd_buffer_size: '100', ind_wr_buffer_size: '60' }],
];
{
  const f = await MPI.File.open(world, path.join(dir, 'defaults.dat'), MPI.MODE_CREATE | MPI.MODE_RDWR | MPI.MODE_DELETE_ON_CLOSE);
  const info = f.getInfo();
  equal([info.get('romio_ds_read'), info.get('romio_ds_write'), info.get('ind_rd_buffer_size'), info.get('ind_wr_buffer_size')],
    ['automatic', 'automatic', '4194304', '524288'], 'the data sieving hints and their defaults in getInfo');
  f.setInfo(new MPI.Info({ ind_rd_buffer_size: '8192', romio_ds_write: 'disable' }));
  equal([f.getInfo().get('ind_rd_buffer_size'), f.getInfo().get('romio_ds_write')], ['8192', 'disable'], 'setInfo of the data sieving hints');
  await throwsMPI(() => f.setInfo(new MPI.Info({ romio_ds_read: 'sometimes' })), MPI.ERR_ARG, 'File.setInfo', 'a bad romio_ds_read');
  await f.close();
  await throwsMPI(() => MPI.File.open(world, path.join(dir, 'bad.dat'), MPI.MODE_CREATE | MPI.MODE_RDWR, new MPI.Info({ ind_wr_buffer_size: '0' })),
    MPI.ERR_ARG, 'File.open', 'a bad ind_wr_buffer_size');
  check(!fs.existsSync(path.join(dir, 'bad.dat')), 'a bad hint creates no file');
}

// A resized vector: tiles of 4 blocks of 2 INT32, rank r's blocks at 2r in each stretch of 2 np.
const vectorView = (): { disp: number; ft: MPI.Datatype } => ({
  disp: me * 8,
  ft: MPI.Datatype.resized(MPI.Datatype.vector(4, 2, 2 * np, MPI.INT32), 0, 4 * 2 * np * 4).commit(),
});
/** The file INT32 that holds element e of rank r's data in the vector view. */
const vectorIndex = (r: number, e: number): number => r * 2 + Math.floor(e / 8) * 8 * np + Math.floor((e % 8) / 2) * 2 * np + (e % 2);
const G = [4, 6, 10];
const dims = MPI.computeDims(np, 3);
const cube = (() => {
  const tile = tileOf(G, dims, coordsOf(dims, me));
  return { ...tile, data: tileData(tile, (n) => new Int32Array(n), (i, j, k) => (i * G[1]! + j) * G[2]! + k + 7) };
})();

const M = 200;
for (const [label, entries] of configs) {
  const hints = new MPI.Info(entries);
  // Every rank writes its strided view independently, all at once: a sieved write rewrites the other ranks' bytes in its extent.
  const vName = path.join(dir, `vector-${label}.dat`);
  const v = await MPI.File.open(world, vName, MPI.MODE_CREATE | MPI.MODE_RDWR, hints);
  equal(v.getInfo().get('romio_ds_write'), entries.romio_ds_write, `${label}: romio_ds_write in getInfo`);
  const { disp, ft } = vectorView();
  await v.setView(disp, MPI.INT32, ft);
  const mine = ints(M, me + 1);
  await world.barrier();
  const wrote = await counting(() => v.WriteAt(0, mine));
  await sync(v);
  const back = new Int32Array(M);
  const read = await counting(() => v.ReadAt(0, back));
  equal(Array.from(back), Array.from(mine), `${label}: vector view read back`);
  if (np > 1) {
    // M / 2 runs of 2 INT32 each.
    if (label === 'off') check(wrote.write >= M / 2 && wrote.read === 0 && read.read >= M / 2, `${label}: one call per run (${JSON.stringify({ wrote, read })})`);
    if (label === 'on') check(wrote.write === 1 && wrote.read <= 2 && read.read <= 2, `${label}: one extent (${JSON.stringify({ wrote, read })})`);
    if (label === 'tiny') check(wrote.write > 1 && wrote.write < M / 2 && read.read < M / 2, `${label}: several extents (${JSON.stringify({ wrote, read })})`);
  }
  await v.close();
  ft.free();

  const sName = path.join(dir, `subarray-${label}.dat`);
  const s = await MPI.File.open(world, sName, MPI.MODE_CREATE | MPI.MODE_RDWR, hints);
  const sft = MPI.Datatype.subarray(G, cube.sizes, cube.starts, 'C', MPI.INT32).commit();
  await s.setView(0, MPI.INT32, sft);
  await world.barrier();
  equal((await s.WriteAt(0, cube.data)).getCount(MPI.INT32), cube.data.length, `${label}: subarray WriteAt count`);
  await sync(s);
  const cubeBack = new Int32Array(cube.data.length);
  await s.ReadAt(0, cubeBack);
  equal(Array.from(cubeBack), Array.from(cube.data), `${label}: subarray read back`);
  await s.close();
  sft.free();
  await world.barrier();
  if (me === 0) {
    const vr = fs.readFileSync(vName);
    const vf = new Int32Array(vr.buffer, vr.byteOffset, vr.length / 4);
    const want = new Int32Array(M * np);
    for (let r = 0; r < np; r++) for (let e = 0; e < M; e++) want[vectorIndex(r, e)] = r * 1_000_000 + 1_000_000 + e;
    equal(vf.length, want.length, `${label}: vector file size`);
    let bad = -1;
    for (let n = 0; n < want.length && bad < 0; n++) if (vf[n] !== want[n]) bad = n;
    equal(bad, -1, `${label}: first wrong INT32 of the vector file`);
    const sr = fs.readFileSync(sName);
    const sf = new Int32Array(sr.buffer, sr.byteOffset, sr.length / 4);
    equal(sf.length, G[0]! * G[1]! * G[2]!, `${label}: subarray file size`);
    bad = -1;
    for (let n = 0; n < sf.length && bad < 0; n++) if (sf[n] !== n + 7) bad = n;
    equal(bad, -1, `${label}: first wrong INT32 of the subarray file`);
    check(vr.equals(fs.readFileSync(path.join(dir, 'vector-off.dat'))), `${label}: the vector file is the unsieved one`);
    check(sr.equals(fs.readFileSync(path.join(dir, 'subarray-off.dat'))), `${label}: the subarray file is the unsieved one`);
  }
}

// Holes: rank 0 writes 10 INT32 at 0 and 10 at INT32 1000 (zeros between, the file ends at 1010); every
// rank reads its vector view across the gap and past the end, sieved and not: the same data and counts.
{
  const name = path.join(dir, 'holes.dat');
  const w = await MPI.File.open(world, name, MPI.MODE_CREATE | MPI.MODE_RDWR);
  if (me === 0) {
    await w.WriteAt(0, ints(10, 5));
    await w.WriteAt(4000, ints(10, 6));
  }
  await sync(w);
  await w.close();
  const content = (idx: number): number => (idx < 10 ? 5_000_000 + idx : idx >= 1000 ? 6_000_000 + idx - 1000 : 0);
  const L = 800;
  let expectCount = 0;
  while (expectCount < L && vectorIndex(me, expectCount) < 1010) expectCount++;
  const results: number[][] = [];
  for (const [label, entries] of configs) {
    const f = await MPI.File.open(world, name, MPI.MODE_RDONLY, new MPI.Info(entries));
    const { disp, ft } = vectorView();
    await f.setView(disp, MPI.INT32, ft);
    const got = new Int32Array(L).fill(-1);
    equal((await f.ReadAt(0, got)).getCount(MPI.INT32), expectCount, `${label}: count of a read over holes and past the end`);
    const want = Array.from({ length: L }, (_, e) => (e < expectCount ? content(vectorIndex(me, e)) : -1));
    equal(Array.from(got), want, `${label}: a read over holes and past the end`);
    results.push(Array.from(got));
    await f.close();
    ft.free();
  }
  check(results.every((r) => JSON.stringify(r) === JSON.stringify(results[0])), 'sieved and unsieved reads of holes agree');
}

console.log(`file-split-sieve OK rank ${me}`);
await MPI.finalize();
