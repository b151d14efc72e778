// Parallel I/O (issue 37; API.md Part 2 "Parallel I/O (File)"), MPICH test/mpi/io re-implemented from
// its descriptions: every rank writes its block at explicit offsets and reads another's (rdwrord,
// simple); the individual pointer and the nonblocking forms (async, i_noncontig); a 3-D array
// written collectively through a subarray view and read back with another decomposition
// (coll_test, darray_read), checked byte for byte; the shared pointer (shared_fp: every record
// exactly once) and ordered access (rdwrord: rank order); sizes, external32, atomic mode,
// DELETE_ON_CLOSE, and the error classes (the error tests of MPICH's io suite).
// Usage: file-io.ts <directory> [romio_cb = automatic | enable | disable]
import fs from 'node:fs';
import path from 'node:path';
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';
import { coordsOf, tileData, tileOf, type Tile } from './grid-tile.ts';

const dir = process.argv[2]!;
const cb = process.argv[3] ?? 'automatic';
await MPI.init();
const world = MPI.COMM_WORLD;
const me = world.rank;
const np = world.size;
const baseline = MPI.stats().liveObjects;
const sync = async (f: MPI.File): Promise<void> => {
  // MPI 4.0 14.6.1: sync-barrier-sync makes one process's writes visible to another's reads.
  await f.sync();
  await world.barrier();
  await f.sync();
};
const hints = new MPI.Info({ romio_cb_read: cb, romio_cb_write: cb, cb_buffer_size: '1000', cb_nodes: String(Math.min(2, np)) });

// --- explicit offsets: write my block, read my neighbour's --------------------------------------
{
  const name = path.join(dir, 'blocks.dat');
  const f = await MPI.File.open(world, name, MPI.MODE_CREATE | MPI.MODE_RDWR, hints);
  equal(f.amode, MPI.MODE_CREATE | MPI.MODE_RDWR, 'amode');
  equal(f.getInfo().get('cb_nodes'), String(Math.min(2, np)), 'cb_nodes hint');
  equal(f.getInfo().get('romio_cb_write'), cb, 'romio_cb_write hint');
  equal(f.group.size, np, 'group size');
  const B = 1000;
  const block = (r: number): Int32Array => Int32Array.from({ length: B }, (_, i) => r * 100_000 + i);
  const st = await f.WriteAt(me * B * 4, block(me));
  equal(st.getCount(MPI.INT32), B, 'WriteAt count');
  await sync(f);
  const other = (me + 1) % np;
  const got = new Int32Array(B);
  const rst = await f.ReadAt(other * B * 4, got);
  equal(rst.getCount(MPI.BYTE), B * 4, 'ReadAt count');
  equal(Array.from(got), Array.from(block(other)), 'ReadAt: the neighbour block');
  equal(await f.getSize(), np * B * 4, 'getSize');
  // Past the end: a short read, the status counts what there was.
  const tail = new Int32Array(10);
  equal((await f.ReadAt(np * B * 4 - 8, tail)).getCount(MPI.INT32), 2, 'short read at the end');
  // The same collectively: every process's count stops at the end of the file.
  const tailAll = new Int32Array(10);
  equal((await f.ReadAtAll(np * B * 4 - 8 - 4 * (me % 2), tailAll)).getCount(MPI.INT32), 2 + (me % 2), 'short collective read at the end');
  equal(tailAll[1 + (me % 2)], block(np - 1)[B - 1], 'the last element, read collectively');
  // Nonblocking forms and the individual pointer.
  const nb = new Int32Array(B);
  const req = f.IreadAt(other * B * 4, nb);
  await req.wait();
  equal(req.status!.getCount(MPI.INT32), B, 'IreadAt status count');
  equal(Array.from(nb), Array.from(block(other)), 'IreadAt data');
  f.seek(other * B * 4);
  const half = new Int32Array(B / 2);
  await f.Read(half);
  equal(f.getPosition(), other * B * 4 + B * 2, 'pointer advanced by Read');
  await f.Read(half);
  equal(Array.from(half), Array.from(block(other).subarray(B / 2)), 'second Read continues');
  f.seek(-B * 2, MPI.SEEK_CUR);
  equal(f.getPosition(), other * B * 4 + B * 2, 'SEEK_CUR');
  equal(f.getByteOffset(12), 12, 'getByteOffset in the byte view');
  f.Seek(-4, MPI.SEEK_END);
  equal(f.Get_position(), np * B * 4 - 4, 'SEEK_END (mpi4py spellings)');
  await world.barrier();
  // Collective explicit offsets and their nonblocking forms: rewrite every block shifted by one rank.
  const w = f.IwriteAtAll(((me + 1) % np) * B * 4, block(me + 7));
  await w.wait();
  await sync(f);
  const all = new Int32Array(B);
  await f.IreadAtAll(me * B * 4, all).wait();
  equal(Array.from(all), Array.from(block(((me - 1 + np) % np) + 7)), 'IwriteAtAll then IreadAtAll');
  await f.close();
  await throwsMPI(() => f.ReadAt(0, got), MPI.ERR_FILE, 'File.ReadAt', 'a closed file');
}

