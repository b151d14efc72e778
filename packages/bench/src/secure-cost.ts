/**
 * The cost of mpiexec --secure across hosts (issue 35): message rate (msgrate.ts) and the 8 MiB
 * allreduce (allreduce.ts) between two hosts of a namespace cluster (scripts/netns-cluster.sh:
 * one rank on each, every byte over the bridge), with and without --secure, interleaved: each
 * round runs both modes, in alternating order, so that a machine that slows down or speeds up
 * weighs on both alike. Needs root (network namespaces), sshd and ssh, as the cluster does.
 *
 *   npx tsx packages/bench/src/secure-cost.ts [--rounds N] [--iterations N] [--allreduce-iterations N]
 *
 * Prints one line per run and a summary (medians over the rounds, secure / plain). Timings are
 * only worth something on a quiet machine: this script makes no claim, it measures.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './stats.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLUSTER = path.join(ROOT, 'scripts/netns-cluster.sh');
const MPIEXEC = path.join(ROOT, 'packages/launcher/bin/mpiexec.mjs');
const MSGRATE = path.join(ROOT, 'packages/bench/src/msgrate.ts');
const ALLREDUCE = path.join(ROOT, 'packages/bench/src/allreduce.ts');
const ALLREDUCE_BYTES = 8 * 1024 * 1024;

const USAGE = `usage: npx tsx packages/bench/src/secure-cost.ts [flags]   (as root)

Message rate and ${ALLREDUCE_BYTES}-byte allreduce between two namespace hosts, with and
without mpiexec --secure, interleaved round by round.

  --rounds N                 rounds, each running both modes (default 5)
  --iterations N             msgrate iterations of 12 messages (default 10000)
  --allreduce-iterations N   8 MiB allreduce calls (default 20)
  -h, --help                 this text`;

interface Options {
  rounds: number;
  iterations: number;
  allreduceIterations: number;
}

function parse(argv: readonly string[]): Options | null {
  const o: Options = { rounds: 5, iterations: 10_000, allreduceIterations: 20 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-h' || a === '--help') return null;
    const v = Number(argv[++i]);
    if (!Number.isInteger(v) || v < 1) throw new Error(`${a} ${argv[i] ?? ''}: expected a positive integer`);
    if (a === '--rounds') o.rounds = v;
    else if (a === '--iterations') o.iterations = v;
    else if (a === '--allreduce-iterations') o.allreduceIterations = v;
    else throw new Error(`unknown flag ${a}`);
  }
  return o;
}

interface Cluster {
  readonly id: string;
  readonly sshConfig: string;
}

function cluster(args: readonly string[]): string {
  const r = spawnSync(CLUSTER, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${CLUSTER} ${args.join(' ')}: ${r.stderr.trim() || `exit ${r.status}`}`);
  return r.stdout;
}

/** Runs one benchmark job on th1 with one rank on th1 and one on th2; returns the NDJSON records it wrote. */
function runJob(c: Cluster, secure: boolean, program: string, flags: readonly string[], tmp: string): Record<string, unknown>[] {
  const json = path.join(tmp, `run-${Date.now()}-${Math.random().toString(36).slice(2)}.ndjson`);
  const argv = [
    'exec', '--id', c.id, 'th1', '--', process.execPath, MPIEXEC, '--launcher-exec', `ssh -F ${c.sshConfig}`,
    ...(secure ? ['--secure'] : []), '-n', '2', '--hosts', 'th1:1,th2:1', program, ...flags, '--json', json,
  ];
  const r = spawnSync(CLUSTER, argv, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 600_000 });
  if (r.status !== 0) throw new Error(`${path.basename(program)}${secure ? ' --secure' : ''} exited ${r.status}: ${r.stderr.trim().slice(-2000)}`);
  return readFileSync(json, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
}

interface Sample {
  readonly messagesPerSecond: number;
  readonly allreduceMedianMicros: number;
  readonly allreduceMBs: number;
}

function measure(c: Cluster, secure: boolean, o: Options, tmp: string): Sample {
  const rate = runJob(c, secure, MSGRATE, ['--iterations', String(o.iterations)], tmp).find((x) => x['bench'] === 'msgrate');
  const reduce = runJob(c, secure, ALLREDUCE, ['--size', String(ALLREDUCE_BYTES), '--iterations', String(o.allreduceIterations), '--warmup', '2'], tmp)
    .find((x) => x['bench'] === 'allreduce' && x['sizeBytes'] === ALLREDUCE_BYTES);
  if (rate === undefined || reduce === undefined) throw new Error('a benchmark wrote no record');
  return { messagesPerSecond: rate['messagesPerSecond'] as number, allreduceMedianMicros: reduce['medianMicros'] as number, allreduceMBs: reduce['bandwidthMBs'] as number };
}

function main(): void {
  let o: Options | null;
  try {
    o = parse(process.argv.slice(2));
  } catch (err) {
    console.error(`secure-cost: ${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (o === null) {
    console.log(USAGE);
    return;
  }
  const id = `sc${process.pid.toString(36)}`.slice(0, 12);
  const info = JSON.parse(cluster(['up', '--id', id, '--hosts', '2', '--json'])) as { sshConfig: string };
  const c: Cluster = { id, sshConfig: info.sshConfig };
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'secure-cost-'));
  const samples: Record<'plain' | 'secure', Sample[]> = { plain: [], secure: [] };
  try {
    console.log(`secure-cost: 2 namespace hosts, 1 rank each; msgrate ${o.iterations} x 12 zero-byte messages, allreduce ${o.allreduceIterations} x ${ALLREDUCE_BYTES} bytes; ${o.rounds} rounds`);
    for (let round = 1; round <= o.rounds; round++) {
      // Alternate which mode goes first, so neither always runs on a warmer (or busier) machine.
      const order = round % 2 === 1 ? (['plain', 'secure'] as const) : (['secure', 'plain'] as const);
      for (const mode of order) {
        const s = measure(c, mode === 'secure', o, tmp);
        samples[mode].push(s);
        console.log(`round ${round} ${mode.padEnd(6)} msgrate ${Math.round(s.messagesPerSecond)} msg/s  allreduce 8MiB median ${Math.round(s.allreduceMedianMicros)} us (${s.allreduceMBs.toFixed(1)} MB/s)`);
      }
    }
    const m = (mode: 'plain' | 'secure', f: (s: Sample) => number): number => median(samples[mode].map(f));
    const ratePlain = m('plain', (s) => s.messagesPerSecond);
    const rateSecure = m('secure', (s) => s.messagesPerSecond);
    const reducePlain = m('plain', (s) => s.allreduceMedianMicros);
    const reduceSecure = m('secure', (s) => s.allreduceMedianMicros);
    console.log(`summary (medians of ${o.rounds} rounds): msgrate plain ${Math.round(ratePlain)} msg/s, secure ${Math.round(rateSecure)} msg/s (secure/plain ${(rateSecure / ratePlain).toFixed(3)}); `
      + `allreduce 8MiB plain ${Math.round(reducePlain)} us, secure ${Math.round(reduceSecure)} us (secure/plain ${(reduceSecure / reducePlain).toFixed(3)})`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    cluster(['down', '--id', id]);
  }
}

main();
