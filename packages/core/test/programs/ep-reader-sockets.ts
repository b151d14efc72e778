// Helpers of ep-reader.ts and the other ep-* programs: an endpoint reader's socket name in this job
// (computed by the job's transport module, as the device does), how many sockets of this machine
// are bound to it, and a sender's wait for its connection to a reader.
import fs from 'node:fs';
import * as MPI from '@tsmpi/core';

/** The socket path of the reader of `endpoint` of this process in `epoch` (the transport's readerSocketName). */
export async function readerSocketName(endpoint: number, epoch: number): Promise<string> {
  const mod = (await import(process.env.TSMPI_TRANSPORT ?? '@tsmpi/transport-tcp')) as { readerSocketName: (k: string, p: number, e: number, epoch: number) => string };
  const process_ = Number(process.env.TSMPI_RANK);
  return mod.readerSocketName(process.env.TSMPI_JOB_KEY ?? '', process_, endpoint, epoch);
}

/** Sockets bound to the socket file `name` (/proc/net/unix ends their line with its path; accepted sockets share it). */
export function unixSocketsNamed(name: string): number {
  return fs.readFileSync('/proc/net/unix', 'utf8').split('\n').filter((line) => line.endsWith(` ${name}`)).length;
}

/** Polls `cond` every 10 ms; throws naming `what` after 20 s (a deadlock guard, not a timing assertion). */
export async function waitFor(cond: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 20_000;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Waits until the calling thread has a connection to a remote reader that carries frames
 * (MPI.stats().readerRoutes.ready), so its next send to that reader's endpoint takes the reader's
 * path. The thread must have sent to the endpoint once since its route opened: that send took the
 * engine path and started the connection (docs/adr/0019: a thread joins a route only once its
 * connection there is open). A deterministic witness, not a timing: the connection opens while
 * this thread's event loop runs, which this wait lets it do.
 */
export async function readerConnectionReady(): Promise<void> {
  await waitFor(() => MPI.stats().readerRoutes.ready >= 1, 'this thread\'s connection to the reader to open');
}
