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

/**
 * Like patternMismatch, on a sample: the first and last 64 KiB and every 4099th byte between
 * (4099 is prime, so the sample walks through every offset modulo any power of two).
 */
export function sampledMismatch(a: Uint8Array, seed: number): number {
  const edge = Math.min(a.length, 1 << 16);
  for (let i = 0; i < edge; i++) if (a[i] !== ((i * 31 + seed) & 255)) return i;
  for (let i = a.length - edge; i < a.length; i++) if (a[i] !== ((i * 31 + seed) & 255)) return i;
  for (let i = edge; i < a.length - edge; i += 4099) if (a[i] !== ((i * 31 + seed) & 255)) return i;
  return -1;
}

/** Fills a large array with the pattern of `seed` fast: 64 KiB by hand, then doubling copies (the pattern's period, 256, divides every copy). */
export function fillPatternFast(a: Uint8Array, seed: number): Uint8Array {
  let done = Math.min(a.length, 1 << 16);
  fillPattern(a.subarray(0, done), seed);
  while (done < a.length) {
    const n = Math.min(done, a.length - done);
    a.copyWithin(done, 0, n);
    done += n;
  }
  return a;
}

/** Positions sampled by sampledMismatch (and sampledCheck): both edges and every 4099th byte. */
export function sampledCheck(a: Uint8Array, expected: (i: number) => number): number {
  const edge = Math.min(a.length, 1 << 16);
  for (let i = 0; i < edge; i++) if (a[i] !== expected(i)) return i;
  for (let i = a.length - edge; i < a.length; i++) if (a[i] !== expected(i)) return i;
  for (let i = edge; i < a.length - edge; i += 4099) if (a[i] !== expected(i)) return i;
  return -1;
}
