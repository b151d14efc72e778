/**
 * The process side of the wire-up service: implements PmiClient (client-api.ts)
 * over one link to mpiexec (link.ts: link-frames.ts's frames over a plain
 * socket) speaking protocol.ts. No WebSocket library: a rank's link costs a
 * socket and a few hundred lines (issue 38, docs/adr/0047-rank-link-without-websocket.md).
 *
 * Callers: core's init/finalize/abort and the --timeout roll-call, all on the
 * process's main thread. Errors: every promise settles; when the connection to
 * the launcher drops, pending requests reject with MPIError(ERR_OTHER) and the
 * lost handler runs (core then exits the process).
 *
 * Event loop: the socket is referenced only while a request is outstanding
 * (connect, fence, get, finalized, abort, close), so an idle client never keeps
 * a finished program alive, while a rank waiting in fence stays alive until the
 * fence completes. After close() nothing of the client remains.
 *
 * Joining: the process opens the link (link-frames.ts's upgrade request); the
 * service sends a challenge first; the client answers with a hello that
 * proves the job key (the key itself is never sent), and sends nothing else
 * until the welcome has proved that the service knows the key too
 * (util/key-proof.ts). A server that cannot prove it is refused. Under
 * mpiexec --secure the URL is tls:// and the link runs TLS keyed by the job
 * (util/job-tls.ts) beneath all of it.
 *
 * put() buffers locally; the buffered pairs travel with the next fence (PMI-2
 * style), and fenceDone brings back every pair put before that fence, so get()
 * after a fence is normally answered locally.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { processOf, type JobEnv } from '../config/index.ts';
import { ERROR_CLASSES, ERR_OTHER, KeyResponse, jobTlsClientOptions, mpiError, tlsModule } from '../util/index.ts';
import type { BlockedIn, FinalizeReport, LocalCounters, PmiClient, RankCounters } from './client-api.ts';
import { ChangedEntries } from './counter-deltas.ts';
import { estimateClockOffset, type ClockSample } from './clock-offset.ts';
import { LINK_REQUEST } from './link-frames.ts';
import { FramedLink, LinkOpeningError } from './link.ts';
import {
  CLOSE_CODES,
  PMI_PROTOCOL_VERSION,
  decodeServerMessage,
  encodeClientMessage,
  parseWireupUrl,
  pmiProofBinding,
  versionMismatch,
  wireupUrlError,
  type ClientMessage,
  type DynOp,
  type ServerMessage,
} from './protocol.ts';

/** Largest message accepted from the launcher; fenceDone carries the whole key/value store of a fence. */
const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;

/** How long connecting (TCP, TLS under --secure, the service's proofs) may take before connectPmi rejects. */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** How long close() waits for the closing handshake before dropping the socket. */
const CLOSE_TIMEOUT_MS = 1_000;

interface Pending {
  readonly call: string;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: Error) => void;
}

class LinkPmiClient implements PmiClient {
  readonly rank: number;
  readonly size: number;
  /** This process's number in the job (its world's first plus its rank): what its hello names. */
  readonly #process: number;
  readonly #link: FramedLink;
  readonly #socket: Socket;
  #handshakeTimer: NodeJS.Timeout | null;
  #outstanding = 1; // the connect itself
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  #fence: Pending | null = null;
  #puts: [string, string][] = [];
  readonly #kv = new Map<string, string>();
  readonly #proof: KeyResponse;
  #rollCall: (() => BlockedIn | null) | null = null;
  #counters: (() => LocalCounters | null) | null = null;
  readonly #peerBytes = new ChangedEntries();
  #lost: ((err: Error) => void) | null = null;
  #peerFailed: ((process: number, why: string) => void) | null = null;
  #isWelcomed = false;
  #isClosing = false;
  #isClosed = false;
  #lastError: Error | null = null;
  /** Why this client refused the service (its close code then says nothing reliable). */
  #refusal: string | null = null;
  #connect: { resolve: () => void; reject: (err: Error) => void } | null = null;
  #closeWaiters: (() => void)[] = [];

