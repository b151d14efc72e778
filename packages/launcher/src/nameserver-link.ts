/**
 * The link between an mpiexec and the name server (docs/adr/0046-name-server-between-jobs.md, points
 * 3 and 5): its messages, and mpiexec's side (NameserverClient), through which the job's processes'
 * publish / lookup / unpublish requests go when mpiexec runs with --nameserver.
 *
 * A WebSocket over TLS keyed by the server's secret (core's util/job-tls.ts, as a --secure job's TLS is
 * keyed by its job key: no certificate), always: the values are port strings, capabilities that must
 * not cross a network in the clear. Inside it, util/key-proof.ts's challenge-response both ways, bound
 * to "tsmpi nameserver" and the address in the file, so a process that took the port after the real
 * server ended learns nothing and is not believed. JSON messages:
 *
 *   mpiexec (client)                              tsmpi-nameserver
 *                         <── challenge {nonce}
 *   hello {nonce, proof}  ──>                     (pre-auth.ts limits until here)
 *                         <── welcome {proof}      checked before any request is sent
 *   req {id, op, service, port?}  ──>
 *                         <── ans {id, value} | {id, error: [class, message]}
 *
 * A request the server does not answer within ANSWER_TIMEOUT_MS, or one pending or made once the link
 * closed, is answered here: ERR_NAME for a lookup, ERR_SERVICE for publish and unpublish, naming the
 * server's address and the reason. Never a hang.
 */
import { KeyResponse, jobTlsClientOptions, keyProofBinding } from '@tsmpi/core/pmi';
import { WebSocket, type ClientOptions, type RawData } from 'ws';
import type { NameAnswer } from './name-table.ts';
import { nameserverHostPort, readNameserverFile, type NameserverAddress } from './nameserver-file.ts';

/** The name service's operations (core's wire-up DYN_OPS of the same names). */
export type NameOp = 'publish' | 'lookup' | 'unpublish';

export type NameserverMessage =
  | { readonly t: 'challenge'; readonly nonce: string }
  | { readonly t: 'hello'; readonly nonce: string; readonly proof: string }
  | { readonly t: 'welcome'; readonly proof: string }
  | { readonly t: 'req'; readonly id: number; readonly op: NameOp; readonly service: unknown; readonly port?: unknown }
  | { readonly t: 'ans'; readonly id: number; readonly value?: unknown; readonly error?: readonly [string, string] };

/** Largest message either side accepts once proven (a name and a port of MAX_NAME_CHARS each, JSON-escaped). */
export const MAX_NAMESERVER_MESSAGE_BYTES = 16 * 1024;
/** How long the TLS and proof handshake, and each request's answer, may take (as the port link's handshake). */
export const ANSWER_TIMEOUT_MS = 10_000;

/** What both proofs bind: the protocol and the address in the file (what the client dialled). */
export function nameserverBinding(a: Pick<NameserverAddress, 'host' | 'port'>): Buffer {
  return keyProofBinding('tsmpi nameserver', nameserverHostPort(a));
}

/** A decoded message, or null when it is not one. */
export function decodeNameserverMessage(data: Buffer): NameserverMessage | null {
  let m: unknown;
  try {
    m = JSON.parse(data.toString('utf8'));
  } catch {
    return null;
  }
  return typeof m === 'object' && m !== null && typeof (m as { t?: unknown }).t === 'string' ? (m as NameserverMessage) : null;
}

/** The error class a failed request of `op` gets: lookup ERR_NAME, publish and unpublish ERR_SERVICE. */
function failedClass(op: NameOp): string {
  return op === 'lookup' ? 'ERR_NAME' : 'ERR_SERVICE';
}

/** mpiexec's proven link to the name server. */
export class NameserverClient {
  readonly #ws: WebSocket;
  readonly #where: string;
  readonly #pending = new Map<number, { readonly op: NameOp; readonly resolve: (a: NameAnswer) => void; readonly timer: NodeJS.Timeout }>();
  #nextId = 1;
  /** Why the link is gone, once it is. */
  #gone: string | null = null;

  /** @param where - what the errors name: the server's address and the file */
  constructor(ws: WebSocket, where: string) {
    this.#ws = ws;
    this.#where = where;
    ws.on('message', (data: RawData) => {
      const m = decodeNameserverMessage(data as Buffer);
      if (m === null || m.t !== 'ans') return;
      const p = this.#pending.get(m.id);
      if (p === undefined) return;
      this.#pending.delete(m.id);
      clearTimeout(p.timer);
      const e = m.error;
      p.resolve(Array.isArray(e) && typeof e[0] === 'string' && typeof e[1] === 'string' ? { error: [e[0], e[1]] } : { value: m.value ?? null });
    });
    ws.on('close', (code: number, reason: Buffer) => this.#end(`it closed the link (${code}${reason.length > 0 ? ` ${reason.toString()}` : ''})`));
    ws.on('error', (e: Error) => this.#end(e.message));
  }

  /** True once the link is gone (requests are then answered with errors at once). */
  get isGone(): boolean {
    return this.#gone !== null;
  }

  #failure(op: NameOp, why: string): NameAnswer {
    return { error: [failedClass(op), `the name server at ${this.#where} ${why}`] };
  }

  #end(why: string): void {
    if (this.#gone !== null) return;
    this.#gone = why;
    for (const [id, p] of this.#pending) {
      this.#pending.delete(id);
      clearTimeout(p.timer);
      p.resolve(this.#failure(p.op, `is gone: ${why}`));
    }
  }

  /** One request; resolves to the server's answer or to an error naming the server and why (never rejects). */
  request(op: NameOp, service: unknown, port?: unknown): Promise<NameAnswer> {
    if (this.#gone !== null) return Promise.resolve(this.#failure(op, `is gone: ${this.#gone}`));
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        resolve(this.#failure(op, `did not answer within ${ANSWER_TIMEOUT_MS / 1000} s`));
      }, ANSWER_TIMEOUT_MS);
      timer.unref();
      this.#pending.set(id, { op, resolve, timer });
      const m: NameserverMessage = port === undefined ? { t: 'req', id, op, service } : { t: 'req', id, op, service, port };
      this.#ws.send(JSON.stringify(m));
    });
  }

