/**
 * Starts and stops the channel engines of a process (--progress threads):
 * one worker per channel (engine-worker.ts). The main thread publishes each
 * engine's address, gives each engine its peers' addresses for the same
 * channel, and closes them at finalize.
 *
 * An engine that fails reports it ('fatal', engine-worker.ts). One whose
 * thread ends otherwise before close() (an error its own handler could not
 * report, such as running out of memory) is reported here in the same way,
 * after the same marks in shared memory: the process failed (ERR_INTERN), the
 * channel's injection ring closed, so no thread waits for it forever.
 */
import { Worker } from 'node:worker_threads';
import type { ForeignPeer } from '../transport/index.ts';
import { ERR_INTERN, workerArgs } from '../util/index.ts';
import type { EngineBoot } from './engine-worker.ts';
import { SharedState, engineStatsRow } from './shared-state.ts';

// engine-worker.ts when running from source, engine-worker.js from a built package (dist/).
const ENGINE_WORKER = new URL(`./engine-worker${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url);

export class Engines {
  readonly #workers: Worker[];
  readonly #life: { isClosing: boolean };
  readonly addresses: string[];
  /** The last addPeers's number (its answers carry it). */
  #asks = 0;

  private constructor(workers: Worker[], life: { isClosing: boolean }, addresses: string[]) {
    this.#workers = workers;
    this.#life = life;
    this.addresses = addresses;
  }

  /** Starts one engine per channel; resolves once all listen. `onFatal` hears an engine's fatal error and the peer whose loss caused it. */
  static async start(boots: EngineBoot[], onFatal: (message: string, lostProcess: number | null) => void): Promise<Engines> {
    const workers: Worker[] = [];
    const life = { isClosing: false };
    const addresses = await Promise.all(
      boots.map(
        (boot) =>
          new Promise<string>((resolve, reject) => {
            const w = new Worker(...workerArgs(ENGINE_WORKER, { workerData: boot }));
            workers.push(w);
            w.unref();
            let hasReported = false;
            let shared: SharedState | null = null;
            /** The engine's thread ended before close(): marked ended, and reported unless it reported why itself. */
            const ended = (why: string): void => {
              if (life.isClosing) return;
              shared ??= SharedState.attach(boot.shared);
              // A shared spin lock the engine held when its thread stopped is never released: threads spinning on one throw (shm/spin-lock.ts).
              shared.markEnded(engineStatsRow(boot.channel));
              if (hasReported) return;
              hasReported = true;
              shared.markFailed(ERR_INTERN);
              shared.injection(boot.channel).close();
              onFatal(`channel ${boot.channel}: ${why}`, null);
            };
            w.on('error', (err) => {
              reject(err);
              ended(`its engine thread failed (${err.name}: ${err.message})`);
            });
            w.on('exit', (code) => ended(`its engine thread ended (exit code ${code})`));
            w.on('message', (m: { type: string; address?: string; message?: string; lostProcess?: number | null }) => {
              if (m.type === 'listening') {
                resolve(m.address!);
              } else if (m.type === 'fatal' && !hasReported) {
                hasReported = true;
                onFatal(m.message!, m.lostProcess ?? null);
              }
            });
          }),
      ),
    );
    return new Engines(workers, life, addresses);
  }

  /** Gives engine c the addresses of every process's engine c. */
  startChannel(c: number, peers: readonly string[]): void {
    this.#workers[c]!.postMessage({ type: 'start', peers });
  }

  /**
   * Processes that joined the job later (dynamic processes): engine c learns their engine c's
   * addresses (`perChannel[c]`, '' for a process it knows already); resolves once every engine
   * has them, so that a send queued afterwards finds its peer.
   */
  addPeers(perChannel: readonly (readonly string[])[], foreign?: ReadonlyMap<number, ForeignPeer>): Promise<void> {
    const seq = ++this.#asks;
    // A coupled job's processes (docs/adr/0043): the engines prove their pair key and name them as that job's.
    const coupled = foreign === undefined ? undefined : [...foreign];
    return this.#askAll((c) => ({ type: 'add-peers', peers: perChannel[c], coupled, contextId: seq }), 'peers-added', seq);
  }

  /**
   * A coupled job's processes the groups disconnected from (Comm.disconnect, MPI 4.0 11.10.4): every
   * engine takes the end of their connections for no failure from now on; resolves once all have.
   */
  releaseCoupled(processes: readonly number[]): Promise<void> {
    const seq = ++this.#asks;
    return this.#askAll({ type: 'release-coupled', processes, contextId: seq }, 'peers-added', seq);
  }

  /** Asks every engine (`message` of engine c, or the same for all) and resolves when all answered `answer` for `contextId`. */
  #askAll(message: object | ((c: number) => object), answer: string, contextId: number): Promise<void> {
    return Promise.all(
      this.#workers.map(
        (w, c) =>
          new Promise<void>((resolve) => {
            const onMessage = (m: { type: string; contextId?: number }): void => {
              if (m.type !== answer || m.contextId !== contextId) return;
              w.off('message', onMessage);
              resolve();
            };
            w.on('message', onMessage);
            w.postMessage(typeof message === 'function' ? message(c) : message);
          }),
      ),
    ).then(() => undefined);
  }

  /** Flushes and closes every channel, then lets the engines end. */
  async close(): Promise<void> {
    this.#life.isClosing = true;
    await Promise.all(
      this.#workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            w.ref();
            w.on('message', (m: { type: string }) => {
              if (m.type === 'closed') resolve();
            });
            w.on('exit', () => resolve());
            w.postMessage({ type: 'close' });
          }),
      ),
    );
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
