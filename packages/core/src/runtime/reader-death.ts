/**
 * How a process fails when one of its endpoint readers died (docs/adr/0019 "The reader dies"): a
 * worker thread that read an endpoint ended without handing it back, so the messages its sockets
 * held are lost, as a crashed process's are. The process fails with ERR_PROC_FAILED naming the
 * endpoint and exits; mpiexec ends the job.
 *
 * Two signals lead here. The Worker's 'exit' event (api/worker.ts) always comes, but late: Node
 * closes the thread's sockets, tears down its heap and only then tells the process. The peers see
 * those sockets end first; one that stops on it (its quiet stop on a lost peer) can make this
 * process lose that peer before the 'exit' event, and this process would then stop quietly too,
 * blaming the peer, with no line naming the endpoint. So the dying thread marks its death in the
 * route table before its sockets close (RouteTable.markReaderDied), and a process that is about to
 * take a lost peer for the peer's failure checks the marks first (failIfReaderDied).
 */
import { ERR_PROC_FAILED, mpiError } from '../util/index.ts';
import type { SharedState } from '../device/index.ts';

/**
 * Fails the process: the reader of `endpoints` (worker thread `thread`, exit code `code`) ended
 * without handing them back. Writes the one line and exits with code 1.
 */
export function failReaderDied(shared: SharedState, endpoints: readonly number[], thread: number, code: number): never {
  shared.markFailed(ERR_PROC_FAILED);
  const err = mpiError(ERR_PROC_FAILED, 'progress', `the reader of endpoint ${endpoints.join(', ')} (worker thread ${thread}) ended without handing it back (exit code ${code}): messages sent to it are lost`);
  process.stderr.write(`tsmpi: ${err.message}\n`);
  process.exit(1);
}

/**
 * Before a lost peer is taken for the peer's failure: when a reader of this process has marked its
 * death (RouteTable.markReaderDied), the loss followed from it and the failure is this process's,
 * which fails as failReaderDied (one line, the first dead reader's thread and the endpoints it
 * held). Returns when no reader died.
 */
export function failIfReaderDied(shared: SharedState, firstEndpoint: number): void {
  const deaths = shared.routes?.readerDeaths() ?? [];
  if (deaths.length === 0) return;
  const first = deaths[0]!;
  const endpoints = deaths.filter((d) => d.thread === first.thread).map((d) => firstEndpoint + d.local);
  failReaderDied(shared, endpoints, first.thread, first.code);
}
