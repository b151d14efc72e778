/**
 * The fault matrix's program (packages/launcher/test/faults.it.test.ts,
 * docs/RELIABILITY.md section 1): every rank runs one phase of an MPI program
 * over and over, and rank 1, the victim, fails inside it.
 *
 *   fault-phase.ts PHASE FAULT
 *
 * PHASE  init | recv | send | barrier | bcast | allreduce | gather | alltoall |
 *        scan | comm | worker | finalize (see PHASES below)
 * FAULT  exit:   the victim calls process.exit(3) from a timer that fires while
 *                its call of the phase is pending (never finalizing);
 *        signal: the victim prints its pid once it is in the phase and goes
 *                on, for the test to kill -9 or SIGSTOP it.
 * Either way the victim prints `fault-phase: victim pid P in PHASE` first.
 *
 * The other ranks stay in the phase, so only the launcher can end them (or
 * their own loss of the victim). Nothing here may outlive a broken test: a
 * rank still running after SAFETY_MS exits with code 99 by itself.
 */
import * as MPI from '@tsmpi/core';

const [phase = '', fault = ''] = process.argv.slice(2);
const VICTIM = 1;
/** Iterations before the victim announces itself: connections are up and every rank is in the loop. */
const WARM = 5;
const SAFETY_MS = 120_000;
const EXIT_CODE = 3;
const KiB = 1024;

type Loop = (world: MPI.Comm, i: number) => Promise<void>;

if (fault !== 'exit' && fault !== 'signal') usage(`unknown fault '${fault}'`);
const deadline = Date.now() + SAFETY_MS;
setTimeout(() => {
  console.error(`fault-phase: rank ${process.env['TSMPI_RANK']} still running after ${SAFETY_MS} ms in ${phase}; the test never ended the job`);
  process.exit(99);
}, SAFETY_MS).unref();
const isVictim = Number(process.env['TSMPI_RANK']) === VICTIM;

/** The victim's fault, called once it is in the phase, right before the call that the fault should interrupt. */
function strike(): void {
  console.log(`fault-phase: victim pid ${process.pid} in ${phase}`);
  if (fault === 'exit') setTimeout(() => process.exit(EXIT_CODE), 0);
}

/** Runs `body` until the safety deadline; the victim strikes before iteration WARM. */
async function loop(world: MPI.Comm, body: Loop): Promise<void> {
  for (let i = 0; Date.now() < deadline; i++) {
    if (isVictim && i === WARM) strike();
    await body(world, i);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Blocks in a receive that no rank ever matches. */
const never = (world: MPI.Comm, from: number): Promise<unknown> => world.recv(from, 98);

const bcastBuf = new Uint8Array(256 * KiB); // above the 64 KiB eager limit: rendezvous
const sendBuf = new Uint8Array(4 * 1024 * KiB);
const reduceIn = new Float64Array(4096).fill(1);
const reduceOut = new Float64Array(4096);

/** Phases whose every rank loops one body. */
const LOOPS: Record<string, Loop> = {
  barrier: (w) => w.barrier(),
  bcast: (w) => w.Bcast(bcastBuf, 0),
  allreduce: async (w) => {
    await w.Allreduce(reduceIn, reduceOut, MPI.SUM);
    await w.reduce(w.rank, MPI.SUM, 0);
  },
  gather: async (w, i) => {
    const all = await w.gather({ i, from: w.rank }, 0);
    await w.scatter(all, 0);
  },
  alltoall: async (w, i) => {
    await w.alltoall(Array.from({ length: w.size }, (_, d) => i * 100 + d));
  },
  scan: async (w) => {
    await w.scan(w.rank, MPI.SUM);
    await w.exscan(w.rank, MPI.SUM);
  },
  comm: async (w) => {
    const dup = await w.dup();
    const half = await w.split(w.rank % 2, w.rank);
    const group = w.group.excl([w.size - 1]);
    const created = await w.create(group);
    group.free();
    dup.free();
    half?.free();
    created?.free();
  },
};

async function main(): Promise<void> {
  if (phase === 'init') {
    // The others wait inside MPI.init for the victim, which never gets there.
    if (isVictim) {
      strike();
      await sleep(SAFETY_MS);
      return;
    }
    await MPI.init();
    await never(MPI.COMM_WORLD, VICTIM);
    return;
  }
  await MPI.init({ threadLevel: phase === 'worker' ? 'multiple' : 'single' });
  const world = MPI.COMM_WORLD;
  for (let i = 0; i < WARM; i++) await world.barrier();
  const body = LOOPS[phase];
  if (body !== undefined) {
    await loop(world, body);
  } else if (phase === 'recv') {
    // The victim blocks in a receive from rank 0 that is never sent; the others in one from the victim.
    if (isVictim) {
      strike();
      await never(world, 0);
    } else {
      await never(world, VICTIM);
    }
  } else if (phase === 'send') {
    // The victim streams 4 MiB messages (rendezvous) to rank 0; rank 2 waits for the victim.
    if (isVictim) await loop(world, (w) => w.Send(sendBuf, 0, 97));
    else if (world.rank === 0) await loop(world, async (w) => void (await w.Recv(sendBuf, VICTIM, 97)));
    else await never(world, VICTIM);
  } else if (phase === 'worker') {
    await workerPhase(world);
  } else if (phase === 'finalize') {
    // The others wait inside MPI.finalize for the victim, which never calls it.
    if (isVictim) {
      strike();
      await sleep(SAFETY_MS);
      return;
    }
  } else {
    usage(`unknown phase '${phase}'`);
  }
  await MPI.finalize();
}

/**
 * Every rank's MPI.Worker loops allreduce on a dup of COMM_WORLD while the
 * main thread loops barrier; the victim strikes once its worker has run WARM
 * allreduces, so the kill or exit comes while both threads are in collectives.
 */
async function workerPhase(world: MPI.Comm): Promise<void> {
  const comm = await world.dup();
  const worker = new MPI.Worker(new URL('./fault-phase-worker.ts', import.meta.url), { workerData: { comm, warm: WARM, deadline } });
  let isWarm = false;
  worker.on('message', () => {
    isWarm = true;
  });
  worker.on('error', (e) => {
    console.error(`fault-phase: worker of rank ${world.rank} failed: ${String(e)}`);
    process.exit(1);
  });
  let struck = false;
  while (Date.now() < deadline) {
    if (isVictim && isWarm && !struck) {
      struck = true;
      strike();
    }
    await world.barrier();
  }
}

function usage(why: string): never {
  console.error(`fault-phase: ${why}; usage: fault-phase.ts PHASE exit|signal (PHASE: init, recv, send, ${Object.keys(LOOPS).join(', ')}, worker, finalize)`);
  process.exit(2);
}

await main();
