/**
 * The job-key handshake every channel connection starts with: a mutual
 * HMAC-SHA256 challenge-response, so the key never crosses the wire and
 * neither side sends a frame to someone who cannot prove the key.
 *
 *   connecting side (client)                     listening side (server)
 *                        <── CHALLENGE  magic(8) nonceS(32)              40 B
 *   HELLO      magic(8) process u32 channel u32
 *              nonceC(32) macC(32)           ──>                          80 B
 *                        <── ACCEPT     magic(8) macS(32)                40 B
 *
 *   macC = HMAC(jobKey, "C" nonceS nonceC process channel listener)
 *   macS = HMAC(jobKey, "S" nonceS nonceC process channel listener)
 *
 * `listener` says which socket the handshake runs over, as each side sees it
 * (listenerBinding): "tcp host:port" of the published TCP address the client
 * dialled and the server listens on, or "unix /path" of a same-host socket. A
 * process of the job's, or a relay, that carries a connection from one
 * listener to another (a Unix socket to a TCP port, one rank's socket to
 * another's) makes the two sides disagree, and the MACs do not match
 * (docs/adr/0029). It is the last field hashed, so needs no length.
 *
 * The channel word's top bit (THREAD_CONNECTION_BIT) marks a thread
 * connection: one a user thread opened to send on directly (device.ts), whose
 * end is that thread's exit, not its process's departure. The bit is inside
 * the MACs, so it is as authenticated as the channel number.
 *
 * The client sends frames only after it has checked ACCEPT; the server
 * treats every byte after HELLO as frames. Both sides are explicit state
 * machines fed raw chunks (no sockets here), returning a status; they never
 * throw. A failed handshake reports a constant reason string for the log.
 * The MACs are core's job-key proofs (util/key-proof.ts), bound to the 8
 * bytes of process and channel and to the listener the handshake runs over:
 * the launcher's links use the same mechanism.
 *
 * Two coupled jobs (docs/adr/0043-connect-two-jobs.md): a HELLO whose process is one of the other
 * job's (a number this job gave it at connect/accept) is proved with the pair of jobs' key instead
 * of the job key: the server side asks `keyOf(process)` which key the claimed process must prove.
 */
import { KEY_PROOF_BYTES, KEY_PROOF_NONCE_BYTES, isJobKeyProof, newKeyProofNonce, proveJobKey } from '@tsmpi/core/transport';

/** 'TSMPI' + 0 + protocol version 2 (the MACs bind the listener) + 0. */
const MAGIC = Uint8Array.of(0x54, 0x53, 0x4d, 0x50, 0x49, 0x00, 0x02, 0x00);
const NONCE_BYTES = KEY_PROOF_NONCE_BYTES;
const MAC_BYTES = KEY_PROOF_BYTES;
/** Top bit of HELLO's channel word: the connection belongs to one user thread of the process. */
export const THREAD_CONNECTION_BIT = 0x8000_0000;
/** Size of the server's CHALLENGE message. */
export const CHALLENGE_BYTES = MAGIC.length + NONCE_BYTES;
/** Size of the client's HELLO message. */
export const HELLO_BYTES = MAGIC.length + 8 + NONCE_BYTES + MAC_BYTES;
/** Size of the server's ACCEPT message. */
export const ACCEPT_BYTES = MAGIC.length + MAC_BYTES;

/** Result of feeding a handshake. */
export const HANDSHAKE_STATUS = {
  /** needs more bytes */
  PENDING: 0,
  /** done: read `rest` for bytes that followed the handshake */
  DONE: 1,
  /** failed: read `failure` */
  FAILED: 2,
} as const;
export type HandshakeStatus = (typeof HANDSHAKE_STATUS)[keyof typeof HANDSHAKE_STATUS];

/** The listener a handshake runs over, as hashed into its MACs: which kind of socket, and its published address or path. */
export function listenerBinding(kind: 'tcp' | 'unix', where: string): string {
  return `${kind} ${where}`;
}

