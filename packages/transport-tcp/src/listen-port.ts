/**
 * Listening on a port of a given range (mpiexec --port-range, for firewalled
 * clusters): tries each port of the range once, starting at a random one so
 * that the ranks of one host do not all race for the lowest port, and moves
 * on when a port is taken. Without a range the kernel picks a free port.
 * The ranks' transports and mpiexec's wire-up service both listen through it.
 */
import type net from 'node:net';

/** Ports tried in order for `range`: every port once, from a random start. */
export function portOrder(range: { readonly lo: number; readonly hi: number }, start: number): number[] {
  const n = range.hi - range.lo + 1;
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(range.lo + ((start + i) % n));
  return out;
}

function tryListen(server: net.Server, port: number, host: string): Promise<Error | null> {
  return new Promise((resolve) => {
    const onError = (err: Error): void => {
      server.off('listening', onListening);
      resolve(err);
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve(null);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

/**
 * Makes `server` listen on `host`, on a free port of `range` (any port when undefined).
 * @throws the listen error; for a range whose every port is taken, an Error naming the range
 */
export async function listenInRange(server: net.Server, host: string, range: { readonly lo: number; readonly hi: number } | undefined): Promise<void> {
  if (range === undefined) {
    const err = await tryListen(server, 0, host);
    if (err !== null) throw err;
    return;
  }
  for (const port of portOrder(range, Math.floor(Math.random() * (range.hi - range.lo + 1)))) {
    const err = await tryListen(server, port, host);
    if (err === null) return;
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' && (err as NodeJS.ErrnoException).code !== 'EACCES') throw err;
  }
  throw new Error(`no free port in --port-range ${range.lo}-${range.hi} on ${host}`);
}
