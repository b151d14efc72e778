/**
 * Soak (issue 17): rounds of random traffic for a given time, every message
 * checked. Usage: soak.ts SECONDS SEED [MAX_ROUNDS]. Any number of ranks.
 *
 * Each round, from a plan every rank computes alike (soak-traffic.ts):
 *   - point-to-point: 12 messages per rank, 0 B to 4 MiB (eager and
 *     rendezvous), received three ways: posted specific receives, posted
 *     ANY_SOURCE receives, and iprobe/improbe(ANY_SOURCE, ANY_TAG) followed by
 *     Recv or Message.Recv; plus receives on a tag nobody uses, cancelled;
 *   - collectives: allreduce (checks the round's byte total), Bcast from a
 *     rotating root, allgather, alltoall, Iallreduce, Ibarrier;
 *   - communicators: dup (a ring on it) and split (an allreduce on it), freed;
 *   - a worker thread (MPI.Worker, threadLevel 'multiple') exchanging checked
 *     messages in a ring on its own dup of COMM_WORLD meanwhile.
 * Every received message is regenerated and compared byte for byte; its first
 * bytes carry (round, index, source). A message missing after 120 s counts as
 * lost, one found by iprobe after the round as duplicated (neither hangs the
 * soak). Heap and RSS are sampled after every round.
 *
 * Rank 0 prints one line `soak: {...}` (JSON: counts and memory growth) and
 * `soak OK` when lost, duplicated, corrupted and misordered are all zero;
 * otherwise the job fails.
 */
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import {
  CLASS_SPECIFIC, CLASS_WILDCARD, MiB, Rng, TAG_NEVER, pattern, planRound, verify, type PlannedMessage, type Verdict,
} from './soak-traffic.ts';

const seconds = Number(process.argv[2] ?? '10');
const seed = Number(process.argv[3] ?? '1') >>> 0;
const maxRounds = Number(process.argv[4] ?? '0') || Infinity;
const PER_RANK = 12;
const LOST_AFTER_MS = 120_000;

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const { rank, size } = world;
if (rank === 0) console.log(`soak: seed ${seed}, ${seconds} s, ${size} ranks (replay: soak.ts ${seconds} ${seed})`);

const counts = {
  rounds: 0, messages: 0, bytes: 0, lost: 0, duplicated: 0, corrupted: 0, misordered: 0, cancelled: 0,
  collectives: 0, collectiveErrors: 0, commsCreated: 0, workerMessages: 0, workerErrors: 0,
};

function tally(v: Verdict, what: string): void {
  if (v === 'ok') return;
  if (v === 'sequence') counts.misordered++;
  else counts.corrupted++;
  console.error(`soak rank ${rank}: ${v} error in ${what}`);
}

const wcomm = await world.dup();
const worker = new MPI.Worker(new URL('./soak-worker.ts', import.meta.url), { workerData: { comm: wcomm, seed } });
const workerExit = once(worker, 'exit');

