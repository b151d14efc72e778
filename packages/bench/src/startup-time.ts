/**
 * Start-up time of a job: runs a command (an mpiexec invocation) N times in
 * a directory and prints the wall time from spawn to exit of each run and
 * their median. Used for the installed-package figure in
 * docs/notebook/performance-2026-11.md 4.9 ("start-up from a user project").
 *
 *   npx tsx packages/bench/src/startup-time.ts [--repeat 5] [--cwd DIR] -- COMMAND [ARGS...]
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { median } from './stats.ts';

const split = process.argv.indexOf('--');
const { values } = parseArgs({
  args: process.argv.slice(2, split === -1 ? undefined : split),
  options: { repeat: { type: 'string', default: '5' }, cwd: { type: 'string', default: process.cwd() } },
});
const command = split === -1 ? [] : process.argv.slice(split + 1);
const repeat = Number(values.repeat);
if (command.length === 0 || !Number.isInteger(repeat) || repeat < 1) {
  console.error('usage: startup-time.ts [--repeat N (>= 1)] [--cwd DIR] -- COMMAND [ARGS...]');
  process.exit(2);
}
const times: number[] = [];
for (let i = 0; i < repeat; i++) {
  const t0 = performance.now();
  const r = spawnSync(command[0]!, command.slice(1), { cwd: values.cwd, stdio: ['ignore', 'ignore', 'inherit'] });
  const ms = performance.now() - t0;
  if (r.status !== 0) {
    console.error(`startup-time: run ${i + 1} exited with ${r.status ?? r.signal}`);
    process.exit(1);
  }
  times.push(ms);
}
console.log(`runs (ms): ${times.map((t) => t.toFixed(0)).join(' ')}`);
console.log(`median: ${median(times).toFixed(0)} ms`);