/** What the MACs bind: process and channel, 8 bytes little-endian, then the listener (listenerBinding) in UTF-8. */
function bound(process: number, channel: number, listener: string): Buffer {
  const b = Buffer.allocUnsafe(8 + Buffer.byteLength(listener, 'utf8'));
  b.writeUInt32LE(process >>> 0, 0);
  b.writeUInt32LE(channel >>> 0, 4);
  b.write(listener, 8, 'utf8');
  return b;
}

function hasMagic(buf: Uint8Array): boolean {
  for (let i = 0; i < MAGIC.length; i++) if (buf[i] !== MAGIC[i]) return false;
  return true;
}

/** Collects exactly `size` bytes from successive chunks; keeps what follows. */
class Collector {
  readonly buf: Uint8Array;
  fill = 0;
  rest: Uint8Array = new Uint8Array(0);
  constructor(size: number) {
    this.buf = new Uint8Array(size);
  }
  /** True once the message is complete (then `rest` holds the bytes after it). */
  add(chunk: Uint8Array): boolean {
    const take = Math.min(this.buf.length - this.fill, chunk.length);
    this.buf.set(chunk.subarray(0, take), this.fill);
    this.fill += take;
    if (this.fill < this.buf.length) return false;
    this.rest = chunk.subarray(take);
    return true;
  }
}

/** Listening side: sends CHALLENGE, checks HELLO, answers ACCEPT. */
/** The key a HELLO claiming `process` must prove: the job key, or a coupled job's pair key (null: no such process). */
export type HandshakeKeyOf = (process: number) => string | null;

export class ServerHandshake {
  readonly #keyOf: HandshakeKeyOf;
  readonly #listener: string;
  readonly #nonceS: Uint8Array;
  readonly #hello = new Collector(HELLO_BYTES);
  #done = false;
  /** Peer's process index and channel (valid after DONE). */
  process = -1;
  channel = -1;
  /** After DONE: the HELLO had THREAD_CONNECTION_BIT (a user thread's own connection). */
  isThreadConnection = false;
  /** After DONE: the ACCEPT message to send. */
  accept: Uint8Array = new Uint8Array(0);
  /** After DONE: bytes that followed HELLO (already frames). */
  rest: Uint8Array = new Uint8Array(0);
  /** After FAILED: why (constant text for the log). */
  failure = '';

  /**
   * @param listener the listener that accepted the connection (listenerBinding)
   * @param nonce the server nonce; omitted (always, outside tests), a fresh random one
   */
  constructor(jobKey: string | HandshakeKeyOf, listener: string, nonce?: Uint8Array) {
    this.#keyOf = typeof jobKey === 'string' ? () => jobKey : jobKey;
    this.#listener = listener;
    this.#nonceS = nonce !== undefined && nonce.length === NONCE_BYTES ? nonce : newKeyProofNonce();
  }

  /** Bytes of HELLO collected so far (never more than HELLO_BYTES). */
  get bufferedBytes(): number {
    return this.#hello.fill;
  }

