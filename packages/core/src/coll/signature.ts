/**
 * Which collective a message belongs to, in the 10 signature bits of its tag (util/coll-tag.ts), so
 * that a rank that meets another collective's message can say which call the sender made (issue 39,
 * "collectives carry what they need to detect a mismatch cheaply"). The bits cost nothing on the
 * wire: they ride in the tag every message already has, and the API computes them once per call.
 *
 *   bit  9 .. 7   6    5     4 ..... 0
 *       | root | nb | buf |   kind    |
 *
 * kind: the collective (KIND below; 0: a call not named here, e.g. a communicator constructor);
 * buf: the buffer form (Bcast) rather than the object form (bcast), which move different bytes;
 * nb: a nonblocking or persistent start (Ibcast, BcastInit). It only names the call: tsmpi runs a
 * blocking and a nonblocking form of one collective by the same algorithm, so they still match;
 * root: the root mod 8, for the rooted collectives (a rank that names another root is a mismatch).
 *
 * Two signatures are the same collective when they agree on kind, form and root (`sameCollective`);
 * the barrier moves no data, so its object and buffer forms are one collective.
 */
import { ERR_OTHER, mpiError, type MPIError } from '../util/index.ts';

const KIND_BITS = 5;
const KIND_MASK = (1 << KIND_BITS) - 1;
const BUFFER_BIT = 1 << 5;
const NONBLOCKING_BIT = 1 << 6;
const ROOT_SHIFT = 7;
const ROOT_MASK = 7;
/** The bits two ranks' signatures must agree on: all but NONBLOCKING_BIT. */
const COMPARED = ~NONBLOCKING_BIT & 0x3ff;

/**
 * The collectives, by kind code: the object-form name (null: none), the buffer-form name (null: none),
 * and whether it has a root. The code is the index; 0 is every call not listed. Append only: the
 * codes of one job's ranks must agree, and every rank runs the same tsmpi.
 */
const KINDS: readonly (readonly [object: string | null, buffer: string | null, rooted: boolean])[] = [
  [null, null, false],
  ['barrier', 'Barrier', false],
  ['bcast', 'Bcast', true],
  ['reduce', 'Reduce', true],
  ['allreduce', 'Allreduce', false],
  ['scan', 'Scan', false],
  ['exscan', 'Exscan', false],
  ['gather', 'Gather', true],
  [null, 'Gatherv', true],
  ['scatter', 'Scatter', true],
  [null, 'Scatterv', true],
  ['allgather', 'Allgather', false],
  [null, 'Allgatherv', false],
  ['alltoall', 'Alltoall', false],
  [null, 'Alltoallv', false],
  [null, 'Alltoallw', false],
  [null, 'ReduceScatter', false],
  [null, 'ReduceScatterBlock', false],
  ['neighborAllgather', 'NeighborAllgather', false],
  [null, 'NeighborAllgatherv', false],
  ['neighborAlltoall', 'NeighborAlltoall', false],
  [null, 'NeighborAlltoallv', false],
  [null, 'NeighborAlltoallw', false],
];

/** Every call's signature without its root bits, by the call name the API passes (e.g. 'Ibcast'). */
const BY_CALL = new Map<string, number>();
/** The names of the calls that share a signature's kind, form and nb bits, for an error's text. */
const NAMES = new Map<number, string[]>();

function define(call: string, bits: number): void {
  BY_CALL.set(call, bits);
  const names = NAMES.get(bits);
  if (names === undefined) NAMES.set(bits, [call]);
  else names.push(call);
}

for (let kind = 1; kind < KINDS.length; kind++) {
  const [object, buffer] = KINDS[kind]!;
  if (object !== null) {
    define(object, kind);
    if (kind === 1) define(`i${object}`, kind | NONBLOCKING_BIT);
  }
  if (buffer !== null) {
    // The blocking buffer barrier is `barrier` itself (Barrier is its mpi4py alias): no call of that name.
    if (kind !== 1) define(buffer, kind | BUFFER_BIT);
    define(`I${buffer[0]!.toLowerCase()}${buffer.slice(1)}`, kind | BUFFER_BIT | NONBLOCKING_BIT);
    define(`${buffer}Init`, kind | BUFFER_BIT | NONBLOCKING_BIT);
  }
}

/**
 * The signature of `call` (an API call name, e.g. 'bcast', 'Ireduce', 'GatherInit') with `root`
 * (ignored unless the collective has one). A call not in KINDS has kind 0: its messages still
 * match, and a mismatch with it names "a call that is not a collective of this communicator".
 */
export function signatureOf(call: string, root = 0): number {
  const bits = BY_CALL.get(call) ?? 0;
  return KINDS[bits & KIND_MASK]![2] ? bits | ((root & ROOT_MASK) << ROOT_SHIFT) : bits;
}

/** Whether signatures `a` and `b` are one collective (same kind, form and root; either barrier form). */
export function sameCollective(a: number, b: number): boolean {
  const diff = (a ^ b) & COMPARED;
  return diff === 0 || (diff === BUFFER_BIT && (a & KIND_MASK) === 1);
}

/** The kind code of a signature (0: not a named collective). */
export function kindOf(signature: number): number {
  return signature & KIND_MASK;
}

/** The root bits of a signature (root mod 8), or -1 for a collective without a root. */
export function rootBitsOf(signature: number): number {
  return KINDS[signature & KIND_MASK]?.[2] === true ? (signature >>> ROOT_SHIFT) & ROOT_MASK : -1;
}

/** The call a signature names, for an error: e.g. 'bcast', 'Ibcast or BcastInit'. */
export function callNameOf(signature: number): string {
  const names = NAMES.get(signature & (KIND_MASK | BUFFER_BIT | NONBLOCKING_BIT));
  return names === undefined ? 'a call that is not one of the collectives (a communicator constructor or another internal one)' : names.join(' or ');
}

/**
 * The error of a rank (`rank`, in call `call` with signature `mine` and root `root`, or -1) that
 * received, from `source`, a message of a collective with signature `theirs`: MPI_ERR_OTHER, as
 * MPICH's collective checks raise, naming both calls and both ranks (and the roots, where they
 * differ or help). `where` names the communicator; `size` is its size (a root is exact below 9).
 */
export function kindMismatch(call: string, where: string, rank: number, root: number, source: number, mine: number, theirs: number, size: number): MPIError {
  const theirRoot = rootBitsOf(theirs);
  let their = callNameOf(theirs);
  if (theirRoot >= 0) {
    if (size <= ROOT_MASK + 1) their += ` (root ${theirRoot})`;
    else if (kindOf(theirs) === kindOf(mine) && root >= 0) their += ` with another root than ${root}`;
  }
  const own = root >= 0 && rootBitsOf(mine) >= 0 ? `${call} (root ${root})` : call;
  return mpiError(ERR_OTHER, call, `rank ${source} of ${where} called ${their} where this rank (${rank}) called ${own}: every rank must make the same collective calls, with the same root, in the same order`);
}
