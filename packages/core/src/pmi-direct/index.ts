/**
 * Direct launch by a PMI launcher (MPICH's Hydra and Flux: PMI-1; srun --mpi=pmi2: PMI-2):
 * what runtime/ needs to join such a job. Loaded only when the environment names a PMI server.
 */
export { detectPmiLaunch, joinByPmi } from './join.ts';
export type { PmiLaunch } from './join.ts';
