/**
 * What the calling thread is blocked in, for mpiexec's --timeout roll-call.
 * Set on entry to a blocking call, cleared when it returns; no allocation.
 */
import type { BlockedIn } from '../pmi/index.ts';

const current = { call: '', comm: '', peer: null as number | null, tag: null as number | null };
let active = false;

export function enterBlocking(call: string, comm: string, peer: number | null, tag: number | null): void {
  current.call = call;
  current.comm = comm;
  current.peer = peer;
  current.tag = tag;
  active = true;
}

export function leaveBlocking(): void {
  active = false;
}

export function blockedIn(): BlockedIn | null {
  return active ? { call: current.call, comm: current.comm, peer: current.peer, tag: current.tag } : null;
}
