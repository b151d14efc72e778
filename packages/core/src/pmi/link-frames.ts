/**
 * The bytes of a rank's link to the wire-up service (issue 38): the framing
 * that carries protocol.ts's messages between a process and mpiexec, without
 * a WebSocket library in the rank.
 *
 * Opening: the process sends LINK_REQUEST, a fixed HTTP/1.1 request asking
 * to upgrade to LINK_UPGRADE; the service answers LINK_RESPONSE (101) and
 * frames follow in both directions. The HTTP opening lets one port (and one
 * HTTP parser, bounded by the service's maxHeaderSize) serve both the ranks'
 * links and the WebSocket links of proxies and other jobs' mpiexecs. Both
 * heads name their side's PMI_PROTOCOL_VERSION (LINK_VERSION_HEADER): a
 * service of another version answers LINK_VERSION_REFUSAL (426, its version,
 * no frames), so that a rank and an mpiexec of different tsmpi versions say
 * so (protocol.ts versionMismatch) before any frame whose form may differ.
 *
 * Frame: a 5-byte header (body length, u32 big-endian; kind, u8) and the body.
 *   kind FRAME_KIND.message: the body is one message (protocol.ts encoders);
 *   kind FRAME_KIND.close: u16 big-endian close code (protocol.ts CLOSE_CODES),
 *   then a UTF-8 reason of at most MAX_CLOSE_REASON_BYTES: the sender ends the
 *   connection afterwards; the receiver ends its side too.
 *
 * FrameReader is a state machine fed raw chunks; it never throws. A body
 * longer than its limit (set per state: the service reads at most a hello
 * before the process proved the job key), an unknown kind or a malformed
 * close frame stops it with an error, after which it reads nothing more.
 */
import { PMI_PROTOCOL_VERSION, versionMismatch } from './protocol.ts';

/** The HTTP Upgrade token of a rank's link. */
export const LINK_UPGRADE = 'tsmpi-pmi';
/** The header of both heads that names the sender's PMI_PROTOCOL_VERSION (Node's http lower-cases it in req.headers). */
export const LINK_VERSION_HEADER = 'Tsmpi-Pmi-Version';
/** What a process sends first: an upgrade request to LINK_UPGRADE (no Host: a rank names no virtual host). */
export const LINK_REQUEST = `GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: ${LINK_UPGRADE}\r\n${LINK_VERSION_HEADER}: ${PMI_PROTOCOL_VERSION}\r\n\r\n`;
/** The service's answer; frames follow it at once. */
export const LINK_RESPONSE = `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${LINK_UPGRADE}\r\n${LINK_VERSION_HEADER}: ${PMI_PROTOCOL_VERSION}\r\n\r\n`;
/** The service's answer to a link of another version (linkRequestError): its own version, no frames; it closes. */
export const LINK_VERSION_REFUSAL = `HTTP/1.1 426 Upgrade Required\r\nConnection: close\r\nUpgrade: ${LINK_UPGRADE}\r\n${LINK_VERSION_HEADER}: ${PMI_PROTOCOL_VERSION}\r\n\r\n`;
/** Longest response head a process reads before the frames (LINK_RESPONSE is 99 bytes). */
export const MAX_RESPONSE_HEAD_BYTES = 512;

/**
 * The service's check of a link's opening: `version` is the request's LINK_VERSION_HEADER (as Node's http
 * hands it over). Null when it is this side's version; else the mismatch, for the log (the process reads it
 * from LINK_VERSION_REFUSAL). A request without the header is no rank of protocol 3 or later.
 */
export function linkRequestError(version: string | readonly string[] | undefined): string | null {
  const v = typeof version === 'string' ? version.trim() : undefined;
  if (v === String(PMI_PROTOCOL_VERSION)) return null;
  return `a rank link of another tsmpi version: wire-up protocol ${v === undefined ? '(not named)' : v.slice(0, 16)}, this mpiexec's ${PMI_PROTOCOL_VERSION}`;
}

/**
 * The process's check of the service's response head (`head`: its bytes before the blank line, as latin1).
 * Null when it is LINK_RESPONSE's upgrade in this side's version; else why the link cannot go on: a service
 * that names another version (in a 101 or in its LINK_VERSION_REFUSAL) is a different tsmpi version
 * (protocol.ts versionMismatch); any other answer is not the service's.
 */
export function linkResponseError(head: string): string | null {
  const lines = head.split('\r\n');
  const status = lines[0] ?? '';
  const field = (name: string): string | undefined => {
    const prefix = `${name.toLowerCase()}:`;
    const line = lines.slice(1).find((l) => l.toLowerCase().startsWith(prefix));
    return line?.slice(prefix.length).trim();
  };
  const version = field(LINK_VERSION_HEADER);
  const isLink = field('Upgrade')?.toLowerCase() === LINK_UPGRADE;
  if (isLink && version !== undefined && version !== String(PMI_PROTOCOL_VERSION)) return versionMismatch(version);
  if (isLink && version !== undefined && /^HTTP\/1\.1 101 /.test(status)) return null;
  return `the wire-up service did not accept the link (${status.slice(0, 80)})`;
}