// --- default hints: one aggregator per host -------------------------------------------------------
{
  const f = await MPI.File.open(world, path.join(dir, 'blocks.dat'), MPI.MODE_RDONLY);
  const hosts = new Set(await world.allgather(MPI.getProcessorName()));
  equal(f.getInfo().get('cb_nodes'), String(hosts.size), 'default cb_nodes: one aggregator per host');
  equal(f.getInfo().get('cb_buffer_size'), String(16 * 1024 * 1024), 'default cb_buffer_size');
  await f.close();
}

// --- a 3-D array through subarray views, written by one decomposition, read by another ------------
{
  const name = path.join(dir, 'array3d.dat');
  const G = [6, 10, 8];
  const value = (i: number, j: number, k: number): number => (i * G[1]! + j) * G[2]! + k + 0.5;
  const local = (t: Tile): Float64Array => tileData(t, (n) => new Float64Array(n), value);
  const dimsW = MPI.computeDims(np, 3);
  const tw = tileOf(G, dimsW, coordsOf(dimsW, me));
  const f = await MPI.File.open(world, name, MPI.MODE_CREATE | MPI.MODE_RDWR, hints);
  const ftW = MPI.Datatype.subarray(G, tw.sizes, tw.starts, 'C', MPI.FLOAT64).commit();
  await f.setView(0, MPI.FLOAT64, ftW);
  equal(f.getView().datarep, 'native', 'getView datarep');
  check(f.getView().filetype === ftW, 'getView filetype');
  const st = await f.WriteAll(local(tw));
  equal(st.getCount(MPI.FLOAT64), tw.sizes[0]! * tw.sizes[1]! * tw.sizes[2]!, 'WriteAll count');
  equal(f.getPosition(), tw.sizes[0]! * tw.sizes[1]! * tw.sizes[2]!, 'WriteAll advanced the pointer');
  await sync(f);
  // Byte for byte: the whole file as one read in the byte view.
  if (me === 0) {
    const raw = fs.readFileSync(name);
    const whole = new Float64Array(raw.buffer, raw.byteOffset, raw.length / 8);
    equal(whole.length, G[0]! * G[1]! * G[2]!, 'file holds the whole array');
    let bad = -1;
    for (let n = 0; n < whole.length && bad < 0; n++) if (whole[n] !== n + 0.5) bad = n;
    equal(bad, -1, 'first wrong element of the collectively written array');
  }
  // Read back with another decomposition (the dimensions reversed), collectively, and with the pointer.
  const dimsR = [...dimsW].reverse();
  const tr = tileOf(G, dimsR, coordsOf(dimsR, (me + 1) % np));
  const ftR = MPI.Datatype.subarray(G, tr.sizes, tr.starts, 'C', MPI.FLOAT64).commit();
  await f.setView(0, MPI.FLOAT64, ftR);
  const back = new Float64Array(tr.sizes[0]! * tr.sizes[1]! * tr.sizes[2]!);
  equal((await f.ReadAtAll(0, back)).getCount(MPI.FLOAT64), back.length, 'ReadAtAll count');
  equal(Array.from(back), Array.from(local(tr)), 'ReadAtAll of another decomposition');
  back.fill(0);
  await f.IreadAll(back).wait();
  equal(Array.from(back), Array.from(local(tr)), 'IreadAll');
  equal(f.getByteOffset(0), 8 * ((tr.starts[0]! * G[1]! + tr.starts[1]!) * G[2]! + tr.starts[2]!), 'getByteOffset of the first element');
  f.seek(0, MPI.SEEK_END);
  equal(f.getPosition(), back.length, 'SEEK_END in a subarray view: after the whole tile');
  await f.close();
  ftW.free();
  ftR.free();
}

