import { ERR_INTERN, MPIError } from './errors.ts';

/** Invariant check for lower layers, which trust their (already validated) inputs. */
export function assert(condition: unknown, what: string): asserts condition {
  if (!condition) throw new MPIError(ERR_INTERN, 'internal', `invariant violated: ${what}`);
}
