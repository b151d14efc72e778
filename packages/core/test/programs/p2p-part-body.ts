// What p2p-part.ts and its workers share: the sizes and the value of each element.
/** Elements of the partitioned buffer and its partitions; 4096 / 8 * 8 bytes = 4 KiB a part: rendezvous under --eager-limit 1024. */
export const N = 4096;
export const P = 8;
export const PART = N / P;

/** Element j of part i in round `round`. */
export function valueOf(round: number, i: number, j: number): number {
  return round * 1e6 + i * 1e3 + (j % 997);
}

/** Fills part i of buf for `round`. */
export function fillPart(buf: Float64Array, round: number, i: number): void {
  for (let j = 0; j < PART; j++) buf[i * PART + j] = valueOf(round, i, j);
}

/** Whether part i of buf holds round `round`'s values. */
export function partHolds(buf: Float64Array, round: number, i: number): boolean {
  for (let j = 0; j < PART; j++) if (buf[i * PART + j] !== valueOf(round, i, j)) return false;
  return true;
}
