// What p2p-bsend-threads.ts and its worker share: the message sizes and contents.
/** Bytes per message: above the job's --eager-limit (1024), so each stays in flight until received. */
export const BYTES = 2048;
/** Buffered sends per thread; the attached buffer has room for exactly both threads' messages. */
export const PER_THREAD = 20;

/** Message i of thread `tag` (1 main, 2 worker) of rank `rank`. */
export function messageOf(rank: number, tag: number, i: number): Uint8Array {
  return Uint8Array.from({ length: BYTES }, (_, k) => (rank * 31 + tag * 7 + i * 3 + k) & 255);
}
