/**
 * Which process of the job prints usage and argument errors before MPI.init
 * (flags are parsed before init so that `--help` works without a job).
 *
 * mpiexec sets TSMPI_RANK in every process's environment (API.md, Launcher);
 * a program started directly is a job of size 1 and is its own lead.
 */

/**
 * True in the process that should print messages before MPI.init: rank 0 under
 * mpiexec, or a program run without mpiexec.
 *
 * @returns whether this process is rank 0 of its job (or not under mpiexec)
 * @example
 * if (isLeadProcess()) console.log(USAGE);
 */
export function isLeadProcess(): boolean {
  const rank = process.env['TSMPI_RANK'];
  return rank === undefined || rank === '0';
}
