/**
 * Dynamic-process calls of a worker thread, carried out by its process's main thread
 * (docs/adr/0040-dynamic-processes.md): only the main thread has the connection to mpiexec (the
 * wire-up client) and the transports and engines that must learn the processes a spawn or connect
 * adds. So a worker thread's spawn, spawnMultiple, accept, connect, ports and names send their one
 * mpiexec request (and the "reach these new processes" step, which ends with every worker thread
 * told: worker-peers.ts) to the main thread on a per-process BroadcastChannel
 * (`tsmpi-dyn:<job key>:<process>`) and wait for its answer:
 *
 *   { type: 'ask', by, id, call, op, args }     a worker thread (its thread id, a number of its own)
 *   { type: 'answer', to, id, value | error }   the main thread (an error as MPIError.toWire)
 *
 * The main thread serves while its event loop runs: between MPI.init and MPI.finalize, not inside a
 * long synchronous loop (a worker's call waits until it returns to its event loop). The service is
 * api/dynamic.ts's (serveWorkerRequests), so this layer needs nothing of the API's.
 */
import { BroadcastChannel } from 'node:worker_threads';
import { ERR_OTHER, MPIError, mpiError } from '../util/index.ts';

type WireError = { errorClass: number; call: string; message: string };
type RelayMessage =
  | { type: 'ask'; by: number; id: number; call: string; op: string; args: Record<string, unknown> }
  | { type: 'answer'; to: number; id: number; value?: unknown; error?: WireError };

/** What the main thread does for a worker's request (api/dynamic.ts). */
export type DynamicService = (call: string, op: string, args: Record<string, unknown>) => Promise<unknown>;

let service: DynamicService | null = null;

/** api/dynamic.ts registers how the main thread serves a worker thread's request. */
export function serveWorkerRequests(fn: DynamicService): void {
  service = fn;
}

export class DynamicRelay {
  readonly #name: string;
  readonly #threadId: number;
  #channel: BroadcastChannel | null = null;
  #nextId = 0;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();

  /** The main thread (threadId 0) opens its channel at once; a worker thread at its first request. */
  constructor(jobKey: string, process: number, threadId: number) {
    this.#name = `tsmpi-dyn:${jobKey}:${process}`;
    this.#threadId = threadId;
    if (threadId === 0) this.#open();
  }

  /** A worker thread: the main thread does `op` for `call` and answers (its MPIError rejects here). */
  ask(call: string, op: string, args: Record<string, unknown>): Promise<unknown> {
    const channel = this.#open();
    const id = ++this.#nextId;
    return new Promise((resolve, reject) => {
      if (this.#pending.size === 0) channel.ref();
      this.#pending.set(id, { resolve, reject });
      channel.postMessage({ type: 'ask', by: this.#threadId, id, call, op, args } satisfies RelayMessage);
    });
  }

  /** Closes the channel (the main thread's finalize). */
  close(): void {
    this.#channel?.close();
    this.#channel = null;
  }

  #open(): BroadcastChannel {
    if (this.#channel !== null) return this.#channel;
    const channel = new BroadcastChannel(this.#name);
    channel.unref();
    channel.onmessage = (ev) => this.#onMessage((ev as { data: RelayMessage }).data);
    this.#channel = channel;
    return channel;
  }

  #onMessage(m: RelayMessage): void {
    if (m.type === 'ask' && this.#threadId === 0) {
      void this.#serve(m);
    } else if (m.type === 'answer' && m.to === this.#threadId) {
      const p = this.#pending.get(m.id);
      if (p === undefined) return;
      this.#pending.delete(m.id);
      if (this.#pending.size === 0) this.#channel?.unref();
      if (m.error !== undefined) p.reject(MPIError.fromWire(m.error));
      else p.resolve(m.value);
    }
  }

  async #serve(m: Extract<RelayMessage, { type: 'ask' }>): Promise<void> {
    let answer: RelayMessage;
    try {
      if (service === null) throw mpiError(ERR_OTHER, m.call, 'the main thread serves no dynamic-process requests (MPI is not initialized there)');
      answer = { type: 'answer', to: m.by, id: m.id, value: await service(m.call, m.op, m.args) };
    } catch (e) {
      const err = e instanceof MPIError ? e : mpiError(ERR_OTHER, m.call, (e as Error).message);
      answer = { type: 'answer', to: m.by, id: m.id, error: err.toWire() };
    }
    this.#channel?.postMessage(answer);
  }
}

/** This thread's relay (null before init, in a process with one MPI thread, and after finalize). */
let current: DynamicRelay | null = null;

export function dynamicRelay(): DynamicRelay | null {
  return current;
}

export function setDynamicRelay(r: DynamicRelay | null): void {
  current = r;
}
