/**
 * The mpiexec entry point (bin/mpiexec.mjs imports it after registering the
 * source condition and tsx). Exits with the job's status.
 */
import type { Writable } from 'node:stream';
import { main } from './main.ts';

/**
 * Resolves once everything written to `out` so far has left the process. Writes
 * to a pipe are asynchronous in Node, and process.exit() drops the ones still
 * queued: with a slow reader that was the end of the ranks' output.
 */
function drained(out: Writable): Promise<void> {
  return new Promise((resolve) => out.write('', () => resolve()));
}

const status = await main(process.argv.slice(2));
await Promise.all([drained(process.stdout), drained(process.stderr)]);
process.exit(status);