export const FRAME_KIND = { message: 0, close: 1 } as const;
const HEADER_BYTES = 5;
/** A close frame's reason, as a WebSocket's (125 bytes of control payload less the code). */
export const MAX_CLOSE_REASON_BYTES = 123;

/** One message frame around `body`. */
export function encodeMessageFrame(body: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  frame.writeUInt32BE(body.length, 0);
  frame[4] = FRAME_KIND.message;
  frame.set(body, HEADER_BYTES);
  return frame;
}

/** A close frame: `code`, and `reason` cut to MAX_CLOSE_REASON_BYTES. */
export function encodeCloseFrame(code: number, reason: string): Buffer {
  let why = Buffer.from(reason, 'utf8');
  if (why.length > MAX_CLOSE_REASON_BYTES) why = why.subarray(0, MAX_CLOSE_REASON_BYTES);
  const frame = Buffer.allocUnsafe(HEADER_BYTES + 2 + why.length);
  frame.writeUInt32BE(2 + why.length, 0);
  frame[4] = FRAME_KIND.close;
  frame.writeUInt16BE(code & 0xffff, HEADER_BYTES);
  frame.set(why, HEADER_BYTES + 2);
  return frame;
}

/** What a reader hands its owner for each frame. */
export interface FrameSink {
  onMessage(body: Buffer): void;
  onClose(code: number, reason: string): void;
}

/** Reads frames out of raw chunks. */
export class FrameReader {
  /** Largest body accepted now; the owner may raise it (after authentication). */
  maxBodyBytes: number;
  #chunks: Buffer[] = [];
  #buffered = 0;
  #error: string | null = null;
  #isClosed = false;

  constructor(maxBodyBytes: number) {
    this.maxBodyBytes = maxBodyBytes;
  }

  /** Why the reader stopped (a malformed or oversized frame), or null. */
  get error(): string | null {
    return this.#error;
  }

  /**
   * Takes one chunk; hands every complete frame to `sink`, in order. Returns
   * false once the reader has stopped (error set, or a close frame was read):
   * later chunks are ignored.
   */
  push(chunk: Buffer, sink: FrameSink): boolean {
    if (this.#error !== null || this.#isClosed) return false;
    if (chunk.length > 0) {
      this.#chunks.push(chunk);
      this.#buffered += chunk.length;
    }
    for (;;) {
      if (this.#buffered < HEADER_BYTES) return true;
      const head = this.#peek(HEADER_BYTES);
      const length = head.readUInt32BE(0);
      const kind = head[4]!;
      if (kind !== FRAME_KIND.message && kind !== FRAME_KIND.close) return this.#stop(`unknown frame kind ${kind}`);
      if (kind === FRAME_KIND.close && (length < 2 || length > 2 + MAX_CLOSE_REASON_BYTES)) return this.#stop(`close frame of ${length} bytes`);
      if (kind === FRAME_KIND.message && length > this.maxBodyBytes) return this.#stop(`frame of ${length} bytes (at most ${this.maxBodyBytes} now)`);
      if (this.#buffered < HEADER_BYTES + length) return true;
      const body = this.#take(HEADER_BYTES + length).subarray(HEADER_BYTES);
      if (kind === FRAME_KIND.close) {
        this.#isClosed = true;
        this.#chunks = [];
        this.#buffered = 0;
        sink.onClose(body.readUInt16BE(0), body.subarray(2).toString('utf8'));
        return false;
      }
      sink.onMessage(body);
      if (this.#error !== null || this.#isClosed) return false;
    }
  }

  /** Stops reading (the owner refused the peer): later chunks are ignored. */
  stop(why: string): void {
    this.#stop(why);
  }

  #stop(why: string): false {
    this.#error ??= why;
    this.#chunks = [];
    this.#buffered = 0;
    return false;
  }

  /** The first `n` buffered bytes, without consuming them. */
  #peek(n: number): Buffer {
    if (this.#chunks[0]!.length < n) this.#chunks = [Buffer.concat(this.#chunks)];
    return this.#chunks[0]!;
  }

  /** Consumes and returns the first `n` buffered bytes. */
  #take(n: number): Buffer {
    if (this.#chunks[0]!.length < n) this.#chunks = [Buffer.concat(this.#chunks)];
    const first = this.#chunks[0]!;
    this.#buffered -= n;
    if (first.length === n) this.#chunks.shift();
    else this.#chunks[0] = first.subarray(n);
    return first.subarray(0, n);
  }
}
