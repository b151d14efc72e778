/**
 * The window directory of one process (docs/adr/0042-windows-across-threads.md): how every thread
 * of the process that may apply a window's one-sided operations learns the window's memory. The
 * threads that read the channels (the main thread under inline progress, the channel engines
 * under threads progress) apply the frames of remote origins; a thread whose origin targets
 * another endpoint of its own process applies the operation itself. Both need the target's
 * memory and control words, which live in SharedArrayBuffers made by the target's thread, and
 * JavaScript hands a SharedArrayBuffer to another thread only by message. So every MPI thread of
 * the process (user threads and engines alike) opens one BroadcastChannel named after the job
 * and the process, and every window member announces its record on it:
 *
 *   { type: 'register', window }                  every other thread serves the window from now on,
 *                                                 and answers { type: 'ack', to, by, ... }
 *   { type: 'unregister', contextId, endpoint, serial }   every other thread forgets it, and answers 'ack'
 *   { type: 'attach', contextId, endpoint, ... }  a dynamic window's region (no answer: RmaTarget.attach orders it)
 *
 * A member's creation waits for the acks of the channels' hosts (so that every frame of a remote
 * origin finds the window) and then for the records of the other members in its process (so that
 * its own operations on them find their memory): after the creation's closing collective, both
 * hold. The channel is unref'd except while a thread waits for something on it (answers, a record,
 * the attach that releases its held operations, RmaTarget.applyLocal), so it keeps a thread
 * alive only while that thread waits for it. A message cannot be lost between two open channels of one process; a thread that
 * opens its channel later knows only the windows registered after it, which is every window it
 * can be a member or a host of (hosts open theirs at init, members before their creation).
 */
import { BroadcastChannel } from 'node:worker_threads';
import type { RmaTarget, RmaWindowRecord } from './rma-target.ts';

/** A window record as it travels between threads (SharedArrayBuffers and their ranges). */
export interface RmaWindowShared {
  readonly contextId: number;
  /** the member's endpoint (the frames' destination endpoint) */
  readonly endpoint: number;
  readonly serial: number;
  readonly memory: SharedArrayBuffer;
  readonly byteOffset: number;
  readonly byteLength: number;
  readonly control: SharedArrayBuffer;
  /** a dynamic window (its regions come by 'attach') */
  readonly dynamic?: boolean;
}

interface RegionShared {
  readonly memory: SharedArrayBuffer;
  readonly byteOffset: number;
  readonly byteLength: number;
}

type DirectoryMessage =
  | { type: 'register'; from: string; window: RmaWindowShared }
  | { type: 'unregister'; from: string; contextId: number; endpoint: number; serial: number }
  | { type: 'attach'; contextId: number; endpoint: number; region: number; memory: RegionShared | null; seq: number }
  | { type: 'ack'; to: string; by: string; what: 'register' | 'unregister'; contextId: number; endpoint: number };

/** The record of a window as its creating thread has it, in the form another thread can take. */
export function shareRecord(w: RmaWindowRecord): RmaWindowShared {
  return {
    contextId: w.contextId, endpoint: w.endpoint, serial: w.serial,
    memory: w.memory.buffer as SharedArrayBuffer, byteOffset: w.memory.byteOffset, byteLength: w.memory.byteLength,
    control: w.control.buffer as SharedArrayBuffer,
    ...(w.regions === undefined ? {} : { dynamic: true }),
  };
}

/** A thread's name in the directory's acks: a user thread by its id, a channel engine by its channel. */
export function directoryName(who: { threadId: number; hosted: readonly number[] }): string {
  return who.threadId >= 0 ? `thread:${who.threadId}` : `engine:${who.hosted[0]}`;
}

/**
 * The threads that read the channels of a process (their acks make a window's creation complete):
 * none in a job of one process, the channel engines where they run, else the main thread.
 */
export function channelHosts(processCount: number, engines: boolean, channels: number): string[] {
  if (processCount <= 1) return [];
  return engines ? Array.from({ length: channels }, (_, c) => `engine:${c}`) : ['thread:0'];
}

export class WindowDirectory {
  /** this thread's name in acks: `thread:N` (user threads) or `engine:C` */
  readonly name: string;
  readonly #channel: BroadcastChannel;
  readonly #rma: RmaTarget;
  /** answers awaited: key `what:ctx:endpoint` -> names still to answer, and what to call once none is left */
  readonly #awaited = new Map<string, { missing: Set<string>; done: () => void }>();
  /** records awaited by this thread's members: key `ctx:endpoint` */
  readonly #known = new Map<string, (() => void)[]>();
  #waits = 0;
  #closed = false;

  /** `channelName`: one per process of one job (`tsmpi-rma:<jobKey>:<process>`). */
  constructor(channelName: string, name: string, rma: RmaTarget) {
    this.name = name;
    this.#rma = rma;
    this.#channel = new BroadcastChannel(channelName);
    this.#channel.unref();
    this.#channel.onmessage = (ev) => this.#onMessage((ev as { data: DirectoryMessage }).data);
  }

