/**
 * Slurm's run-length lists of per-node counts (issue 12): SLURM_TASKS_PER_NODE
 * and SLURM_JOB_CPUS_PER_NODE hold one count per node of the node list, in
 * its order, with runs written `N(xM)`: `2(x3),1` is 2,2,2,1. Pure: no I/O.
 *
 * Slurm writes these with its uint32 compressed-list writer
 * (src/common/slurm_protocol_api.c and env.c); Hydra
 * (bootstrap/external/slurm_query_node_list.c) and PRRTE (ras/slurm) read
 * them back the same way. Errors are returned as Error values whose message
 * says what is wrong; the caller prefixes the variable's name.
 */

/** Guards against a typo such as `2(x99999999999)` allocating a huge array; Slurm has at most 64 Ki nodes. */
export const MAX_COUNT_ENTRIES = 65536;

/**
 * Expands `2(x3),1` into [2, 2, 2, 1].
 * @param text the variable's value; counts are integers >= 0, repeats >= 1
 * @returns the counts, or an Error naming the bad entry
 * @example parseSlurmCounts('2(x3),1') // [2, 2, 2, 1]
 */
export function parseSlurmCounts(text: string): number[] | Error {
  const out: number[] = [];
  if (text.trim() === '') return new Error('is empty');
  for (const entry of text.split(',')) {
    const m = /^\s*(\d+)(?:\(x(\d+)\))?\s*$/.exec(entry);
    if (m === null) return new Error(`"${entry}" is not COUNT or COUNT(xREPEAT)`);
    const count = Number(m[1]);
    const repeat = m[2] === undefined ? 1 : Number(m[2]);
    if (!Number.isSafeInteger(count)) return new Error(`"${entry}": count is too large`);
    if (repeat < 1) return new Error(`"${entry}": repeat must be at least 1`);
    if (out.length + repeat > MAX_COUNT_ENTRIES) return new Error(`has more than ${MAX_COUNT_ENTRIES} entries`);
    for (let i = 0; i < repeat; i++) out.push(count);
  }
  return out;
}

/**
 * Writes counts the way Slurm does: runs of two or more equal counts as
 * `N(xM)`. Inverse of parseSlurmCounts.
 * @example formatSlurmCounts([2, 2, 2, 1]) // '2(x3),1'
 */
export function formatSlurmCounts(counts: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < counts.length) {
    let j = i + 1;
    while (j < counts.length && counts[j] === counts[i]) j++;
    parts.push(j - i > 1 ? `${counts[i]}(x${j - i})` : String(counts[i]));
    i = j;
  }
  return parts.join(',');
}
