/**
 * Mismatched collectives (issue 39 point 3): the errors a rank raises when what another rank sent
 * shows that the ranks did not make the same collective call (MPI requires every rank to call the
 * same collectives in the same order, with matching counts and datatypes). MPI leaves the outcome
 * undefined; tsmpi reports it where it costs one comparison, as an MPIError that names the call
 * and the mismatch instead of a decoder error or ERR_INTERN (which would blame tsmpi).
 *
 * Detected: a reduction operand of another length than this rank's (Allreduce, Reduce, Scan,
 * Exscan, ReduceScatter with different counts or datatypes on different ranks: ERR_COUNT); a
 * block longer than its place (ERR_TRUNCATE, exchange.ts). A message of another collective call
 * (another kind, form or root) is found by the signature in its tag and reported as ERR_OTHER
 * naming both calls and both ranks (signature.ts kindMismatch, raised by the receive in
 * comm/group-pt2pt.ts).
 */
import { ERR_COUNT, mpiError, type MPIError } from '../util/index.ts';
import type { CollPt2pt } from './pt2pt.ts';

/** A reduction operand of `got` bytes met this rank's `expected` bytes. */
export function operandMismatch(pt: CollPt2pt, got: number, expected: number, source = -1): MPIError {
  const call = pt.call ?? 'collective';
  const who = source >= 0 ? `rank ${source}` : 'another rank';
  return mpiError(ERR_COUNT, call, `${who} contributed ${got} bytes where this rank (${pt.rank}) has ${expected}: the ranks called ${call} with different counts or datatypes, or made different collective calls (every rank must make the same ones, in the same order)`);
}