  constructor(env: JobEnv) {
    this.rank = env.rank;
    this.size = env.size;
    this.#process = processOf(env);
    this.#proof = new KeyResponse(env.jobKey, pmiProofBinding(PMI_PROTOCOL_VERSION, this.#process, process.pid));
    const url = parseWireupUrl(env.pmiUrl);
    if (url === null) {
      // readJobEnv checked the variable's presence; a malformed value is mpiexec's or the user's mistake (or an older mpiexec's ws:// URL).
      throw mpiError(ERR_OTHER, 'pmi.connect', wireupUrlError(env.pmiUrl));
    }
    // mpiexec --secure hands out a tls:// URL: TLS keyed by the job (util/job-tls.ts), no certificate.
    const socket = url.isTls
      ? tlsModule().connect({ host: url.host, port: url.port, ...jobTlsClientOptions(env.jobKey) })
      : connectTcp({ host: url.host, port: url.port });
    socket.setNoDelay(true);
    // The opening request goes out once the connection (and its TLS) is up; the service speaks first after it (its challenge).
    socket.once(url.isTls ? 'secureConnect' : 'connect', () => socket.write(LINK_REQUEST));
    this.#socket = socket;
    this.#link = new FramedLink(socket, MAX_PAYLOAD_BYTES, {
      onMessage: (body) => this.#onMessage(body),
      onError: (err) => {
        this.#lastError = err;
        // Refused at the opening (another tsmpi version's mpiexec, or no wire-up service): that is the whole story.
        if (err instanceof LinkOpeningError) this.#refusal ??= err.message;
      },
      onClose: (code, reason) => this.#onClose(code, reason),
    }, { awaitResponse: true });
    this.#handshakeTimer = setTimeout(() => {
      this.#lastError = new Error(`no welcome from the wire-up service within ${HANDSHAKE_TIMEOUT_MS / 1000} s`);
      this.#link.terminate();
    }, HANDSHAKE_TIMEOUT_MS);
  }

  /** Resolves once the service welcomed this process. */
  ready(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#connect = { resolve, reject };
    });
  }

  put(key: string, value: string): void {
    this.#puts.push([key, value]);
  }

  fence(): Promise<void> {
    if (this.#fence !== null) return Promise.reject(mpiError(ERR_OTHER, 'pmi.fence', 'a fence is already in progress'));
    const err = this.#checkOpen('pmi.fence');
    if (err !== null) return Promise.reject(err);
    return new Promise<void>((resolve, reject) => {
      this.#fence = { call: 'pmi.fence', resolve: resolve as (v: unknown) => void, reject };
      this.#retain();
      const puts = this.#puts;
      this.#puts = [];
      this.#send({ t: 'fence', puts });
    });
  }

  get(key: string): Promise<string> {
    const local = this.#kv.get(key);
    if (local !== undefined) return Promise.resolve(local);
    return this.#request<string | null>('pmi.get', (id) => ({ t: 'get', id, key })).then((value) => {
      if (value === null) throw mpiError(ERR_OTHER, 'pmi.get', `no value was put for key "${key}" before the last fence`);
      this.#kv.set(key, value);
      return value;
    });
  }

  reportInitialized(): void {
    if (this.#checkOpen('pmi.reportInitialized') === null) this.#send({ t: 'initialized' });
  }

  reportFinalized(report: FinalizeReport): Promise<void> {
    const plain: FinalizeReport = {
      messagesSent: report.messagesSent,
      messagesReceived: report.messagesReceived,
      bytesSent: report.bytesSent,
      bytesReceived: report.bytesReceived,
    };
    return this.#request<void>('pmi.reportFinalized', (id) => ({ t: 'finalized', id, report: plain }));
  }

  abort(code: number, message: string): Promise<void> {
    return this.#request<void>('pmi.abort', (id) => ({ t: 'abort', id, code: Math.trunc(code), message }));
  }

  sendTrace(data: Uint8Array): Promise<void> {
    return this.#request<void>('pmi.sendTrace', (id) => ({ t: 'trace', id, data }));
  }

  async measureClockOffset(pings: number): Promise<number> {
    const samples: ClockSample[] = [];
    for (let i = 0; i < pings; i++) {
      const sentMs = performance.timeOrigin + performance.now();
      const serverMs = await this.#request<number>('pmi.measureClockOffset', (id) => ({ t: 'clock', id }));
      samples.push({ sentMs, serverMs, receivedMs: performance.timeOrigin + performance.now() });
    }
    return estimateClockOffset(samples).offsetMs;
  }

  reportPeerLost(process: number): Promise<void> {
    return this.#request<void>('pmi.reportPeerLost', (id) => ({ t: 'peerLost', id, process }));
  }

  async dynamic(call: string, op: DynOp, args: Readonly<Record<string, unknown>>): Promise<unknown> {
    const r = await this.#request<{ error: readonly [string, string] | null; value: unknown }>(call, (id) => ({ t: 'dyn', id, op, a: args }));
    if (r.error !== null) {
      const row = ERROR_CLASSES.find((c) => c[1] === r.error![0]);
      throw mpiError(row === undefined ? ERR_OTHER : row[0], call, r.error[1]);
    }
    return r.value;
  }

  setRollCallHandler(handler: () => BlockedIn | null): void {
    this.#rollCall = handler;
  }

  setCountersHandler(handler: (() => LocalCounters | null) | null): void {
    this.#counters = handler;
  }

  setPeerFailedHandler(handler: (process: number, why: string) => void): void {
    this.#peerFailed = handler;
  }

  setLostHandler(handler: (err: Error) => void): void {
    this.#lost = handler;
  }

  close(): Promise<void> {
    if (this.#isClosed) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.#closeWaiters.push(resolve));
    if (!this.#isClosing) {
      this.#isClosing = true;
      // An error is made only for a request still waiting (none, at a finalize): nobody reads one otherwise.
      if (this.#hasPending()) this.#failPending(mpiError(ERR_OTHER, 'pmi.close', 'the wire-up connection was closed'));
      this.#retain(); // finish the closing handshake even if nothing else keeps the process alive
      const timer = setTimeout(() => this.#link.terminate(), CLOSE_TIMEOUT_MS);
      this.#closeWaiters.push(() => clearTimeout(timer));
      if (!this.#isWelcomed) this.#link.terminate();
      else this.#link.close(CLOSE_CODES.normal);
    }
    return done;
  }

  #request<T>(call: string, build: (id: number) => ClientMessage): Promise<T> {
    const err = this.#checkOpen(call);
    if (err !== null) return Promise.reject(err);
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { call, resolve: resolve as (v: unknown) => void, reject });
      this.#retain();
      this.#send(build(id));
    });
  }

  #checkOpen(call: string): Error | null {
    if (this.#isClosing || this.#isClosed) return mpiError(ERR_OTHER, call, 'the wire-up connection is closed');
    if (!this.#isWelcomed) return mpiError(ERR_OTHER, call, 'not connected to the wire-up service');
    return null;
  }

  #send(message: ClientMessage): void {
    this.#link.send(encodeClientMessage(message));
  }

  #retain(): void {
    this.#outstanding++;
    this.#socket.ref();
  }

  #release(): void {
    this.#outstanding--;
    if (this.#outstanding === 0) this.#socket.unref();
  }

  /** Refuses the service: closes with `code` and remembers why, for the rejection. */
  #refuseServer(code: number, why: string): void {
    this.#refusal ??= why;
    this.#lastError = new Error(why);
    this.#link.close(code, why.length > 100 ? 'refused' : why);
  }

  #onMessage(data: Buffer): void {
    const m: ServerMessage | null = decodeServerMessage(data);
    if (m === null) {
      this.#refuseServer(CLOSE_CODES.protocol, 'malformed message from the wire-up service');
      return;
    }
    // Before the welcome, only the challenge and the welcome that proves the key count.
    if (!this.#isWelcomed && m.t !== 'challenge' && m.t !== 'welcome') {
      this.#refuseServer(CLOSE_CODES.protocol, `the wire-up service sent ${m.t} before proving the job key`);
      return;
    }
    switch (m.t) {
      case 'challenge': {
        const proof = m.v === PMI_PROTOCOL_VERSION ? this.#proof.respond(m.nonce) : null;
        if (proof === null) {
          this.#refuseServer(CLOSE_CODES.protocol, m.v === PMI_PROTOCOL_VERSION
            ? 'the wire-up service sent a malformed or second challenge'
            : versionMismatch(m.v));
          return;
        }
        this.#send({ t: 'hello', v: PMI_PROTOCOL_VERSION, rank: this.#process, pid: process.pid, nonce: this.#proof.nonce, proof });
        return;
      }
      case 'welcome': {
        if (this.#isWelcomed || !this.#proof.isServerProof(m.proof)) {
          this.#refuseServer(CLOSE_CODES.badKey, 'the wire-up service did not prove the job key (not this job\'s mpiexec?)');
          return;
        }
        if (m.size !== this.size) {
          this.#lastError = new Error(`the wire-up service reports a job of size ${m.size}, expected ${this.size}`);
          this.#link.close(CLOSE_CODES.protocol, 'size mismatch');
          return;
        }
        this.#isWelcomed = true;
        this.#clearHandshakeTimer();
        this.#release();
        const c = this.#connect;
        this.#connect = null;
        c?.resolve();
        return;
      }
      case 'fenceDone': {
        for (const [k, v] of m.kvs) this.#kv.set(k, v);
        const f = this.#fence;
        this.#fence = null;
        if (f !== null) {
          this.#release();
          f.resolve(undefined);
        }
        return;
      }
      case 'getReply':
        this.#settle(m.id, m.value);
        return;
      case 'ack':
        this.#settle(m.id, undefined);
        return;
      case 'clockReply':
        this.#settle(m.id, m.timeMs);
        return;
      case 'dynReply':
        this.#settle(m.id, { error: m.error, value: m.value });
        return;
      case 'peerFailed':
        this.#peerFailed?.(m.process, m.why);
        return;
      case 'rollCall': {
        let blockedIn: BlockedIn | null = null;
        try {
          blockedIn = this.#rollCall === null ? null : this.#rollCall();
        } catch {
          blockedIn = null;
        }
        const plain =
          blockedIn === null
            ? null
            : {
                call: String(blockedIn.call), comm: String(blockedIn.comm), peer: blockedIn.peer, tag: blockedIn.tag,
                ...(blockedIn.calls === undefined ? {} : { calls: blockedIn.calls }),
                ...(blockedIn.threads === undefined ? {} : { threads: blockedIn.threads.map((t) => ({ thread: t.thread, call: String(t.call), comm: String(t.comm), peer: t.peer, tag: t.tag, ...(t.calls === undefined ? {} : { calls: t.calls }) })) }),
              };
        this.#send({ t: 'rollCallReply', id: m.id, blockedIn: plain, ...(m.counters === true ? this.#plainCounters() : {}) });
        return;
      }
    }
  }

  /** mpiexec --dashboard's sample: the counters as plain numbers, or nothing when there are none (yet). */
  #plainCounters(): { counters?: RankCounters } {
    let c: LocalCounters | null = null;
    try {
      c = this.#counters === null ? null : this.#counters();
    } catch {
      c = null;
    }
    if (c === null) return {};
    const counters: RankCounters = {
      messagesSent: c.messagesSent, messagesReceived: c.messagesReceived, bytesSent: c.bytesSent, bytesReceived: c.bytesReceived, collectives: c.collectives,
      ...(c.channels === undefined ? {} : { channels: c.channels.map((x) => ({ sent: x.sent, received: x.received })) }),
      ...(c.bytesToProcess === null ? {} : { peerBytes: this.#peerBytes.take(c.bytesToProcess) }),
    };
    return { counters };
  }

  #settle(id: number, value: unknown): void {
    const p = this.#pending.get(id);
    if (p === undefined) return;
    this.#pending.delete(id);
    this.#release();
    p.resolve(value);
  }

  /** True while a request or the fence waits for an answer. */
  #hasPending(): boolean {
    return this.#pending.size > 0 || this.#fence !== null;
  }

  #failPending(err: Error): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    const f = this.#fence;
    this.#fence = null;
    if (f !== null) pending.push(f);
    for (const p of pending) {
      this.#release();
      p.reject(mpiError(ERR_OTHER, p.call, err.message, err));
    }
  }

  #clearHandshakeTimer(): void {
    if (this.#handshakeTimer !== null) clearTimeout(this.#handshakeTimer);
    this.#handshakeTimer = null;
  }

  #onClose(code: number, reason: string): void {
    this.#isClosed = true;
    this.#clearHandshakeTimer();
    const wasClosing = this.#isClosing;
    const detail =
      this.#refusal !== null
        ? this.#refusal
        : code === CLOSE_CODES.badKey
        ? 'the wire-up service refused the job key'
        : `connection to the launcher's wire-up service lost (close code ${code}${reason === '' ? '' : `: ${reason}`}${
            this.#lastError === null ? '' : `; ${this.#lastError.message}`
          })`;
    const c = this.#connect;
    this.#connect = null;
    if (c !== null) {
      c.reject(mpiError(ERR_OTHER, 'pmi.connect', detail, this.#lastError ?? undefined));
      this.#isClosing = true;
    }
    const lost = !wasClosing && c === null ? this.#lost : null;
    // The error is made only when someone gets it: at a normal close nothing waits and nobody is told.
    const err = lost !== null || this.#hasPending() ? mpiError(ERR_OTHER, 'pmi', detail, this.#lastError ?? undefined) : null;
    if (err !== null) this.#failPending(err);
    const waiters = this.#closeWaiters;
    this.#closeWaiters = [];
    for (const w of waiters) w();
    if (lost !== null) lost(err!);
  }
}

/**
 * Joins the job's wire-up service: connects to env.pmiUrl (tcp:// or tls://), proves the job key
 * and resolves once the service accepted this rank.
 *
 * @param env - the job environment (config/readJobEnv)
 * @throws MPIError(ERR_OTHER) when the service cannot be reached or refuses the key or rank
 */
export async function connectPmi(env: JobEnv): Promise<PmiClient> {
  const client = new LinkPmiClient(env);
  await client.ready();
  return client;
}