  /** The CHALLENGE to send as soon as the connection is accepted. */
  challenge(): Uint8Array {
    const out = new Uint8Array(CHALLENGE_BYTES);
    out.set(MAGIC, 0);
    out.set(this.#nonceS, MAGIC.length);
    return out;
  }

  feed(chunk: Uint8Array): HandshakeStatus {
    if (this.#done) return HANDSHAKE_STATUS.FAILED;
    const c = this.#hello;
    const before = c.fill;
    const complete = c.add(chunk);
    // Reject garbage as soon as its first bytes show it, not only when 80 bytes arrived.
    if (before < MAGIC.length) {
      const upto = Math.min(c.fill, MAGIC.length);
      for (let i = before; i < upto; i++) {
        if (c.buf[i] !== MAGIC[i]) return this.#fail('bad magic in hello');
      }
    }
    if (!complete) return HANDSHAKE_STATUS.PENDING;
    this.#done = true;
    const b = c.buf;
    if (!hasMagic(b)) return this.#fail('bad magic in hello');
    const dv = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    const process = dv.readUInt32LE(MAGIC.length);
    const channel = dv.readUInt32LE(MAGIC.length + 4);
    const nonceC = b.subarray(MAGIC.length + 8, MAGIC.length + 8 + NONCE_BYTES);
    const got = b.subarray(MAGIC.length + 8 + NONCE_BYTES);
    const key = this.#keyOf(process);
    if (key === null || !isJobKeyProof(key, 'C', this.#nonceS, nonceC, bound(process, channel, this.#listener), got)) return this.#fail('job key proof does not match');
    this.process = process;
    this.channel = channel & ~THREAD_CONNECTION_BIT;
    this.isThreadConnection = (channel & THREAD_CONNECTION_BIT) !== 0;
    const accept = new Uint8Array(ACCEPT_BYTES);
    accept.set(MAGIC, 0);
    accept.set(proveJobKey(key, 'S', this.#nonceS, nonceC, bound(process, channel, this.#listener)), MAGIC.length);
    this.accept = accept;
    this.rest = c.rest;
    return HANDSHAKE_STATUS.DONE;
  }

  #fail(reason: string): HandshakeStatus {
    this.#done = true;
    this.failure = reason;
    return HANDSHAKE_STATUS.FAILED;
  }
}

/** Connecting side: answers CHALLENGE with HELLO, then checks ACCEPT. */
export class ClientHandshake {
  readonly #jobKey: string;
  readonly #process: number;
  readonly #channel: number;
  readonly #listener: string;
  readonly #nonceC = newKeyProofNonce();
  readonly #challenge = new Collector(CHALLENGE_BYTES);
  readonly #accept = new Collector(ACCEPT_BYTES);
  #nonceS: Uint8Array | null = null;
  #finished = false;
  /** After the challenge arrived: the HELLO to send (then feed() returns PENDING until ACCEPT). */
  hello: Uint8Array | null = null;
  /** After DONE: bytes that followed ACCEPT. */
  rest: Uint8Array = new Uint8Array(0);
  /** After FAILED: why (constant text). */
  failure = '';

  /** @param listener the listener this side dialled (listenerBinding) */
  constructor(jobKey: string, process: number, channel: number, listener: string) {
    this.#jobKey = jobKey;
    this.#process = process;
    this.#channel = channel;
    this.#listener = listener;
  }

  /**
   * Feeds bytes from the server. When the CHALLENGE completes, `hello` is set
   * (send it, once) and feed continues with any bytes that followed.
   */
  feed(chunk: Uint8Array): HandshakeStatus {
    if (this.#finished) return HANDSHAKE_STATUS.FAILED;
    let data = chunk;
    if (this.#nonceS === null) {
      if (!this.#challenge.add(data)) return HANDSHAKE_STATUS.PENDING;
      const b = this.#challenge.buf;
      if (!hasMagic(b)) return this.#fail('bad magic in challenge');
      this.#nonceS = b.subarray(MAGIC.length);
      const hello = new Uint8Array(HELLO_BYTES);
      hello.set(MAGIC, 0);
      const ids = Buffer.from(hello.buffer, hello.byteOffset, hello.byteLength);
      ids.writeUInt32LE(this.#process >>> 0, MAGIC.length);
      ids.writeUInt32LE(this.#channel >>> 0, MAGIC.length + 4);
      hello.set(this.#nonceC, MAGIC.length + 8);
      hello.set(proveJobKey(this.#jobKey, 'C', this.#nonceS, this.#nonceC, bound(this.#process, this.#channel, this.#listener)), MAGIC.length + 8 + NONCE_BYTES);
      this.hello = hello;
      data = this.#challenge.rest;
      if (data.length === 0) return HANDSHAKE_STATUS.PENDING;
    }
    if (!this.#accept.add(data)) return HANDSHAKE_STATUS.PENDING;
    this.#finished = true;
    const b = this.#accept.buf;
    if (!hasMagic(b)) return this.#fail('bad magic in accept');
    if (!isJobKeyProof(this.#jobKey, 'S', this.#nonceS, this.#nonceC, bound(this.#process, this.#channel, this.#listener), b.subarray(MAGIC.length))) {
      return this.#fail('server job key proof does not match');
    }
    this.rest = this.#accept.rest;
    return HANDSHAKE_STATUS.DONE;
  }

  #fail(reason: string): HandshakeStatus {
    this.#finished = true;
    this.failure = reason;
    return HANDSHAKE_STATUS.FAILED;
  }
}
