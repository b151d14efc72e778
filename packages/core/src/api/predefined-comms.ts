/**
 * The predefined communicators. The objects exist from module load (so
 * `MPI.COMM_WORLD` can be imported before init); init gives them their groups.
 *
 * Context ids (comm/context-id-layout.ts; suffix +1 collective, +2 group collective):
 * COMM_WORLD 0, COMM_SELF 4, COMM_ENDPOINTS 8, COMM_CLIQUE 12.
 * With one endpoint per process COMM_ENDPOINTS has COMM_WORLD's ranks and
 * COMM_CLIQUE has COMM_SELF's.
 */
import { OBJECT_KIND, type ObjectTable } from '../device/index.ts';
import { PREDEFINED_CONTEXT_ID } from '../comm/index.ts';
import type { ThreadRuntime } from '../runtime/index.ts';
import { Comm } from './comm.ts';

export const COMM_WORLD = new Comm('COMM_WORLD', PREDEFINED_CONTEXT_ID.COMM_WORLD, new Int32Array(0), true);
export const COMM_SELF = new Comm('COMM_SELF', PREDEFINED_CONTEXT_ID.COMM_SELF, new Int32Array(0), true);
export const COMM_ENDPOINTS = new Comm('COMM_ENDPOINTS', PREDEFINED_CONTEXT_ID.COMM_ENDPOINTS, new Int32Array(0), true);
export const COMM_CLIQUE = new Comm('COMM_CLIQUE', PREDEFINED_CONTEXT_ID.COMM_CLIQUE, new Int32Array(0), true);

/** Data words of a communicator record. */
export const COMM_DATA = { CONTEXT_ID: 0, GROUP: 1, ID_ENDPOINT: 2 } as const;


/**
 * Gives the predefined communicators their groups (endpoints per process J) and
 * their records in the object table: a group record (members in its blob) and
 * a communicator record (context id, group handle), both with the predefined
 * bit. Returns the four communicator handles (WORLD, SELF, ENDPOINTS, CLIQUE),
 * which worker threads attach to.
 */
export function setupPredefinedComms(objects: ObjectTable, processes: number, endpointsPerProcess: number, myFirstEndpoint: number, worldFirst = 0): number[] {
  const groups = predefinedGroups(processes, endpointsPerProcess, myFirstEndpoint, myFirstEndpoint, worldFirst);
  return PREDEFINED.map((comm, i) => {
    const members = groups[i]!;
    const group = objects.create(OBJECT_KIND.GROUP, true, [members.length], new Uint8Array(members.buffer), 'init');
    const handle = objects.create(OBJECT_KIND.COMM, true, [comm._ctx, group, -1], null, 'init');
    comm._setEndpoints(members, handle);
    return handle;
  });
}

/** In a worker thread: the same communicators over the records the main thread made, seen from endpoint `myEndpoint`. */
export function attachPredefinedComms(handles: readonly number[], processes: number, endpointsPerProcess: number, myFirstEndpoint: number, myEndpoint: number, worldFirst = 0): void {
  const groups = predefinedGroups(processes, endpointsPerProcess, myFirstEndpoint, myEndpoint, worldFirst);
  PREDEFINED.forEach((comm, i) => comm._setEndpoints(groups[i]!, handles[i]!));
}

/** COMM_SELF follows the calling thread's endpoint (MPI.threadAttach). */
export function selfFollows(endpoint: number): void {
  COMM_SELF._setEndpoints(Int32Array.of(endpoint));
}

/** Binds the predefined communicators to this thread's device (Pt2ptComm._bind): after init's setRuntime; null at finalize. */
export function bindPredefinedComms(rt: ThreadRuntime | null): void {
  for (const comm of PREDEFINED) comm._bind(rt);
}

const PREDEFINED = [COMM_WORLD, COMM_SELF, COMM_ENDPOINTS, COMM_CLIQUE];

/** A spawned world's processes are numbered from `worldFirst` (docs/adr/0040-dynamic-processes.md): its COMM_WORLD is theirs only. */
function predefinedGroups(processes: number, j: number, myFirstEndpoint: number, myEndpoint: number, worldFirst: number): Int32Array[] {
  const base = worldFirst * j;
  return [
    Int32Array.from({ length: processes }, (_, p) => base + p * j),
    Int32Array.of(myEndpoint),
    Int32Array.from({ length: processes * j }, (_, e) => base + e),
    Int32Array.from({ length: j }, (_, e) => myFirstEndpoint + e),
  ];
}
