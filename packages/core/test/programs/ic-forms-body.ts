// The intercommunicator buffer collectives in every form (issue 36), as intercomm-forms.ts and the
// threads of ic-forms-threads.ts run them: each call blocking, nonblocking (I…) and persistent
// (…Init, started twice with new contents), every result checked byte for byte, then a phase of
// nonblocking and persistent calls all started before any is waited for (MPI's ordering rule: the
// same start order on every rank). Rooted calls take each group as the root's in turn (MPI.ROOT,
// PROC_NULL, the root's remote rank); v- and w-buffers place the blocks in reverse order with gaps
// that must stay untouched. `salt` makes each thread's values its own.
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

type Req = MPI.Request<unknown>;

/** Runs `fill(round)`, the call, `verify(round)`: blocking (round 0), I… (1), …Init started twice (2, 3). */
async function forms(fill: (round: number) => void, verify: (round: number) => void, blocking: () => Promise<unknown>, nonblocking: () => Req, persistent: () => Req): Promise<void> {
  fill(0);
  await blocking();
  verify(0);
  fill(1);
  await nonblocking().wait();
  verify(1);
  const p = persistent();
  for (const round of [2, 3]) {
    fill(round);
    p.start();
    await p.wait();
    verify(round);
  }
  p.free();
}