// --- shared file pointer: every record exactly once; ordered access in rank order ----------------
{
  const name = path.join(dir, 'shared.dat');
  const f = await MPI.File.open(world, name, MPI.MODE_CREATE | MPI.MODE_RDWR | MPI.MODE_DELETE_ON_CLOSE);
  const rec = MPI.Datatype.contiguous(2, MPI.INT32).commit();
  await f.setView(0, rec, rec);
  const R = 3;
  for (let i = 0; i < R; i++) equal((await f.WriteShared(Int32Array.of(me, i))).getCount(rec), 1, 'WriteShared count');
  await sync(f);
  equal(await f.getPositionShared(), np * R, 'getPositionShared after every WriteShared');
  if (me === 0) {
    const raw = fs.readFileSync(name);
    const words = new Int32Array(raw.buffer, raw.byteOffset, raw.length / 4);
    equal(words.length, np * R * 2, 'records in the file');
    const seen = new Set<string>();
    for (let n = 0; n < words.length; n += 2) seen.add(`${words[n]}:${words[n + 1]}`);
    equal(seen.size, np * R, 'every record exactly once');
  }
  await world.barrier();
  // ReadShared: the records again, each read by exactly one process.
  await f.seekShared(0);
  const mine = new Int32Array(2);
  await f.ReadShared(mine);
  const reads = await world.allgather(`${mine[0]}:${mine[1]}`);
  equal(new Set(reads).size, np, 'ReadShared: each record read once');
  // Ordered: rank r writes r + 1 records; the file holds them in rank order after the others.
  await f.seekShared(0);
  await f.setSize(0);
  const mineOrdered = Int32Array.from({ length: 2 * (me + 1) }, (_, i) => (i % 2 === 0 ? me : i));
  equal((await f.WriteOrdered(mineOrdered)).getCount(rec), me + 1, 'WriteOrdered count');
  await sync(f);
  if (me === 0) {
    const raw = fs.readFileSync(name);
    const words = new Int32Array(raw.buffer, raw.byteOffset, raw.length / 4);
    const ranks = Array.from({ length: words.length / 2 }, (_, n) => words[2 * n]!);
    equal(ranks, Array.from({ length: np }, (_, r) => Array<number>(r + 1).fill(r)).flat(), 'WriteOrdered: rank order');
  }
  await f.seekShared(0);
  const again = new Int32Array(2 * (me + 1));
  await f.ReadOrdered(again);
  equal(Array.from(again), Array.from(mineOrdered), 'ReadOrdered reads back what WriteOrdered wrote');
  equal(await f.getPositionShared(), (np * (np + 1)) / 2, 'shared pointer after ReadOrdered');
  await f.close();
  check(!fs.existsSync(name), 'MODE_DELETE_ON_CLOSE removed the file');
  rec.free();
}

// --- sizes, atomic mode, external32 ----------------------------------------------------------
{
  const name = path.join(dir, 'misc.dat');
  const f = await MPI.File.open(world, name, MPI.MODE_CREATE | MPI.MODE_RDWR);
  await f.preallocate(4096);
  equal(await f.getSize(), 4096, 'preallocate extends');
  await f.preallocate(100);
  equal(await f.getSize(), 4096, 'preallocate never shrinks');
  await f.setSize(64);
  equal(await f.getSize(), 64, 'setSize truncates');
  await f.setAtomicity(true);
  check(f.getAtomicity(), 'getAtomicity');
  // Atomic mode: everybody writes the same strided 8 records; each record is one process's whole record.
  const strided = MPI.Datatype.vector(8, 1, 2, MPI.INT32).commit();
  await f.setView(0, MPI.INT32, strided);
  await f.WriteAt(0, Int32Array.from({ length: 8 }, () => me + 1));
  await world.barrier();
  const seen = new Int32Array(8);
  await f.ReadAt(0, seen);
  check(seen.every((x) => x === seen[0]) && seen[0]! >= 1 && seen[0]! <= np, `atomic noncontiguous writes are not mixed: ${Array.from(seen)}`);
  await f.setAtomicity(false);
  // external32: big-endian in the file, native again when read through the same datarep.
  const values = Int32Array.from({ length: 4 }, (_, i) => (me + 1) * 0x01020304 + i);
  await f.setView(0, MPI.INT32, MPI.INT32, 'external32');
  await f.WriteAtAll(me * 4, values);
  await sync(f);
  const raw = new Uint8Array(16);
  await f.setView(0, MPI.BYTE, MPI.BYTE);
  await f.ReadAt(me * 16, raw);
  const dv = new DataView(raw.buffer);
  equal([0, 1, 2, 3].map((i) => dv.getInt32(4 * i, false)), Array.from(values), 'external32 is big-endian in the file');
  await f.setView(0, MPI.INT32, MPI.INT32, 'external32');
  const back = new Int32Array(4);
  await f.ReadAtAll(me * 4, back);
  equal(Array.from(back), Array.from(values), 'external32 read back');
  await f.close();
  strided.free();
}

