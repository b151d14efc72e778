/**
 * The predefined communicators. The objects exist from module load (so
 * `MPI.COMM_WORLD` can be imported before init); init gives them their groups.
 *
 * Context ids (base values; suffix bits +1 collective, +2 group collective):
 * COMM_WORLD 0, COMM_SELF 4, COMM_ENDPOINTS 8, COMM_CLIQUE 12.
 * With one endpoint per process COMM_ENDPOINTS has COMM_WORLD's ranks and
 * COMM_CLIQUE has COMM_SELF's.
 */
import { Comm } from './comm.ts';

export const COMM_WORLD = new Comm('COMM_WORLD', 0, new Int32Array(0), true);
export const COMM_SELF = new Comm('COMM_SELF', 4, new Int32Array(0), true);
export const COMM_ENDPOINTS = new Comm('COMM_ENDPOINTS', 8, new Int32Array(0), true);
export const COMM_CLIQUE = new Comm('COMM_CLIQUE', 12, new Int32Array(0), true);

/** Gives the predefined communicators their groups (endpoints per process J). */
export function setupPredefinedComms(processes: number, endpointsPerProcess: number, myFirstEndpoint: number): void {
  const j = endpointsPerProcess;
  COMM_WORLD._setEndpoints(Int32Array.from({ length: processes }, (_, p) => p * j));
  COMM_ENDPOINTS._setEndpoints(Int32Array.from({ length: processes * j }, (_, e) => e));
  COMM_CLIQUE._setEndpoints(Int32Array.from({ length: j }, (_, e) => myFirstEndpoint + e));
  COMM_SELF._setEndpoints(Int32Array.of(myFirstEndpoint));
}
