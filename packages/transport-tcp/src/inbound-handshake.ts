/**
 * Every decision the listening side makes before a connection carries frames,
 * as a pure state machine: bytes in, one action out. InboundConnection only
 * performs the actions on its socket; the fuzz target
 * (inbound-handshake.fuzz.test.ts) drives this class without sockets.
 *
 *   start()        the CHALLENGE to send when the connection is accepted
 *   feed(chunk)    WAIT     the HELLO is not complete yet
 *                  ACCEPT   identity (process, channel) proved with the job
 *                           key and acceptable here: send `reply` (ACCEPT),
 *                           hand `rest` (the bytes after HELLO) to the frame
 *                           parser
 *                  CLOSE    refuse with a constant `reason` for the log
 *   timeout()      CLOSE 'handshake timed out' while still waiting
 *
 * Invariants (checked by the fuzz target):
 *   - nothing throws; a finished machine answers CLOSE to any further feed,
 *     so ACCEPT comes at most once;
 *   - ACCEPT only for a HELLO whose MAC proves the job key to this
 *     connection's own nonce and listener (a HELLO recorded on another
 *     connection, or made for another listener, fails),
 *     from a process index below the process count, for a channel this
 *     transport owns;
 *   - at most HELLO_BYTES (80) are buffered, whatever arrives: a HELLO has no
 *     length field, and `rest` is a view of the caller's chunk, never a copy.
 */
import { ServerHandshake, HANDSHAKE_STATUS, type HandshakeKeyOf } from './handshake.ts';

/** What a connection may accept, decided by the transport that owns it. */
export interface InboundPolicy {
  readonly processCount: number;
  /** The listener that accepted the connection (handshake.ts listenerBinding): the HELLO must have been made for it. */
  readonly listener: string;
  isChannelOwned(channel: number): boolean;
}

export const INBOUND_ACTION = {
  WAIT: 0,
  ACCEPT: 1,
  CLOSE: 2,
} as const;

export type InboundAction =
  | { readonly kind: typeof INBOUND_ACTION.WAIT }
  | {
      readonly kind: typeof INBOUND_ACTION.ACCEPT;
      readonly process: number;
      readonly channel: number;
      /** The HELLO had THREAD_CONNECTION_BIT: a user thread's own connection (handshake.ts). */
      readonly isThreadConnection: boolean;
      /** The ACCEPT message to send before anything else. */
      readonly reply: Uint8Array;
      /** Bytes that followed HELLO in the same chunk (already frames): a view of it. */
      readonly rest: Uint8Array;
    }
  | { readonly kind: typeof INBOUND_ACTION.CLOSE; readonly reason: string };

const WAIT: InboundAction = Object.freeze({ kind: INBOUND_ACTION.WAIT });

function close(reason: string): InboundAction {
  return { kind: INBOUND_ACTION.CLOSE, reason };
}

export class InboundHandshake {
  readonly #hs: ServerHandshake;
  readonly #policy: InboundPolicy;
  #isFinished = false;

  /**
   * @param nonce the server nonce (32 bytes); omitted, a fresh random one. Only
   *   tests pass one, to replay a run.
   */
  constructor(jobKey: string | HandshakeKeyOf, policy: InboundPolicy, nonce?: Uint8Array) {
    this.#hs = new ServerHandshake(jobKey, policy.listener, nonce);
    this.#policy = policy;
  }

  /** The CHALLENGE, to send as soon as the connection is accepted. */
  start(): Uint8Array {
    return this.#hs.challenge();
  }

  /** Bytes held back so far (at most HELLO_BYTES). */
  get bufferedBytes(): number {
    return this.#hs.bufferedBytes;
  }

  feed(chunk: Uint8Array): InboundAction {
    if (this.#isFinished) return close('handshake already finished');
    const hs = this.#hs;
    const status = hs.feed(chunk);
    if (status === HANDSHAKE_STATUS.PENDING) return WAIT;
    this.#isFinished = true;
    if (status === HANDSHAKE_STATUS.FAILED) return close(hs.failure);
    if (!this.#policy.isChannelOwned(hs.channel)) return close('channel not owned by this transport');
    if (hs.process >= this.#policy.processCount) return close('process index out of range');
    return { kind: INBOUND_ACTION.ACCEPT, process: hs.process, channel: hs.channel, isThreadConnection: hs.isThreadConnection, reply: hs.accept, rest: hs.rest };
  }

  /** The handshake timer fired: refuse, unless the handshake is already over. */
  timeout(): InboundAction {
    if (this.#isFinished) return WAIT;
    this.#isFinished = true;
    return close('handshake timed out');
  }
}
