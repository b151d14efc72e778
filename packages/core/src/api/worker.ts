/**
 * MPI.Worker: a worker thread of this MPI process. Inside it, `await
 * MPI.init()` joins the process (attached to the endpoint the parent is
 * attached to now), and MPI objects in `options.workerData` arrive live as
 * `MPI.workerData`; values sent later with postMessage are dehydrated (the
 * worker makes them live with MPI.revive). `.ts` files work as the main
 * program does (the worker inherits the process's loader flags).
 */
import { Worker as NodeWorker, type WorkerOptions } from 'node:worker_threads';
import { ERR_OTHER, ERR_PROC_FAILED, mpiError, workerArgs } from '../util/index.ts';
import { runtime, BOOT_KEY, clearSlot, failReaderDied, markStarting, peersThreadEnded, workerPeers, type WorkerBoot } from '../runtime/index.ts';
import { MAX_THREADS } from '../device/index.ts';
import { dehydrate } from './revive.ts';
import { getParent } from './dynamic.ts';

function bootFor(options: WorkerOptions | undefined): WorkerBoot {
  const rt = runtime('Worker');
  if (rt.threadLevel !== 'serialized' && rt.threadLevel !== 'multiple') {
    throw mpiError(ERR_OTHER, 'Worker', `MPI was initialized with threadLevel '${rt.threadLevel}': use MPI.init({ threadLevel: 'multiple' }) to call MPI from worker threads`);
  }
  const userData = dehydrate(options?.workerData);
  // The thread id is taken here and given back when the thread ends (the 'exit' listener below).
  const threadId = rt.device.shared.allocateThreadId();
  if (threadId < 0) {
    throw mpiError(ERR_OTHER, 'Worker', `${MAX_THREADS - 1} MPI worker threads are alive in this process, the most it can host: wait for one to end before starting another`);
  }
  return {
    threadId,
    shared: rt.device.shared.buffers,
    settings: rt.settings,
    job: rt.job,
    threadLevel: rt.threadLevel,
    progress: rt.progress,
    direct: rt.directRoutes,
    peers: workerPeers()?.boot() ?? null,
    endpoint: rt.endpoint,
    contextIds: rt.contextIds.map((s) => s.buffer),
    predefined: rt.predefined,
    predefinedObjects: rt.predefinedObjects,
    userData,
    parent: dehydrate(getParent()),
  };
}

export class Worker extends NodeWorker {
  /** marks the thread's death as a reader before terminate() (null: the process has no route table) */
  readonly #markDeath: (() => void) | null;
  /** the 'exit' event came: the thread id may be another thread's now */
  #exited = false;

  /**
   * @param file the worker's module (a path or URL; .ts works)
   * @param options Node's WorkerOptions; workerData may hold MPI objects
   * @throws MPIError(ERR_OTHER) before init, or when the thread level is 'single' or 'funneled'.
   * @example new MPI.Worker(new URL('./worker.ts', import.meta.url), { workerData: { comm: MPI.COMM_WORLD } });
   */
  constructor(file: string | URL, options?: WorkerOptions) {
    const boot = bootFor(options);
    const device = runtime('Worker').device;
    const shared = device.shared;
    try {
      super(...workerArgs(file, { ...options, workerData: { [BOOT_KEY]: boot } }));
    } catch (e) {
      shared.releaseThreadId(boot.threadId);
      throw e;
    }
    // The roll-call reports the thread from now on (runtime/blocked.ts), not only once it is in an MPI call.
    markStarting(shared.buffers.blocked, boot.threadId);
    const routes = shared.routes;
    this.#markDeath = routes === null ? null : () => routes.markReaderDied(boot.threadId, 1);
    this.once('exit', (code) => {
      this.#exited = true;
      clearSlot(shared.buffers.blocked, boot.threadId);
      // A thread that ended while reading an endpoint (docs/adr/0019) leaves no claim for the next
      // thread with its id. A clean end hands back first (the thread's loop stays alive until every
      // sender has left), so a claim still here means it died reading: what its socket held is lost.
      const routes = shared.routes;
      const died: number[] = [];
      if (routes !== null) for (let local = 0; local < routes.layout.endpointsPerProcess; local++) if (routes.readerOf(local) === boot.threadId) died.push(device.firstEndpoint + local);
      routes?.releaseReaderOf(boot.threadId);
      // Frames the thread had queued on its own connections and the kernel had not taken (a clean end
      // waits for them: its loop stays alive): lost with the thread. Read before its id is reused.
      const held = Atomics.exchange(shared.heldConnections, boot.threadId, 0);
      // A shared spin lock the thread held when it was stopped (terminate(), out of memory) is never
      // released: the mark lets a thread spinning on it throw instead (shm/spin-lock.ts). Before the id is reused.
      shared.markEnded(boot.threadId);
      // Not waited for by a spawn's announcement to the worker threads any more (runtime/worker-peers.ts).
      if (boot.peers !== null) peersThreadEnded(boot.peers.state, boot.threadId);
      shared.releaseThreadId(boot.threadId);
      if (died.length > 0) failReaderDied(shared, died, boot.threadId, code);
      if (held > 0) framesLost(shared, boot.threadId, held, code);
    });
  }

  /**
   * Node's terminate(). A thread stopped while it reads an endpoint runs no 'exit' listener of its
   * own: its death is marked here first, before its sockets close (runtime/reader-death.ts says why).
   */
  override terminate(): Promise<number> {
    if (!this.#exited) this.#markDeath?.();
    return super.terminate();
  }

  /** Node's postMessage, with MPI objects in `value` dehydrated (the worker revives them with MPI.revive). */
  override postMessage(value: unknown, transferList?: Parameters<NodeWorker['postMessage']>[1]): void {
    super.postMessage(dehydrate(value), transferList);
  }
}

/**
 * Issue 16's rule for a thread's own connections (docs/adr/0015 direct routes, docs/adr/0019 readers'
 * routes): a thread that ends while some hold frames the kernel had not taken (it was terminated, or
 * threw, while a write waited for a full socket, or before its microtask ended) lost messages it sent,
 * which their receivers would wait for for ever: the process fails with ERR_PROC_FAILED naming the
 * thread and exits, and mpiexec ends the job.
 */
function framesLost(shared: ReturnType<typeof runtime>['device']['shared'], thread: number, connections: number, code: number): void {
  shared.markFailed(ERR_PROC_FAILED);
  const err = mpiError(ERR_PROC_FAILED, 'progress', `worker thread ${thread} ended (exit code ${code}) with frames on ${connections} of its own connection${connections === 1 ? '' : 's'} that had not reached the kernel: messages it sent are lost`);
  process.stderr.write(`tsmpi: ${err.message}\n`);
  process.exit(1);
}