// --- errors -------------------------------------------------------------------------------
{
  const missing = path.join(dir, 'missing.dat');
  await throwsMPI(() => MPI.File.open(world, missing, MPI.MODE_RDONLY), MPI.ERR_NO_SUCH_FILE, 'File.open', 'open a missing file without CREATE');
  try {
    await MPI.File.open(world, missing, MPI.MODE_RDONLY);
  } catch (e) {
    check(String((e as Error).message).includes(missing) && String((e as Error).message).includes('ENOENT'), `the message names the path and ENOENT: ${(e as Error).message}`);
  }
  const hinted = path.join(dir, 'hinted.dat');
  await throwsMPI(() => MPI.File.open(world, hinted, MPI.MODE_CREATE | MPI.MODE_RDWR, new MPI.Info({ cb_nodes: 'many' })), MPI.ERR_ARG, 'File.open', 'a bad cb_nodes hint');
  await throwsMPI(() => MPI.File.open(world, hinted, MPI.MODE_CREATE | MPI.MODE_RDWR, new MPI.Info({ romio_cb_write: 'sometimes' })), MPI.ERR_ARG, 'File.open', 'a bad romio_cb_write hint');
  check(!fs.existsSync(hinted), 'a bad hint creates no file');
  const existing = path.join(dir, 'existing.dat');
  const f = await MPI.File.open(world, existing, MPI.MODE_CREATE | MPI.MODE_WRONLY);
  await throwsMPI(() => f.ReadAt(0, new Uint8Array(1)), MPI.ERR_ACCESS, 'File.ReadAt', 'read a WRONLY file');
  await throwsMPI(() => f.setView(0, MPI.BYTE, MPI.BYTE, 'internal'), MPI.ERR_UNSUPPORTED_DATAREP, 'File.setView', 'unknown datarep');
  await f.close();
  await throwsMPI(() => MPI.File.open(world, existing, MPI.MODE_CREATE | MPI.MODE_EXCL | MPI.MODE_WRONLY), MPI.ERR_FILE_EXISTS, 'File.open', 'EXCL on an existing file');
  await throwsMPI(() => MPI.File.open(world, existing, MPI.MODE_RDONLY | MPI.MODE_RDWR), MPI.ERR_AMODE, 'File.open', 'two access modes');
  await throwsMPI(() => MPI.File.open(world, existing, MPI.MODE_RDONLY | MPI.MODE_CREATE), MPI.ERR_AMODE, 'File.open', 'CREATE with RDONLY');
  const ro = await MPI.File.open(world, existing, MPI.MODE_RDONLY);
  await throwsMPI(() => ro.WriteAt(0, new Uint8Array(1)), MPI.ERR_READ_ONLY, 'File.WriteAt', 'write to a RDONLY file');
  await throwsMPI(() => ro.ReadAt(-1, new Uint8Array(1)), MPI.ERR_ARG, 'File.ReadAt', 'negative offset');
  // A user error handler sees the error first; the call still throws (as for a Comm).
  let handled = 0;
  ro.setErrhandler(MPI.Errhandler.create(() => handled++));
  await throwsMPI(() => ro.WriteShared(new Uint8Array(1)), MPI.ERR_READ_ONLY, 'File.WriteShared', 'WriteShared to a RDONLY file');
  equal(handled, 1, 'the File error handler ran once');
  ro.setErrhandler(MPI.ERRORS_RETURN);
  await ro.close();
  await world.barrier();
  if (me === 0) await MPI.File.delete(existing);
  await world.barrier();
  await throwsMPI(() => MPI.File.delete(existing), MPI.ERR_NO_SUCH_FILE, 'File.delete', 'delete a missing file');
}

if (MPI.config().refcount !== 'gc') equal(MPI.stats().liveObjects, baseline, 'closed files and freed filetypes leave no objects behind');
console.log(`file-io OK rank ${me}`);
await MPI.finalize();
