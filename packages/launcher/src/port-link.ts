/**
 * The port link: how two separately started mpiexec jobs meet at a port (docs/adr/0043-connect-two-jobs.md).
 *
 * The connecting job's mpiexec dials the accepting mpiexec's wire-up service on PORT_PATH (the address is in
 * the port string) and proves the port's secret without sending it: the same challenge-response as the job
 * key's (util/key-proof.ts), bound to the port's job tag and the address dialled. The accepting mpiexec proves
 * it back, so neither side tells anything to a stranger. Until the proof the wire-up service's
 * pre-authentication limits hold (pre-auth.ts). Then, JSON messages:
 *
 *   connecting mpiexec (B)                           accepting mpiexec (A)
 *                          <── challenge {nonce}
 *   hello {nonce, proof}   ──>
 *                          <── welcome {proof}
 *   connect {group}        ──>                       (waits for an accept, or the connect timeout: refused)
 *                          <── accepted {group, numbers, key}   numbers: A's numbers for B's processes
 *   numbers {numbers}      ──>                                   B's numbers for A's processes
 *   coupled {ok}           <─>  coupled {ok}          each side's processes took the other's peers
 *   failed {process, why}  <─>  finalized {process}   then, while the jobs run: a process of the sender's
 *                                                     group failed or ended normally (coupled-links.ts)
 *
 * A group is its side (core's [context id, endpoints], base64), its processes' published addresses, J and
 * whether it runs channel engines. The pair key is drawn by A; without --secure it crosses this link in the
 * clear (as the traffic of a job without --secure does), never the port secret. Two jobs run with --secure
 * (docs/adr/0043-connect-two-jobs.md, "--secure") run this link over TLS keyed by the port's secret (core's
 * couplingTls('port', SECRET): the identity names a hash of the secret, which tells A's wire-up service the
 * port), so a stranger without the port name fails the TLS handshake before the proof, a man in the middle
 * holds neither side's key, and the pair key and the groups' addresses cross encrypted. Either side closing the link before
 * `coupled` fails the other's connect or accept with ERR_PORT.
 */
import { KeyResponse, couplingTlsClientOptions, isJobKeyProof, keyProofBinding, proveJobKey } from '@tsmpi/core/pmi';
import { WebSocket, type ClientOptions, type RawData } from 'ws';

/** The wire-up service's path of port links. */
export const PORT_PATH = '/port';

/** One group of a coupling, as its mpiexec offers it. */
export interface GroupOffer {
  /** core's side bytes, base64. */
  readonly side: string;
  /**
   * Its processes (job numbers) and their published transport addresses; under channel engines
   * (`engines`) each channel's engine's (`channels[c]`), and `address` is channel 0's.
   */
  readonly procs: readonly { readonly p: number; readonly address: string; readonly channels?: readonly string[] }[];
  readonly j: number;
  readonly engines: boolean;
  /** Channels per process pair (--channels): coupled jobs need the same (absent: an mpiexec that did not say). */
  readonly c?: number;
}

export type LinkMessage =
  | { readonly t: 'challenge'; readonly nonce: string }
  | { readonly t: 'hello'; readonly nonce: string; readonly proof: string }
  | { readonly t: 'welcome'; readonly proof: string }
  | { readonly t: 'connect'; readonly group: GroupOffer; readonly timeout: number }
  | { readonly t: 'accepted'; readonly group: GroupOffer; readonly numbers: readonly number[]; readonly key: string }
  | { readonly t: 'numbers'; readonly numbers: readonly number[] }
  | { readonly t: 'refused'; readonly error: readonly [string, string] }
  | { readonly t: 'coupled'; readonly ok: boolean }
  | { readonly t: 'failed'; readonly process: number; readonly why: string }
  | { readonly t: 'finalized'; readonly process: number };

/** What the proofs bind: the port's job tag and the address dialled (as written in the port string). */
export function portLinkBinding(jobTag: string, address: string): Buffer {
  return keyProofBinding('tsmpi port link', jobTag, address);
}

/** The server's proof check with one port's secret. */
export function isPortProof(secret: string, nonceS: Uint8Array, nonceC: Uint8Array, bound: Uint8Array, proof: Uint8Array): boolean {
  return isJobKeyProof(secret, 'C', nonceS, nonceC, bound, proof);
}

/** The server's answering proof. */
export function portServerProof(secret: string, nonceS: Uint8Array, nonceC: Uint8Array, bound: Uint8Array): Buffer {
  return proveJobKey(secret, 'S', nonceS, nonceC, bound);
}

/** A WebSocket carrying LinkMessages: messages in order, the close as a rejected wait. */
export class LinkChannel {
  readonly #ws: WebSocket;
  readonly #queue: LinkMessage[] = [];
  #waiter: { resolve: (m: LinkMessage) => void; reject: (e: Error) => void } | null = null;
  #closed: Error | null = null;
  /** After the coupling (follow): every message goes here, and the end once. */
  #follower: { readonly onMessage: (m: LinkMessage) => void; readonly onEnd: (e: Error) => void } | null = null;

