/**
 * Starts and stops the channel engines of a process (--progress threads):
 * one worker per channel (engine-worker.ts). The main thread publishes each
 * engine's address, gives each engine its peers' addresses for the same
 * channel, and closes them at finalize.
 */
import { Worker } from 'node:worker_threads';
import { workerArgs } from '../util/index.ts';
import type { EngineBoot } from './engine-worker.ts';

// engine-worker.ts when running from source, engine-worker.js from a built package (dist/).
const ENGINE_WORKER = new URL(`./engine-worker${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url);

export class Engines {
  readonly #workers: Worker[];
  readonly addresses: string[];

  private constructor(workers: Worker[], addresses: string[]) {
    this.#workers = workers;
    this.addresses = addresses;
  }

  /** Starts one engine per channel; resolves once all listen. `onFatal` hears an engine's fatal error and the peer whose loss caused it. */
  static async start(boots: EngineBoot[], onFatal: (message: string, lostProcess: number | null) => void): Promise<Engines> {
    const workers: Worker[] = [];
    const addresses = await Promise.all(
      boots.map(
        (boot) =>
          new Promise<string>((resolve, reject) => {
            const w = new Worker(...workerArgs(ENGINE_WORKER, { workerData: boot }));
            workers.push(w);
            w.unref();
            w.on('error', reject);
            w.on('message', (m: { type: string; address?: string; message?: string; lostProcess?: number | null }) => {
              if (m.type === 'listening') resolve(m.address!);
              else if (m.type === 'fatal') onFatal(m.message!, m.lostProcess ?? null);
            });
          }),
      ),
    );
    return new Engines(workers, addresses);
  }

  /** Gives engine c the addresses of every process's engine c. */
  startChannel(c: number, peers: readonly string[]): void {
    this.#workers[c]!.postMessage({ type: 'start', peers });
  }

  /** Flushes and closes every channel, then lets the engines end. */
  async close(): Promise<void> {
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
