/**
 * The one place that chooses a collective algorithm (STYLE.md rules 6 and 24).
 *
 * SELECTION_TABLE lists, per collective, rules in order; the first rule whose
 * `when` holds names the algorithm of this call. There is no fallback chain
 * inside the algorithms. Thresholds are CollTuning fields with defaults taken
 * from MPICH's CVARs (the measured defaults of a mature implementation on
 * TCP-class networks); the communicator layer may build a CollTuning from the
 * tuning-level settings and pass it in CollOptions.
 *
 * Invariant: every input of a rule is a value all ranks of the communicator
 * agree on (size, the message size of an equal-count operation, the op's
 * commutativity), so every rank picks the same algorithm. Object collectives,
 * whose sizes only the sender knows, therefore have a single algorithm.
 */
import { floorPowerOfTwo, isPowerOfTwo } from './tree.ts';

/** Thresholds of the selection table. */
export interface CollTuning {
  /** bcast: at least this many bytes (and bcastMinProcs ranks) use scatter + allgather. MPICH BCAST_SHORT_MSG_SIZE = 12288. */
  readonly bcastLongBytes: number;
  /** bcast: scatter + allgather needs at least this many ranks to pay off. MPICH BCAST_MIN_PROCS = 8. */
  readonly bcastMinProcs: number;
  /** allreduce: above this many bytes (commutative) use Rabenseifner. MPICH ALLREDUCE_SHORT_MSG_SIZE = 2048. */
  readonly allreduceShortBytes: number;
  /** allgather: at or above this many bytes in total, ring even on powers of two. MPICH ALLGATHER_LONG_MSG_SIZE = 524288. */
  readonly allgatherLongBytes: number;
  /** alltoall: blocks of at most this many bytes use Bruck. MPICH ALLTOALL_SHORT_MSG_SIZE = 256. */
  readonly alltoallShortBytes: number;
  /** alltoall: Bruck needs at least this many ranks (log p vs p - 1 rounds). MPICH uses 8. */
  readonly alltoallBruckMinProcs: number;
  /** reduceScatterBlock: at or above this many bytes in all (commutative) use pairwise exchange. MPICH REDSCAT_COMMUTATIVE_LONG_MSG_SIZE = 524288. */
  readonly reduceScatterLongBytes: number;
  /**
   * neighborAlltoall: blocks of at most this many bytes go one message per distinct neighbour (packed: a
   * copy of each block on the send side) instead of one per block. tsmpi's own (neither MPICH nor Open MPI
   * packs): a message costs more than copying 16 KiB, and two such blocks stay eager.
   */
  readonly neighborPackBytes: number;
}

/** The defaults (MPICH's). */
export const DEFAULT_COLL_TUNING: CollTuning = Object.freeze({
  bcastLongBytes: 12288,
  bcastMinProcs: 8,
  allreduceShortBytes: 2048,
  allgatherLongBytes: 524288,
  alltoallShortBytes: 256,
  alltoallBruckMinProcs: 8,
  reduceScatterLongBytes: 524288,
  neighborPackBytes: 16384,
});

/** What a rule may look at. All ranks agree on every field. */
export interface SelectionInput {
  readonly size: number;
  /** Message bytes: the vector (bcast, reduce, allreduce, scan), one block (alltoall, gather, scatter, neighborAlltoall), the whole result (allgather), the whole input (reduce-scatter). */
  readonly bytes: number;
  /** Items of the vector (reductions); 0 where meaningless. */
  readonly items: number;
  /** Commutativity of the op; true where meaningless. */
  readonly commute: boolean;
}

