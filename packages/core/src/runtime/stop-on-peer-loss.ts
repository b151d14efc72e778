/**
 * How a rank under mpiexec stops when it lost a peer process, as MPI's
 * default error handler (MPI_ERRORS_ARE_FATAL) would stop it, but quietly:
 * the failure is the peer's, and mpiexec reports it once, with the peer's
 * own stack, and names this rank in one summary line ("ranks 0, 1, 3
 * stopped (peer failed)"). Without this, each such rank's pending MPI calls
 * reject with MPI_ERR_PROC_FAILED, uncaught, and Node prints one more
 * library stack per rank.
 *
 * From the loss on, an uncaught exception or unhandled rejection of this
 * process ends it with exit code 1 (Node's own for an uncaught error), once
 * the launcher has acknowledged which peer was lost (so that it blames the
 * peer), or after PEER_LOST_REPORT_MS. A program that catches the error
 * keeps control until mpiexec stops the job. Only the main thread arms it.
 */

/** How long a rank that lost a peer waits for the launcher to acknowledge which peer it was. */
const PEER_LOST_REPORT_MS = 500;

/** Once armed: settles when the launcher acknowledged the loss, or after PEER_LOST_REPORT_MS. */
let told: Promise<unknown> | null = null;

/**
 * Arms the quiet stop (once per process; later calls return the first report).
 * @param report - tells the launcher which peer was lost (wire-up peerLost); its failure is ignored
 * @returns settles once the launcher knows (or PEER_LOST_REPORT_MS passed): a caller that ends the process itself waits for it
 */
export function stopQuietlyOnPeerLoss(report: () => Promise<void>): Promise<unknown> {
  if (told !== null) return told;
  const reported = Promise.race([report().catch(() => undefined), new Promise<void>((resolve) => setTimeout(resolve, PEER_LOST_REPORT_MS).unref())]);
  told = reported;
  let isExiting = false;
  const stop = (): void => {
    if (isExiting) return;
    isExiting = true;
    void reported.then(() => process.exit(1));
  };
  process.on('uncaughtException', stop);
  process.on('unhandledRejection', stop);
  return reported;
}