  /** Closes the link (the job ended): the server drops this job's names. */
  close(): void {
    this.#end('the job ended');
    if (this.#ws.readyState === WebSocket.OPEN || this.#ws.readyState === WebSocket.CONNECTING) this.#ws.close(1000, 'job ended');
    setTimeout(() => this.#ws.terminate(), 1000).unref();
  }
}

/** The next message on `ws` (before the proof), or an Error after ANSWER_TIMEOUT_MS or when the link closes. */
function nextMessage(ws: WebSocket): Promise<NameserverMessage | Error> {
  return new Promise((resolve) => {
    const done = (v: NameserverMessage | Error): void => {
      clearTimeout(timer);
      ws.off('message', onMessage);
      ws.off('close', onClose);
      ws.off('error', onError);
      resolve(v);
    };
    const onMessage = (data: RawData): void => done(decodeNameserverMessage(data as Buffer) ?? new Error('sent a malformed message'));
    const onClose = (): void => done(new Error('closed the link'));
    const onError = (e: Error): void => done(e);
    const timer = setTimeout(() => done(new Error(`did not answer within ${ANSWER_TIMEOUT_MS / 1000} s`)), ANSWER_TIMEOUT_MS);
    ws.on('message', onMessage);
    ws.once('close', onClose);
    ws.once('error', onError);
  });
}

/**
 * Dials the name server at `a` over TLS keyed by its secret and runs the proofs both ways.
 * @param where - how errors name the server (its address and the file)
 * @returns the proven client, or an Error saying why not (unreachable, TLS refused, a wrong proof)
 */
export async function dialNameserver(a: NameserverAddress, where: string): Promise<NameserverClient | Error> {
  const ws = new WebSocket(`wss://${nameserverHostPort(a)}/`, {
    perMessageDeflate: false, maxPayload: MAX_NAMESERVER_MESSAGE_BYTES, handshakeTimeout: ANSWER_TIMEOUT_MS,
    ...(jobTlsClientOptions(a.secret) as unknown as ClientOptions),
  });
  const first = nextMessage(ws);
  const opened = await new Promise<Error | null>((resolve) => {
    ws.once('open', () => resolve(null));
    ws.once('error', (e: Error) => resolve(e));
  });
  const fail = (why: string): Error => {
    ws.terminate();
    return new Error(`cannot use the name server at ${where}: ${why}`);
  };
  if (opened !== null) {
    const isTls = /SSL|EPROTO|ECONNRESET/.test(opened.message);
    return fail(isTls
      ? 'the TLS handshake failed: the server there does not hold this file\'s secret (a stale file, or another process took the port)'
      : `${opened.message.split('\n')[0]} (is tsmpi-nameserver running, and is this its file?)`);
  }
  const response = new KeyResponse(a.secret, nameserverBinding(a));
  const challenge = await first;
  const proof = !(challenge instanceof Error) && challenge.t === 'challenge' && typeof challenge.nonce === 'string'
    ? response.respond(Buffer.from(challenge.nonce, 'base64')) : null;
  if (proof === null) return fail(challenge instanceof Error ? challenge.message : 'it is not a tsmpi name server (no challenge)');
  const welcomed = nextMessage(ws);
  ws.send(JSON.stringify({ t: 'hello', nonce: response.nonce.toString('base64'), proof: proof.toString('base64') } satisfies NameserverMessage));
  const welcome = await welcomed;
  if (welcome instanceof Error) return fail(`it refused the proof of the secret (${welcome.message})`);
  if (welcome.t !== 'welcome' || typeof welcome.proof !== 'string' || !response.isServerProof(Buffer.from(welcome.proof, 'base64'))) {
    return fail('it did not prove the secret back (not the server that wrote the file)');
  }
  return new NameserverClient(ws, where);
}

/**
 * mpiexec's start with a name server (ADR 0046 point 2): checks and reads `file`, dials the server and
 * proves the secret, before any rank starts.
 * @param label - how the message names the file's origin ("--nameserver", "TSMPI_NAMESERVER=")
 * @returns the proven client, or an Error naming the file and what failed (mpiexec exits 2)
 */
export async function openNameserver(file: string, label: string, uid = process.getuid?.() ?? 0): Promise<NameserverClient | Error> {
  const a = readNameserverFile(file, uid);
  if (a instanceof Error) return new Error(`${label}${file}: ${a.message}`);
  const client = await dialNameserver(a, `${nameserverHostPort(a)} (${file})`);
  return client instanceof Error ? new Error(`${label}${file}: ${client.message}`) : client;
}