/** The algorithms of each collective. */
export const ALGORITHMS = {
  barrier: ['dissemination'],
  bcast: ['binomial', 'scatter-allgather'],
  reduce: ['binomial'],
  allreduce: ['recursive-doubling', 'rabenseifner', 'reduce-bcast'],
  scan: ['recursive-doubling'],
  exscan: ['recursive-doubling'],
  gather: ['binomial'],
  gatherv: ['linear'],
  scatter: ['binomial'],
  scatterv: ['linear'],
  allgather: ['recursive-doubling', 'ring'],
  allgatherv: ['ring'],
  alltoall: ['bruck', 'pairwise'],
  alltoallv: ['pairwise'],
  neighborAlltoall: ['per-peer', 'per-block'],
  reduceScatterBlock: ['pairwise', 'recursive-halving', 'reduce-scatter'],
  reduceScatter: ['pairwise', 'reduce-scatterv'],
  bcastBytes: ['binomial'],
  gatherBytes: ['binomial'],
  scatterBytes: ['binomial'],
  allgatherBytes: ['gather-bcast'],
  alltoallBytes: ['pairwise'],
  reduceObjects: ['binomial'],
  allreduceObjects: ['recursive-doubling'],
  scanObjects: ['recursive-doubling'],
  exscanObjects: ['recursive-doubling'],
} as const;

/** A collective name. */
export type Collective = keyof typeof ALGORITHMS;
/** An algorithm name of collective C. */
export type AlgorithmOf<C extends Collective> = (typeof ALGORITHMS)[C][number];

/** One row: use `algorithm` when `when` holds. */
export interface SelectionRule<C extends Collective> {
  readonly algorithm: AlgorithmOf<C>;
  readonly when: (x: SelectionInput, t: CollTuning) => boolean;
  /** Why (documentation). */
  readonly why: string;
}

const always = (): boolean => true;

/** The selection table: per collective, the first matching rule wins. */
export const SELECTION_TABLE: { readonly [C in Collective]: readonly SelectionRule<C>[] } = {
  barrier: [{ algorithm: 'dissemination', when: always, why: 'ceil(log2 p) rounds for any p' }],
  bcast: [
    {
      algorithm: 'scatter-allgather',
      when: (x, t) => x.bytes >= t.bcastLongBytes && x.size >= t.bcastMinProcs,
      why: 'long messages: each byte crosses ~2 links instead of log p (van de Geijn)',
    },
    { algorithm: 'binomial', when: always, why: 'short messages: log p latency' },
  ],
  reduce: [{ algorithm: 'binomial', when: always, why: 'log p rounds; non-commutative ops use the tree rooted at 0, whose subtrees are rank ranges' }],
  allreduce: [
    {
      algorithm: 'reduce-bcast',
      when: (x, t) => !x.commute && x.bytes > t.allreduceShortBytes,
      why: 'long non-commutative: Rabenseifner needs commutativity here; binomial reduce + bcast (scatter-allgather) is bandwidth-friendlier than recursive doubling',
    },
    {
      algorithm: 'rabenseifner',
      when: (x, t) => x.bytes > t.allreduceShortBytes && x.items >= floorPowerOfTwo(x.size),
      why: 'long commutative: reduce-scatter (recursive halving) + allgather (recursive doubling), 2n bytes per rank',
    },
    { algorithm: 'recursive-doubling', when: always, why: 'short: log p rounds; rank order kept, so valid for non-commutative ops' },
  ],
  scan: [{ algorithm: 'recursive-doubling', when: always, why: 'log p rounds (MPICH scan_intra_recursive_doubling)' }],
  exscan: [{ algorithm: 'recursive-doubling', when: always, why: 'log p rounds (MPICH exscan_intra_recursive_doubling)' }],
  gather: [{ algorithm: 'binomial', when: always, why: 'log p rounds; subtrees are contiguous block ranges' }],
  gatherv: [{ algorithm: 'linear', when: always, why: 'only the root knows every count' }],
  scatter: [{ algorithm: 'binomial', when: always, why: 'log p rounds; subtrees are contiguous block ranges' }],
  scatterv: [{ algorithm: 'linear', when: always, why: 'only the root knows every count' }],
  allgather: [
    {
      algorithm: 'recursive-doubling',
      when: (x, t) => isPowerOfTwo(x.size) && x.bytes < t.allgatherLongBytes,
      why: 'power of two, short: log p rounds',
    },
    { algorithm: 'ring', when: always, why: 'any p, long messages: p - 1 rounds, nearest-neighbour traffic' },
  ],
  allgatherv: [{ algorithm: 'ring', when: always, why: 'any counts, p - 1 rounds' }],
  alltoall: [
    {
      algorithm: 'bruck',
      when: (x, t) => x.bytes <= t.alltoallShortBytes && x.size >= t.alltoallBruckMinProcs,
      why: 'small blocks, many ranks: log p rounds at the cost of moving blocks several times',
    },
    { algorithm: 'pairwise', when: always, why: 'p - 1 rounds, each block moves once' },
  ],
  alltoallv: [{ algorithm: 'pairwise', when: always, why: 'p - 1 rounds, each block moves once' }],
  neighborAlltoall: [
    {
      algorithm: 'per-peer',
      when: (x, t) => x.bytes <= t.neighborPackBytes,
      why: 'small blocks: one message per distinct neighbour (a neighbour on both sides of a periodic dimension of size 2 gets both blocks in one)',
    },
    { algorithm: 'per-block', when: always, why: 'large blocks: each straight from and to the caller\'s buffer, no copy' },
  ],
  reduceScatterBlock: [
    {
      algorithm: 'pairwise',
      when: (x, t) => x.commute && x.bytes >= t.reduceScatterLongBytes,
      why: 'long commutative: p - 1 exchanges, each block crosses one link once, results land in place (MPICH reduce_scatter_block_intra_pairwise; Open MPI takes its ring here)',
    },
    {
      algorithm: 'recursive-halving',
      when: (x) => x.commute && isPowerOfTwo(x.size),
      why: 'short commutative on a power of two: log p rounds, halving the data each round',
    },
    { algorithm: 'reduce-scatter', when: always, why: 'otherwise (rank order, any p): binomial reduce to 0, then binomial scatter' },
  ],
  reduceScatter: [
    { algorithm: 'pairwise', when: (x) => x.commute, why: 'commutative: p - 1 exchanges, each block crosses one link once (MPICH reduce_scatter_intra_pairwise)' },
    { algorithm: 'reduce-scatterv', when: always, why: 'non-commutative (rank order): binomial reduce to 0, then scatterv' },
  ],
  bcastBytes: [{ algorithm: 'binomial', when: always, why: 'only the root knows the size' }],
  gatherBytes: [{ algorithm: 'binomial', when: always, why: 'sizes vary; subtrees travel as one framed bundle' }],
  scatterBytes: [{ algorithm: 'binomial', when: always, why: 'sizes vary; subtrees travel as one framed bundle' }],
  allgatherBytes: [{ algorithm: 'gather-bcast', when: always, why: '2 log p rounds; sizes vary' }],
  alltoallBytes: [{ algorithm: 'pairwise', when: always, why: 'p - 1 rounds, each value moves once' }],
  reduceObjects: [{ algorithm: 'binomial', when: always, why: 'as reduce' }],
  allreduceObjects: [{ algorithm: 'recursive-doubling', when: always, why: 'objects are small; rank order kept' }],
  scanObjects: [{ algorithm: 'recursive-doubling', when: always, why: 'as scan' }],
  exscanObjects: [{ algorithm: 'recursive-doubling', when: always, why: 'as exscan' }],
};

