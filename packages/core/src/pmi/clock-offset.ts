/**
 * The offset between a process's clock and mpiexec's, measured at wire-up for `mpiexec --trace`
 * the way NTP does: the process sends a ping at t0 (its clock), mpiexec answers with its clock s,
 * the answer arrives at t1; if the two legs took equal time, mpiexec read s at (t0 + t1) / 2, so
 * offset = s - (t0 + t1) / 2, with an error of at most half the round trip. Of several pings, the
 * one with the shortest round trip bounds the error best (NTP's clock filter).
 */

/** One ping: sent and answered on the process's clock, and mpiexec's clock in the answer (ms). */
export interface ClockSample {
  readonly sentMs: number;
  readonly serverMs: number;
  readonly receivedMs: number;
}

/** The offset to add to the process's clock to get mpiexec's, and the round trip it was measured on (its error bound is half of it). */
export function estimateClockOffset(samples: readonly ClockSample[]): { offsetMs: number; roundTripMs: number } {
  let best: ClockSample | null = null;
  for (const s of samples) {
    if (best === null || s.receivedMs - s.sentMs < best.receivedMs - best.sentMs) best = s;
  }
  if (best === null) return { offsetMs: 0, roundTripMs: 0 };
  return { offsetMs: best.serverMs - (best.sentMs + best.receivedMs) / 2, roundTripMs: best.receivedMs - best.sentMs };
}
