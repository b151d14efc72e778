/**
 * What each thread is blocked in, for mpiexec's --timeout roll-call. Set on
 * entry to a blocking call, cleared when it returns. Entry and exit also tell
 * wait-poll.ts when the thread waits, so that it can poll instead of sleeping. A single-threaded process
 * keeps it in module state (no allocation, nothing shared); in a multithreaded
 * process every MPI thread also writes it into its slot of a shared table, so
 * the main thread, which answers the roll-call, can report every thread.
 *
 * Slot (Int32 words): ACTIVE, PEER, TAG, CALL_LEN, COMM_LEN, then NAME_BYTES
 * bytes of the call's name and NAME_BYTES of the communicator's name (ASCII,
 * cut to fit).
 */
import type { BlockedIn } from '../pmi/index.ts';
import { beginWait, endWait } from './wait-poll.ts';

const NAME_BYTES = 32;
const S = { ACTIVE: 0, PEER: 1, TAG: 2, CALL_LEN: 3, COMM_LEN: 4, NAMES: 5 } as const;
export const BLOCKED_SLOT_WORDS = S.NAMES + (2 * NAME_BYTES) / 4;
const NONE = -0x7fffffff;

const current = { call: '', comm: '', peer: null as number | null, tag: null as number | null };
let active = false;
let table: Int32Array | null = null;
let bytes: Uint8Array | null = null;
let mySlot = 0;
let threads = 0;

/** Joins the shared table (multithreaded processes): this thread writes slot `threadId` of `capacity`. */
export function attachBlockedTable(buffer: SharedArrayBuffer, threadId: number, capacity: number): void {
  table = new Int32Array(buffer);
  bytes = new Uint8Array(buffer);
  mySlot = threadId;
  threads = capacity;
}

function writeName(at: number, text: string): number {
  const n = Math.min(text.length, NAME_BYTES);
  for (let i = 0; i < n; i++) bytes![at + i] = text.charCodeAt(i) & 0x7f;
  return n;
}

function readName(at: number, n: number): string {
  return String.fromCharCode(...bytes!.subarray(at, at + n));
}

export function enterBlocking(call: string, comm: string, peer: number | null, tag: number | null): void {
  current.call = call;
  current.comm = comm;
  current.peer = peer;
  current.tag = tag;
  active = true;
  beginWait();
  if (table !== null) {
    const b = mySlot * BLOCKED_SLOT_WORDS;
    table[b + S.PEER] = peer ?? NONE;
    table[b + S.TAG] = tag ?? NONE;
    const nameAt = (b + S.NAMES) * 4;
    table[b + S.CALL_LEN] = writeName(nameAt, call);
    table[b + S.COMM_LEN] = writeName(nameAt + NAME_BYTES, comm);
    Atomics.store(table, b + S.ACTIVE, 1);
  }
}

export function leaveBlocking(): void {
  endWait();
  active = false;
  if (table !== null) Atomics.store(table, mySlot * BLOCKED_SLOT_WORDS + S.ACTIVE, 0);
}

/** The roll-call answer: the main thread's blocked call, and (multithreaded) every other thread's. */
export function blockedIn(): BlockedIn | null {
  const main: BlockedIn | null = active ? { call: current.call, comm: current.comm, peer: current.peer, tag: current.tag } : null;
  if (table === null) return main;
  const others: { thread: number; call: string; comm: string; peer: number | null; tag: number | null }[] = [];
  for (let t = 0; t < threads; t++) {
    if (t === mySlot) continue;
    const b = t * BLOCKED_SLOT_WORDS;
    if (Atomics.load(table, b + S.ACTIVE) !== 1) continue;
    const nameAt = (b + S.NAMES) * 4;
    const peer = table[b + S.PEER]!;
    const tag = table[b + S.TAG]!;
    others.push({
      thread: t,
      call: readName(nameAt, table[b + S.CALL_LEN]!),
      comm: readName(nameAt + NAME_BYTES, table[b + S.COMM_LEN]!),
      peer: peer === NONE ? null : peer,
      tag: tag === NONE ? null : tag,
    });
  }
  if (others.length === 0) return main;
  return { ...(main ?? { call: '(main thread not in MPI)', comm: '', peer: null, tag: null }), threads: others };
}