/** Per-call options of every coll function. */
export interface CollOptions {
  /** Thresholds; default DEFAULT_COLL_TUNING. */
  readonly tuning?: CollTuning;
  /** Told the algorithm chosen for each (sub-)collective: the API layer logs it at debug. */
  readonly onSelect?: (collective: Collective, algorithm: string, input: SelectionInput) => void;
}

/** Returns the algorithm SELECTION_TABLE names for this call. */
export function selectAlgorithm<C extends Collective>(collective: C, input: SelectionInput, tuning: CollTuning = DEFAULT_COLL_TUNING): AlgorithmOf<C> {
  const rules = SELECTION_TABLE[collective] as readonly SelectionRule<C>[];
  for (const rule of rules) if (rule.when(input, tuning)) return rule.algorithm;
  // Every row list ends with an `always` rule.
  return rules[rules.length - 1]!.algorithm;
}

/** selectAlgorithm plus the onSelect report: what every coll function calls. */
export function choose<C extends Collective>(collective: C, input: SelectionInput, opts: CollOptions | undefined): AlgorithmOf<C> {
  const algorithm = selectAlgorithm(collective, input, opts?.tuning);
  opts?.onSelect?.(collective, algorithm, input);
  return algorithm;
}

/** A SelectionInput for the single-algorithm collectives. */
export function plainInput(size: number, bytes: number): SelectionInput {
  return { size, bytes, items: 0, commute: true };
}
