/**
 * What an Intercomm (api/intercomm.ts) does with the methods of Comm it does
 * not define: the point-to-point layer and the attribute, info and error
 * handler calls hold as inherited; an mpi4py alias (api/mpi4py-names.ts: the
 * same function as a canonical method) takes Intercomm's definition of that
 * method; every other collective or creation (scans, topologies,
 * createGroup, splitType, and any method added to Comm later) throws ERR_COMM
 * naming the call, instead of running the intracommunicator
 * algorithm over the local group only.
 */
import { ERR_COMM, mpiError } from '../util/index.ts';

const installed = new WeakSet<object>();

/** Comm methods that hold on an intercommunicator as they are (inherited). */
const INHERITED = new Set([
  'free', 'setAttr', 'getAttr', 'deleteAttr', 'setInfo', 'getInfo', 'setErrhandler', 'getErrhandler', 'callErrhandler', 'createIntercomm',
  // api/dynamic.ts: a barrier and a free, both defined on intercommunicators.
  'disconnect',
]);

/**
 * Every public method of Comm and of its collective layer that Intercomm does not define and that
 * does not hold as inherited (point-to-point, INHERITED): an mpi4py alias of a method Intercomm
 * defines (the same function on Comm, api/mpi4py-names.ts) becomes that definition; any other
 * throws ERR_COMM naming the call. Done at the first Intercomm, when every module has added its
 * methods (topology-create.ts, the aliases).
 */
export function installIntercommStubs(intercomm: { prototype: object }, comm: { prototype: object }): void {
  if (installed.has(intercomm)) return;
  installed.add(intercomm);
  const target = intercomm.prototype;
  const ownNames = Object.getOwnPropertyNames(target);
  // Comm.prototype and CollComm.prototype: up to (not into) the point-to-point layers (pt2pt-modes.ts, then
  // pt2pt-comm.ts), which hold as they are.
  const layers: object[] = [];
  for (let p: object | null = comm.prototype; p !== null && !Object.hasOwn(p, 'send') && !Object.hasOwn(p, 'Bsend'); p = Object.getPrototypeOf(p) as object | null) layers.push(p);
  // Every point-to-point layer below them (an alias such as Send_init names a method of the deepest one).
  const pt2pt: object[] = [];
  for (let p = Object.getPrototypeOf(layers[layers.length - 1]!) as object | null; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) pt2pt.push(p);
  // Descriptors, not property reads: a read would run getters (rank, _collSeq) on a prototype.
  const valueOf = (p: object, n: string): unknown => Object.getOwnPropertyDescriptor(p, n)?.value;
  const isInherited = (fn: unknown): boolean =>
    [...INHERITED].some((n) => layers.some((q) => valueOf(q, n) === fn)) || pt2pt.some((q) => Object.getOwnPropertyNames(q).some((n) => valueOf(q, n) === fn));
  for (const p of layers) {
    for (const name of Object.getOwnPropertyNames(p)) {
      if (ownNames.includes(name) || INHERITED.has(name) || name.startsWith('_') || name === 'constructor') continue;
      const d = Object.getOwnPropertyDescriptor(p, name)!;
      if (typeof d.value !== 'function' || isInherited(d.value)) continue;
      const fn = d.value as Function;
      const canonical = ownNames.find((n) => layers.some((q) => valueOf(q, n) === fn));
      const value = canonical !== undefined ? valueOf(target, canonical) : function unsupported(this: { name: string }): never {
        throw mpiError(ERR_COMM, name, `${name} is not available on intercommunicator ${this.name}: ${INTRA_ONLY.has(name) ? 'MPI defines it on intracommunicators only' : 'not implemented for intercommunicators yet'}`);
      };
      Object.defineProperty(target, name, { value, writable: true, configurable: true, enumerable: false });
    }
  }
}

/** Methods MPI defines on intracommunicators only. */
const INTRA_ONLY = new Set([
  'scan', 'exscan', 'Scan', 'Exscan', 'Iscan', 'Iexscan', 'ScanInit', 'ExscanInit', 'createGroup', 'splitType', 'createCart', 'createGraph',
  'createDistGraph', 'createDistGraphAdjacent', 'spawn', 'spawnMultiple', 'accept', 'connect',
]);
