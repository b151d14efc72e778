/**
 * PMI_process_mapping: which node each rank of a job runs on, as MPICH's Hydra
 * (a KVS key) and Slurm's PMI-2 plugin (a job attribute) publish it:
 * `(vector,(start,nodes,ranks),...)`, each triple saying that `nodes` nodes
 * from node `start` on run `ranks` consecutive ranks each, the triples
 * repeating over the ranks in order until every rank is placed (block and
 * cyclic layouts). Pure; used for each rank's local rank and local size.
 *
 * Reference: MPICH's src/util/mpir_nodemap.c (MPIR_NODEMAP_parse_mapping,
 * populate_ids_from_mapping) and Slurm's src/plugins/mpi/pmi2/setup.c.
 */

/** Node index per rank; null when `text` is not a mapping or does not place exactly `size` ranks. */
export function parseProcessMapping(text: string, size: number): number[] | null {
  const m = /^\s*\(\s*vector\s*((?:,\s*\(\s*\d+\s*,\s*\d+\s*,\s*\d+\s*\)\s*)+)\)\s*$/.exec(text);
  if (m === null || !Number.isInteger(size) || size < 1) return null;
  const triples = [...m[1]!.matchAll(/\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)/g)].map((t) => [Number(t[1]), Number(t[2]), Number(t[3])] as const);
  if (triples.some(([, nodes, ranks]) => nodes === 0 || ranks === 0)) return null;
  const nodeOf: number[] = [];
  // Repeats the vector until every rank is placed (a cyclic layout lists one round).
  while (nodeOf.length < size) {
    for (const [start, nodes, ranks] of triples) {
      for (let n = 0; n < nodes; n++) for (let r = 0; r < ranks; r++) if (nodeOf.length < size) nodeOf.push(start + n);
    }
  }
  return nodeOf;
}

/** This rank's place on its node: its index among the node's ranks, their count, and the job's node count. */
export function localPlace(nodeOf: readonly number[], rank: number): { localRank: number; localSize: number; nodes: number } {
  const node = nodeOf[rank]!;
  let localRank = 0;
  let localSize = 0;
  for (let r = 0; r < nodeOf.length; r++) {
    if (nodeOf[r] !== node) continue;
    if (r < rank) localRank++;
    localSize++;
  }
  return { localRank, localSize, nodes: new Set(nodeOf).size };
}