/** counts[j] items per block, placed in reverse order with one free item before each block: [displs, total length]. */
function reversedDispls(counts: number[]): [number[], number] {
  const displs = new Array<number>(counts.length);
  let at = 0;
  for (let j = counts.length - 1; j >= 0; j--) {
    at += 1;
    displs[j] = at;
    at += counts[j]!;
  }
  return [displs, at];
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

export async function runInterForms(inter: MPI.Intercomm, salt: number, who: string): Promise<number> {
  const me = MPI.COMM_WORLD.rank;
  const lr = inter.rank;
  const L = inter.size;
  const R = inter.remoteSize;
  const remoteWorld = (await inter.allgather(me)) as number[];
  const isLow = me < remoteWorld[0]!;
  const s = salt;
  const t = (what: string, round: number): string => `${who} ${what} round ${round}`;
  let calls = 0;

  // --- rooted: each group holds the root in turn, the root being its last rank
  for (const rootLow of [true, false]) {
    const inRootGroup = isLow === rootLow;
    const rootLocal = (inRootGroup ? L : R) - 1;
    const isRoot = inRootGroup && lr === rootLocal;
    const root = inRootGroup ? (isRoot ? MPI.ROOT : MPI.PROC_NULL) : rootLocal;
    const idle = root === MPI.PROC_NULL;
    const rootWorld = inRootGroup ? me : remoteWorld[rootLocal]!;
    const side = `root ${rootLow ? 'low' : 'high'}`;

    // Bcast
    const bb = new Int32Array(4);
    await forms(
      (r) => bb.forEach((_, k) => { bb[k] = isRoot ? s + r * 1000 + k * 7 + me : -1; }),
      (r) => equal(Array.from(bb), Array.from({ length: 4 }, (_, k) => (idle ? -1 : s + r * 1000 + k * 7 + rootWorld)), t(`Bcast ${side}`, r)),
      () => inter.Bcast(bb, root), () => inter.Ibcast(bb, root), () => inter.BcastInit(bb, root));

    // Reduce: the root gets the other group's sum
    const rs = new Float64Array(3);
    const rr = new Float64Array(3);
    await forms(
      (r) => { rs.set([me + r + s, 1, me * r]); rr.fill(-1); },
      (r) => equal(Array.from(rr), isRoot ? [sum(remoteWorld) + R * (r + s), R, sum(remoteWorld) * r] : [-1, -1, -1], t(`Reduce ${side}`, r)),
      () => inter.Reduce(rs, isRoot ? rr : null, MPI.SUM, root), () => inter.Ireduce(rs, isRoot ? rr : null, MPI.SUM, root),
      () => inter.ReduceInit(rs, isRoot ? rr : null, MPI.SUM, root));

    // Gather: 2 items per remote rank
    const gs = new Int32Array(2);
    const gr = new Int32Array(2 * R);
    await forms(
      (r) => { gs.set([me + s, r]); gr.fill(-1); },
      (r) => equal(Array.from(gr), isRoot ? remoteWorld.flatMap((w) => [w + s, r]) : new Array<number>(2 * R).fill(-1), t(`Gather ${side}`, r)),
      () => inter.Gather(gs, isRoot ? gr : null, root), () => inter.Igather(gs, isRoot ? gr : null, root), () => inter.GatherInit(gs, isRoot ? gr : null, root));

    // Gatherv: remote rank j sends j + 1 items
    const gvCounts = Array.from({ length: R }, (_, j) => j + 1);
    const [gvDispls, gvLen] = reversedDispls(gvCounts);
    const gvs = new Int32Array(lr + 1);
    const gvr = new Int32Array(gvLen);
    const gvExpect = (r: number): number[] => {
      const out = new Array<number>(gvLen).fill(-1);
      if (isRoot) gvCounts.forEach((c, j) => { for (let k = 0; k < c; k++) out[gvDispls[j]! + k] = remoteWorld[j]! * 10 + r + s + k; });
      return out;
    };
    await forms(
      (r) => { gvs.forEach((_, k) => { gvs[k] = me * 10 + r + s + k; }); gvr.fill(-1); },
      (r) => equal(Array.from(gvr), gvExpect(r), t(`Gatherv ${side}`, r)),
      () => inter.Gatherv(gvs, isRoot ? [gvr, gvCounts, gvDispls] : null, root), () => inter.Igatherv(gvs, isRoot ? [gvr, gvCounts, gvDispls] : null, root),
      () => inter.GathervInit(gvs, isRoot ? [gvr, gvCounts, gvDispls] : null, root));

    // Scatter: 2 items per remote rank
    const ss = new Int16Array(2 * R);
    const sr = new Int16Array(2);
    const inRemote = !inRootGroup;
    await forms(
      (r) => { ss.forEach((_, i) => { ss[i] = isRoot ? i * 3 + r + s : -1; }); sr.fill(-1); },
      (r) => equal(Array.from(sr), inRemote ? [lr * 6 + r + s, lr * 6 + 3 + r + s] : [-1, -1], t(`Scatter ${side}`, r)),
      () => inter.Scatter(isRoot ? ss : null, sr, root), () => inter.Iscatter(isRoot ? ss : null, sr, root), () => inter.ScatterInit(isRoot ? ss : null, sr, root));

    // Scatterv: remote rank j gets j + 1 items
    const svCounts = Array.from({ length: R }, (_, j) => j + 1);
    const [svDispls, svLen] = reversedDispls(svCounts);
    const svs = new Float64Array(svLen);
    const svr = new Float64Array(lr + 1);
    await forms(
      (r) => { svs.forEach((_, i) => { svs[i] = isRoot ? i + r / 4 + s : -1; }); svr.fill(-1); },
      (r) => equal(Array.from(svr), Array.from({ length: lr + 1 }, (_, k) => (inRemote ? reversedDispls(Array.from({ length: L }, (_, j) => j + 1))[0][lr]! + k + r / 4 + s : -1)), t(`Scatterv ${side}`, r)),
      () => inter.Scatterv(isRoot ? [svs, svCounts, svDispls] : null, svr, root), () => inter.Iscatterv(isRoot ? [svs, svCounts, svDispls] : null, svr, root),
      () => inter.ScattervInit(isRoot ? [svs, svCounts, svDispls] : null, svr, root));
    calls += 6;
  }

  // --- all-to-all
  // Allreduce
  const as = new Int32Array(2);
  const ar = new Int32Array(2);
  await forms(
    (r) => { as.set([me + s, r]); ar.fill(-1); },
    (r) => equal(Array.from(ar), [sum(remoteWorld) + R * s, R * r], t('Allreduce', r)),
    () => inter.Allreduce(as, ar, MPI.SUM), () => inter.Iallreduce(as, ar, MPI.SUM), () => inter.AllreduceInit(as, ar, MPI.SUM));

  // Allgather
  const ags = new Int32Array(2);
  const agr = new Int32Array(2 * R);
  await forms(
    (r) => { ags.set([me + s, r]); agr.fill(-1); },
    (r) => equal(Array.from(agr), remoteWorld.flatMap((w) => [w + s, r]), t('Allgather', r)),
    () => inter.Allgather(ags, agr), () => inter.Iallgather(ags, agr), () => inter.AllgatherInit(ags, agr));

  // Allgatherv: remote rank j sends j + 1 items
  const agvCounts = Array.from({ length: R }, (_, j) => j + 1);
  const [agvDispls, agvLen] = reversedDispls(agvCounts);
  const agvs = new Int32Array(lr + 1);
  const agvr = new Int32Array(agvLen);
  await forms(
    (r) => { agvs.forEach((_, k) => { agvs[k] = me * 100 + k + r * 7 + s; }); agvr.fill(-1); },
    (r) => {
      const out = new Array<number>(agvLen).fill(-1);
      agvCounts.forEach((c, j) => { for (let k = 0; k < c; k++) out[agvDispls[j]! + k] = remoteWorld[j]! * 100 + k + r * 7 + s; });
      equal(Array.from(agvr), out, t('Allgatherv', r));
    },
    () => inter.Allgatherv(agvs, [agvr, agvCounts, agvDispls]), () => inter.Iallgatherv(agvs, [agvr, agvCounts, agvDispls]),
    () => inter.AllgathervInit(agvs, [agvr, agvCounts, agvDispls]));

  // Alltoall: block j (2 items) to remote rank j
  const a2s = new Int32Array(2 * R);
  const a2r = new Int32Array(2 * R);
  await forms(
    (r) => { for (let j = 0; j < R; j++) a2s.set([me * 100 + j + s, r], 2 * j); a2r.fill(-1); },
    (r) => equal(Array.from(a2r), remoteWorld.flatMap((w) => [w * 100 + lr + s, r]), t('Alltoall', r)),
    () => inter.Alltoall(a2s, a2r), () => inter.Ialltoall(a2s, a2r), () => inter.AlltoallInit(a2s, a2r));

  // Alltoallv: local rank a sends local rank b of the other group (a + b) % 3 + 1 items
  const n = (a: number, b: number): number => ((a + b) % 3) + 1;
  const avSendCounts = Array.from({ length: R }, (_, j) => n(lr, j));
  const avSendDispls = avSendCounts.map((_, j) => sum(avSendCounts.slice(0, j)));
  const avRecvCounts = Array.from({ length: R }, (_, j) => n(j, lr));
  const [avRecvDispls, avRecvLen] = reversedDispls(avRecvCounts);
  const avs = new Int32Array(sum(avSendCounts));
  const avr = new Int32Array(avRecvLen);
  await forms(
    (r) => { for (let j = 0; j < R; j++) for (let k = 0; k < avSendCounts[j]!; k++) avs[avSendDispls[j]! + k] = me * 1000 + j * 10 + k + r * 100000 + s; avr.fill(-1); },
    (r) => {
      const out = new Array<number>(avRecvLen).fill(-1);
      for (let j = 0; j < R; j++) for (let k = 0; k < avRecvCounts[j]!; k++) out[avRecvDispls[j]! + k] = remoteWorld[j]! * 1000 + lr * 10 + k + r * 100000 + s;
      equal(Array.from(avr), out, t('Alltoallv', r));
    },
    () => inter.Alltoallv([avs, avSendCounts, avSendDispls], [avr, avRecvCounts, avRecvDispls]),
    () => inter.Ialltoallv([avs, avSendCounts, avSendDispls], [avr, avRecvCounts, avRecvDispls]),
    () => inter.AlltoallvInit([avs, avSendCounts, avSendDispls], [avr, avRecvCounts, avRecvDispls]));

  // Alltoallw: the block between local ranks a and b is 2 INT32 when a + b is even, else 1 FLOAT64 (8 bytes each, at byte 8j)
  const isInt = (a: number, b: number): boolean => (a + b) % 2 === 0;
  const wTypes = Array.from({ length: R }, (_, j) => (isInt(lr, j) ? MPI.INT32 : MPI.FLOAT64));
  const wCounts = Array.from({ length: R }, (_, j) => (isInt(lr, j) ? 2 : 1));
  const wDispls = Array.from({ length: R }, (_, j) => 8 * j);
  const ws = new ArrayBuffer(8 * R);
  const wr = new ArrayBuffer(8 * R);
  const wsv = new DataView(ws);
  const wrv = new DataView(wr);
  await forms(
    (r) => {
      for (let j = 0; j < R; j++) {
        if (isInt(lr, j)) { wsv.setInt32(8 * j, me * 100 + j + s, true); wsv.setInt32(8 * j + 4, r, true); } else wsv.setFloat64(8 * j, me + j / 4 + r + s, true);
      }
      new Uint8Array(wr).fill(0xee);
    },
    (r) => {
      for (let j = 0; j < R; j++) {
        const got = isInt(lr, j) ? [wrv.getInt32(8 * j, true), wrv.getInt32(8 * j + 4, true)] : [wrv.getFloat64(8 * j, true)];
        const want = isInt(lr, j) ? [remoteWorld[j]! * 100 + lr + s, r] : [remoteWorld[j]! + lr / 4 + r + s];
        equal(got, want, t(`Alltoallw block ${j}`, r));
      }
    },
    () => inter.Alltoallw([new Uint8Array(ws), wCounts, wDispls, wTypes], [new Uint8Array(wr), wCounts, wDispls, wTypes]),
    () => inter.Ialltoallw([new Uint8Array(ws), wCounts, wDispls, wTypes], [new Uint8Array(wr), wCounts, wDispls, wTypes]),
    () => inter.AlltoallwInit([new Uint8Array(ws), wCounts, wDispls, wTypes], [new Uint8Array(wr), wCounts, wDispls, wTypes]));

  // ReduceScatterBlock: both groups reduce L * R items; local rank r gets block r of R items (this group) -- the blocks are L * R / L = R long
  const total = L * R;
  const rsbs = new Int32Array(total);
  const rsbr = new Int32Array(R);
  await forms(
    (r) => { rsbs.forEach((_, i) => { rsbs[i] = me + i * 2 + r + s; }); rsbr.fill(-1); },
    (r) => equal(Array.from(rsbr), Array.from({ length: R }, (_, k) => sum(remoteWorld) + R * ((lr * R + k) * 2 + r + s)), t('ReduceScatterBlock', r)),
    () => inter.ReduceScatterBlock(rsbs, rsbr, MPI.SUM), () => inter.IreduceScatterBlock(rsbs, rsbr, MPI.SUM),
    () => inter.ReduceScatterBlockInit(rsbs, rsbr, MPI.SUM));

  // ReduceScatter: the same L * R items in blocks of unequal counts over the local ranks
  const rsCounts = Array.from({ length: L }, (_, q) => (q < L - 1 ? q : total - ((L - 1) * (L - 2)) / 2));
  const rsAt = sum(rsCounts.slice(0, lr));
  const rss = new Float64Array(total);
  const rsr = new Float64Array(rsCounts[lr]! + 1);
  await forms(
    (r) => { rss.forEach((_, i) => { rss[i] = me * 0.5 + i + r + s; }); rsr.fill(-1); },
    (r) => equal(Array.from(rsr), [...Array.from({ length: rsCounts[lr]! }, (_, k) => sum(remoteWorld) * 0.5 + R * (rsAt + k + r + s)), -1], t('ReduceScatter', r)),
    () => inter.ReduceScatter(rss, rsr, rsCounts, MPI.SUM), () => inter.IreduceScatter(rss, rsr, rsCounts, MPI.SUM),
    () => inter.ReduceScatterInit(rss, rsr, rsCounts, MPI.SUM));

  // Barrier forms
  await inter.Ibarrier().wait();
  const bp = inter.BarrierInit();
  for (let k = 0; k < 2; k++) {
    bp.start();
    await bp.wait();
  }
  bp.free();
  calls += 9;

  // --- overlap: persistent and nonblocking calls all started, then waited for together, a few rounds
  const ox = new Float64Array(1);
  const osum = new Float64Array(1);
  const oinit = inter.AllreduceInit(ox, osum, MPI.SUM);
  const oagv = new Int32Array(agvLen);
  const oa2v = new Int32Array(avRecvLen);
  for (let round = 0; round < 5; round++) {
    ox[0] = me + round + s;
    agvs.forEach((_, k) => { agvs[k] = me * 100 + k + round * 7 + s; });
    for (let j = 0; j < R; j++) for (let k = 0; k < avSendCounts[j]!; k++) avs[avSendDispls[j]! + k] = me * 1000 + j * 10 + k + round * 100000 + s;
    oagv.fill(-1);
    oa2v.fill(-1);
    rss.forEach((_, i) => { rss[i] = me * 0.5 + i + round + s; });
    rsr.fill(-1);
    oinit.start();
    const reqs: Req[] = [
      inter.Iallgatherv(agvs, [oagv, agvCounts, agvDispls]),
      inter.Ibarrier(),
      inter.Ialltoallv([avs, avSendCounts, avSendDispls], [oa2v, avRecvCounts, avRecvDispls]),
      inter.IreduceScatter(rss, rsr, rsCounts, MPI.SUM),
    ];
    await MPI.Request.waitall([...reqs, oinit]);
    check(osum[0] === sum(remoteWorld) + R * (round + s), t('overlap AllreduceInit', round));
    agvCounts.forEach((c, j) => { for (let k = 0; k < c; k++) check(oagv[agvDispls[j]! + k] === remoteWorld[j]! * 100 + k + round * 7 + s, t('overlap Iallgatherv', round)); });
    for (let j = 0; j < R; j++) for (let k = 0; k < avRecvCounts[j]!; k++) check(oa2v[avRecvDispls[j]! + k] === remoteWorld[j]! * 1000 + lr * 10 + k + round * 100000 + s, t('overlap Ialltoallv', round));
    for (let k = 0; k < rsCounts[lr]!; k++) check(rsr[k] === sum(remoteWorld) * 0.5 + R * (rsAt + k + round + s), t('overlap IreduceScatter', round));
  }
  oinit.free();
  return calls;
}