  /**
   * Announces window record `w` (already registered on this thread) to every thread of the
   * process; resolves once each thread named in `hosts` has it.
   */
  publish(w: RmaWindowRecord, hosts: readonly string[]): Promise<void> {
    const done = this.#expect('register', w.contextId, w.endpoint, hosts);
    this.#post({ type: 'register', from: this.name, window: shareRecord(w) });
    return done;
  }

  /** Every thread forgets member record `w`; resolves once each of `hosts` has. */
  withdraw(w: RmaWindowRecord, hosts: readonly string[]): Promise<void> {
    const done = this.#expect('unregister', w.contextId, w.endpoint, hosts);
    this.#post({ type: 'unregister', from: this.name, contextId: w.contextId, endpoint: w.endpoint, serial: w.serial });
    return done;
  }

  /** Tells every thread of attach (memory) or detach (null) number `seq` of a dynamic window's region. */
  attach(contextId: number, endpoint: number, region: number, memory: Uint8Array | null, seq: number): void {
    const m = memory === null ? null : { memory: memory.buffer as SharedArrayBuffer, byteOffset: memory.byteOffset, byteLength: memory.byteLength };
    this.#post({ type: 'attach', contextId, endpoint, region, memory: m, seq });
  }

  /**
   * Resolves to creation `serial`'s record of the window `contextId` at local `endpoint` once this
   * thread has it (another member's announce; an older window's record on the same context does not count).
   */
  whenKnown(contextId: number, endpoint: number, serial: number): Promise<RmaWindowRecord> {
    const have = this.#rma.recordOf(contextId, endpoint);
    if (have?.serial === serial) return Promise.resolve(have);
    const key = `${contextId}:${endpoint}:${serial}`;
    return this.#wait(new Promise<void>((resolve) => {
      let list = this.#known.get(key);
      if (list === undefined) this.#known.set(key, (list = []));
      list.push(resolve);
    })).then(() => this.#rma.recordOf(contextId, endpoint)!);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#channel.close();
  }

  #expect(what: 'register' | 'unregister', contextId: number, endpoint: number, hosts: readonly string[]): Promise<void> {
    const missing = new Set(hosts.filter((h) => h !== this.name));
    if (missing.size === 0) return Promise.resolve();
    return this.#wait(new Promise<void>((resolve) => {
      this.#awaited.set(`${what}:${contextId}:${endpoint}`, { missing, done: resolve });
    }));
  }

  /**
   * Keeps the channel ref'd until the returned function is called: what this thread waits for
   * comes on it (answers, a record, a held operation's attach). An unref'd channel does not keep a
   * worker alive: a worker that awaits only it exits (code 13) with its message still on the way.
   */
  hold(): () => void {
    if (this.#waits++ === 0) this.#channel.ref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#waits === 0 && !this.#closed) this.#channel.unref();
    };
  }

  /** Keeps the channel ref'd while `p` is pending (hold). */
  #wait<T>(p: Promise<T>): Promise<T> {
    return p.finally(this.hold());
  }

  #post(m: DirectoryMessage): void {
    if (!this.#closed) this.#channel.postMessage(m);
  }

  #onMessage(m: DirectoryMessage): void {
    switch (m.type) {
      case 'register': {
        const w = m.window;
        this.#rma.register({
          contextId: w.contextId, endpoint: w.endpoint, serial: w.serial,
          memory: new Uint8Array(w.memory, w.byteOffset, w.byteLength), control: new Int32Array(w.control),
          ...(w.dynamic === true ? { regions: new Map<number, Uint8Array>() } : {}),
        });
        const key = `${w.contextId}:${w.endpoint}:${w.serial}`;
        const waiting = this.#known.get(key);
        if (waiting !== undefined) {
          this.#known.delete(key);
          for (const resolve of waiting) resolve();
        }
        this.#post({ type: 'ack', to: m.from, by: this.name, what: 'register', contextId: w.contextId, endpoint: w.endpoint });
        return;
      }
      case 'unregister':
        this.#rma.unregister(m.contextId, m.endpoint, m.serial);
        this.#post({ type: 'ack', to: m.from, by: this.name, what: 'unregister', contextId: m.contextId, endpoint: m.endpoint });
        return;
      case 'attach': {
        const r = m.memory;
        this.#rma.attach(m.contextId, m.endpoint, m.region, r === null ? null : new Uint8Array(r.memory, r.byteOffset, r.byteLength), m.seq);
        return;
      }
      case 'ack': {
        if (m.to !== this.name) return;
        const key = `${m.what}:${m.contextId}:${m.endpoint}`;
        const a = this.#awaited.get(key);
        if (a === undefined) return;
        a.missing.delete(m.by);
        if (a.missing.size === 0) {
          this.#awaited.delete(key);
          a.done();
        }
        return;
      }
    }
  }
}
