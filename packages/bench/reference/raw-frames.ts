/**
 * The frames of the plain-Node benchmarks (raw-node.ts, raw-node-pairs.ts): a
 * 32-byte frame (the size of a tsmpi header), 12 to a msgrate iteration, and a
 * counter that tells when whole batches of them have arrived.
 */
export const FRAME = 32;
export const WINDOW = 12;

/** Calls `onBatch` each time `frames` whole frames of `frameBytes` have arrived (any chunking). */
export function frameCounter(frames: number, onBatch: () => void, frameBytes = FRAME): (d: Buffer) => void {
  let bytes = 0;
  const need = frames * frameBytes;
  return (d) => {
    bytes += d.length;
    while (bytes >= need) {
      bytes -= need;
      onBatch();
    }
  };
}