async function pointToPoint(round: number, plan: PlannedMessage[]): Promise<void> {
  const mine = plan.filter((m) => m.src === rank);
  const incoming = plan.filter((m) => m.dst === rank);
  const sends = mine.map((m) => world.Isend(pattern(seed, round, m.index, m.src, m.size), m.dst, m.tag));
  // Posted receives first, so that the wildcard probes below see only wildcard-class messages.
  const posted = incoming.filter((m) => m.cls !== CLASS_WILDCARD).map((m) => {
    const buf = new Uint8Array(m.size);
    return { m, buf, req: world.Irecv(buf, m.cls === CLASS_SPECIFIC ? m.src : MPI.ANY_SOURCE, m.tag) };
  });
  // Receives that never match, cancelled.
  const rng = new Rng(seed, round, rank, 0x43414e43);
  const doomed = Array.from({ length: rng.int(0, 2) }, () => world.Irecv(new Uint8Array(8), rng.chance(0.5) ? MPI.ANY_SOURCE : rng.int(0, size - 1), TAG_NEVER));
  for (const r of doomed) r.cancel();
  // Wildcard class: per source, in sending order.
  const expected = new Map<number, PlannedMessage[]>();
  for (const m of incoming) if (m.cls === CLASS_WILDCARD) (expected.get(m.src) ?? expected.set(m.src, []).get(m.src)!).push(m);
  let pending = incoming.filter((m) => m.cls === CLASS_WILDCARD).length;
  const deadline = Date.now() + LOST_AFTER_MS;
  let useMprobe = false;
  while (pending > 0) {
    if (Date.now() > deadline) {
      counts.lost += pending;
      console.error(`soak rank ${rank}: round ${round}: ${pending} wildcard messages lost`);
      break;
    }
    useMprobe = !useMprobe;
    let status: MPI.Status | null;
    let receive: (buf: Uint8Array) => Promise<unknown>;
    if (useMprobe) {
      const msg = world.improbe(MPI.ANY_SOURCE, MPI.ANY_TAG);
      status = msg?.status ?? null;
      receive = (buf) => msg!.Recv(buf);
    } else {
      status = world.iprobe(MPI.ANY_SOURCE, MPI.ANY_TAG);
      receive = (buf) => world.Recv(buf, status!.source, status!.tag);
    }
    if (status === null) {
      await new Promise((r) => setImmediate(r));
      continue;
    }
    const queue = expected.get(status.source);
    const m = queue?.shift();
    if (m === undefined) {
      counts.duplicated++;
      console.error(`soak rank ${rank}: round ${round}: unexpected message from ${status.source} tag ${status.tag}`);
      await receive(new Uint8Array(status.getCount()));
      continue;
    }
    const buf = new Uint8Array(status.getCount());
    await receive(buf);
    if (status.tag !== m.tag) tally('sequence', `round ${round} message ${m.index} (tag ${status.tag}, expected ${m.tag})`);
    else tally(verify(buf, seed, round, m.index, m.src, m.size), `round ${round} message ${m.index} from ${m.src}`);
    counts.messages++;
    counts.bytes += m.size;
    pending--;
  }
  for (const p of posted) {
    await p.req.wait();
    const st = p.req.status!;
    if (st.source !== p.m.src || st.tag !== p.m.tag) tally('sequence', `round ${round} message ${p.m.index} (status ${st.source}/${st.tag})`);
    else tally(verify(p.buf, seed, round, p.m.index, p.m.src, p.m.size), `round ${round} message ${p.m.index} from ${p.m.src}`);
    counts.messages++;
    counts.bytes += p.m.size;
  }
  for (const r of doomed) {
    await r.wait();
    if (r.status!.cancelled) counts.cancelled++;
    else tally('corrupt', `round ${round}: a receive on an unused tag completed instead of being cancelled`);
  }
  await MPI.Request.waitall(sends);
}

async function collectives(round: number, plan: PlannedMessage[]): Promise<void> {
  const expectEq = (got: unknown, want: unknown, what: string): void => {
    counts.collectives++;
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      counts.collectiveErrors++;
      console.error(`soak rank ${rank}: round ${round}: ${what}: got ${JSON.stringify(got)?.slice(0, 200)}, expected ${JSON.stringify(want)?.slice(0, 200)}`);
    }
  };
  const mySent = plan.filter((m) => m.src === rank).reduce((n, m) => n + m.size, 0);
  expectEq(await world.allreduce(mySent, MPI.SUM), plan.reduce((n, m) => n + m.size, 0), 'allreduce of bytes sent');
  const root = round % size;
  const rng = new Rng(seed, round, 0x42434153);
  const n = rng.int(0, 300_000); // up to 2.3 MiB of float64: eager and rendezvous
  const want = Float64Array.from({ length: n }, (_, i) => i * 0.5 + round);
  const got = rank === root ? Float64Array.from(want) : new Float64Array(n);
  await world.Bcast(got, root);
  counts.collectives++;
  if (!Buffer.from(got.buffer).equals(Buffer.from(want.buffer))) {
    counts.collectiveErrors++;
    console.error(`soak rank ${rank}: round ${round}: Bcast of ${n} doubles from ${root} differs`);
  }
  expectEq(await world.allgather([rank, round]), Array.from({ length: size }, (_, r) => [r, round]), 'allgather');
  expectEq(await world.alltoall(Array.from({ length: size }, (_, r) => rank * 1000 + r)), Array.from({ length: size }, (_, r) => r * 1000 + rank), 'alltoall');
  const sum = new Int32Array(4);
  await world.Iallreduce(Int32Array.of(rank, 1, round, -rank), sum, MPI.SUM).wait();
  const ranks = (size * (size - 1)) / 2;
  expectEq(Array.from(sum), [ranks, size, round * size, -ranks], 'Iallreduce');
  await world.ibarrier().wait();
}

