// Helpers of ep-reader.ts: an endpoint reader's socket name in this job (computed by the job's
// transport module, as the device does) and how many sockets of this machine are bound to it.
import fs from 'node:fs';

/** The abstract socket name of the reader of `endpoint` of this process in `epoch`. */
export async function readerSocketName(endpoint: number, epoch: number): Promise<string> {
  const mod = (await import(process.env.TSMPI_TRANSPORT ?? '@tsmpi/transport-tcp')) as { readerSocketName: (k: string, p: number, e: number, epoch: number) => string };
  const process_ = Number(process.env.TSMPI_RANK);
  return mod.readerSocketName(process.env.TSMPI_JOB_KEY ?? '', process_, endpoint, epoch);
}

/** Sockets bound to abstract name `name` (/proc/net/unix shows the leading NUL as '@'). */
export function unixSocketsNamed(name: string): number {
  const shown = `@${name.slice(1)}`;
  return fs.readFileSync('/proc/net/unix', 'utf8').split('\n')
    .filter((line) => { const at = line.indexOf(` ${shown}`); return at >= 0 && /^@*$/.test(line.slice(at + 1 + shown.length)); }).length;
}

/** Polls `cond` every 10 ms; throws naming `what` after 20 s (a deadlock guard, not a timing assertion). */
export async function waitFor(cond: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 20_000;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