  constructor(ws: WebSocket, maxBytes: () => number) {
    this.#ws = ws;
    ws.on('message', (data: RawData) => {
      const b = data as Buffer;
      if (b.length > maxBytes()) {
        this.close('message too large');
        return;
      }
      let m: LinkMessage;
      try {
        m = JSON.parse(b.toString('utf8')) as LinkMessage;
      } catch {
        this.close('malformed message');
        return;
      }
      if (typeof m !== 'object' || m === null || typeof m.t !== 'string') {
        this.close('malformed message');
        return;
      }
      if (this.#follower !== null) {
        this.#follower.onMessage(m);
        return;
      }
      const w = this.#waiter;
      this.#waiter = null;
      if (w !== null) w.resolve(m);
      else this.#queue.push(m);
    });
    ws.on('close', () => this.#end(new Error('the other mpiexec closed the port link')));
    ws.on('error', (e: Error) => this.#end(e));
  }

  #end(e: Error): void {
    const isFirst = this.#closed === null;
    this.#closed ??= e;
    const w = this.#waiter;
    this.#waiter = null;
    w?.reject(this.#closed);
    if (isFirst) this.#follower?.onEnd(this.#closed);
  }

  /**
   * From now on every message (those queued first) goes to `onMessage`, and the link's end, once, to
   * `onEnd` (at once when it already ended): the coupled jobs' messages (coupled-links.ts).
   */
  follow(onMessage: (m: LinkMessage) => void, onEnd: (e: Error) => void): void {
    this.#follower = { onMessage, onEnd };
    for (let m = this.#queue.shift(); m !== undefined; m = this.#queue.shift()) onMessage(m);
    if (this.#closed !== null) onEnd(this.#closed);
  }

  /** The next message; rejects when the link closed or after `timeoutMs`. */
  next(timeoutMs: number): Promise<LinkMessage> {
    const m = this.#queue.shift();
    if (m !== undefined) return Promise.resolve(m);
    if (this.#closed !== null) return Promise.reject(this.#closed);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiter = null;
        reject(new Error(`no answer from the other mpiexec within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      timer.unref();
      this.#waiter = {
        resolve: (x) => {
          clearTimeout(timer);
          resolve(x);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
    });
  }

  send(m: LinkMessage): void {
    if (this.#ws.readyState === WebSocket.OPEN) this.#ws.send(JSON.stringify(m));
  }

  close(reason = 'done'): void {
    this.#end(new Error(`port link closed: ${reason}`));
    if (this.#ws.readyState === WebSocket.OPEN || this.#ws.readyState === WebSocket.CONNECTING) this.#ws.close(1000, reason.slice(0, 100));
    setTimeout(() => this.#ws.terminate(), 1000).unref();
  }
}

/** Largest message once proven (a group of many processes' addresses). */
export const MAX_LINK_BYTES = 16 * 1024 * 1024;
/** How long the handshake may take before either side gives up. */
export const LINK_HANDSHAKE_MS = 10_000;

/**
 * Dials the accepting mpiexec at `address` ("host:port") and proves the port: resolves to the open,
 * proven link, or rejects with why (unreachable, not that job, wrong secret).
 * @param isSecure - both jobs run with --secure: TLS keyed by the port's secret (see the header)
 */
export async function dialPort(address: string, jobTag: string, secret: string, isSecure = false): Promise<LinkChannel> {
  const tls = isSecure ? (couplingTlsClientOptions('port', secret) as unknown as ClientOptions) : {};
  const ws = new WebSocket(`${isSecure ? 'wss' : 'ws'}://${address}${PORT_PATH}`, { perMessageDeflate: false, maxPayload: MAX_LINK_BYTES, handshakeTimeout: LINK_HANDSHAKE_MS, ...tls });
  const link = new LinkChannel(ws, () => MAX_LINK_BYTES);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', (e: Error) => reject(new Error(isSecure && isTlsFailure(e)
      ? `the mpiexec at ${address} refused the port's TLS handshake (the port is closed there, or its secret is wrong)`
      : `cannot reach the mpiexec at ${address}: ${e.message}`)));
  });
  const response = new KeyResponse(secret, portLinkBinding(jobTag, address));
  const challenge = await link.next(LINK_HANDSHAKE_MS);
  const proof = challenge.t === 'challenge' ? response.respond(Buffer.from(challenge.nonce, 'base64')) : null;
  if (proof === null) {
    link.close('bad challenge');
    throw new Error(`the service at ${address} is not a tsmpi mpiexec's port service`);
  }
  link.send({ t: 'hello', nonce: response.nonce.toString('base64'), proof: proof.toString('base64') });
  const welcome = await link.next(LINK_HANDSHAKE_MS).catch(() => null);
  if (welcome === null || welcome.t !== 'welcome' || !response.isServerProof(Buffer.from(welcome.proof, 'base64'))) {
    link.close('no proof');
    throw new Error(`the mpiexec at ${address} refused the port (closed, or a wrong secret)`);
  }
  return link;
}

/** True when `e` is a failed TLS handshake (the server holds no key for the port's identity), not a network error. */
function isTlsFailure(e: Error): boolean {
  const code = (e as NodeJS.ErrnoException).code ?? '';
  return code.startsWith('ERR_SSL') || code === 'ECONNRESET' || /SSL|TLS|socket disconnected before secure/i.test(e.message);
}