async function communicators(round: number): Promise<void> {
  const dup = await world.dup();
  const right = (rank + 1) % size;
  const left = (rank - 1 + size) % size;
  const v = await dup.sendrecv({ round, from: rank }, right, 5, left, 5);
  counts.collectives++;
  if (JSON.stringify(v) !== JSON.stringify({ round, from: left })) {
    counts.collectiveErrors++;
    console.error(`soak rank ${rank}: round ${round}: ring on a dup got ${JSON.stringify(v)}`);
  }
  dup.free();
  const colors = 1 + (round % 3);
  const color = rank % colors;
  const part = await world.split(color, -rank);
  const members = Array.from({ length: size }, (_, r) => r).filter((r) => r % colors === color);
  const total = await part!.allreduce(rank, MPI.SUM);
  counts.collectives++;
  if (part!.size !== members.length || part!.rank !== members.length - 1 - members.indexOf(rank) || total !== members.reduce((a, b) => a + b, 0)) {
    counts.collectiveErrors++;
    console.error(`soak rank ${rank}: round ${round}: split(${color}) gave size ${part!.size} rank ${part!.rank} sum ${total}`);
  }
  part!.free();
  counts.commsCreated += 2;
}

const start = Date.now();
const samples: { t: number; heap: number; rss: number }[] = [];
for (let round = 0; ; round++) {
  const more = await world.bcast(rank === 0 ? Date.now() - start < seconds * 1000 && round < maxRounds : false, 0);
  if (!more) break;
  const plan = planRound(seed, round, size, PER_RANK);
  const workerDone = once(worker, 'message');
  worker.postMessage({ round });
  await pointToPoint(round, plan);
  await world.barrier();
  // Anything still there after every rank received its round is a duplicate.
  for (let st = world.iprobe(); st !== null; st = world.iprobe()) {
    counts.duplicated++;
    console.error(`soak rank ${rank}: round ${round}: extra message from ${st.source} tag ${st.tag}`);
    await world.Recv(new Uint8Array(st.getCount()), st.source, st.tag);
  }
  await collectives(round, plan);
  await communicators(round);
  const [w] = (await workerDone) as [{ messages: number; errors: number }];
  counts.workerMessages += w.messages;
  counts.workerErrors += w.errors;
  counts.rounds++;
  const mu = process.memoryUsage();
  samples.push({ t: Date.now() - start, heap: mu.heapUsed, rss: mu.rss });
  await world.barrier();
}
worker.postMessage({ stop: true });
await workerExit;
wcomm.free();

// Memory growth: the last sample against the first one after a fifth of the run (warm-up).
const warm = samples.find((s) => s.t >= samples.at(-1)!.t / 5) ?? samples[0];
const last = samples.at(-1);
const growth = (k: 'heap' | 'rss'): number => (warm === undefined || last === undefined ? 0 : Math.round(((last[k] - warm[k]) / MiB) * 10) / 10);
const mine = [
  counts.messages, counts.bytes, counts.lost, counts.duplicated, counts.corrupted, counts.misordered, counts.cancelled,
  counts.collectives, counts.collectiveErrors, counts.commsCreated, counts.workerMessages, counts.workerErrors,
];
const totals = await world.allreduce(Float64Array.from(mine), MPI.SUM);
const heapGrowth = await world.allreduce(growth('heap'), MPI.MAX);
const rssGrowth = await world.allreduce(growth('rss'), MPI.MAX);
const rssMax = await world.allreduce(Math.round(Math.max(0, ...samples.map((s) => s.rss)) / MiB), MPI.MAX);
if (rank === 0) {
  const [messages, bytes, lost, duplicated, corrupted, misordered, cancelled, colls, collErrors, comms, workerMessages, workerErrors] = Array.from(totals);
  const report = {
    seed, ranks: size, seconds: Math.round((Date.now() - start) / 100) / 10, rounds: counts.rounds, messages, bytes, lost, duplicated, corrupted, misordered, cancelled,
    collectives: colls, collectiveErrors: collErrors, commsCreated: comms, workerMessages, workerErrors,
    heapGrowthMiB: heapGrowth, rssGrowthMiB: rssGrowth, rssMaxMiB: rssMax, config: MPI.config(),
  };
  console.log(`soak: ${JSON.stringify(report)}`);
  if (lost + duplicated + corrupted + misordered + collErrors + workerErrors === 0 && counts.rounds > 0) console.log('soak OK');
}
const isBad = totals[2]! + totals[3]! + totals[4]! + totals[5]! + totals[8]! + totals[11]! > 0;
await MPI.finalize();
if (isBad) process.exitCode = 1;
