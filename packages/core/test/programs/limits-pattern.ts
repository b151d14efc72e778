/** Deterministic message contents for the limits tests: a byte pattern per (size, seed) and its check. */

/** Fills `a` with the pattern of `seed`: byte i is (i * 31 + seed) & 255, cheap and order-sensitive. */
export function fillPattern(a: Uint8Array, seed: number): Uint8Array {
  for (let i = 0; i < a.length; i++) a[i] = (i * 31 + seed) & 255;
  return a;
}

/** Index of the first byte of `a` that is not the pattern of `seed`, or -1. */
export function patternMismatch(a: Uint8Array, seed: number): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== ((i * 31 + seed) & 255)) return i;
  return -1;
}
