/**
 * Frame parser: an explicit state machine fed raw chunks of one byte stream
 * (ws Receiver style). It never throws and returns a status from feed().
 *
 * States
 *   HEADER   collecting the 32 header bytes (possibly across chunks, in #head)
 *   PAYLOAD  collecting payloadLength bytes into #payload (a fresh buffer, or
 *            the array the sink's frameTarget returned)
 *   STOPPED  stop() was called (the connection is gone); feed() ignores input
 *
 *   chunk ──► HEADER ──(32 bytes, len 0 or whole payload in chunk)──► frameArrived ─┐
 *               ▲   └──(payload continues in a later chunk)──► PAYLOAD ──(full)──►──┤
 *               └────────────────────────────────────────────────────────────────────┘
 *
 * Allocation: a frame that lies wholly inside one chunk costs no allocation
 * beyond the payload's subarray view (zero-length payloads share EMPTY). Only
 * a payload that spans chunks is assembled into a buffer: the sink's
 * frameTarget is asked first (so rendezvous data lands straight in the
 * receive buffer), else a fresh Uint8Array of payloadLength bytes.
 *
 * frameTarget is also asked for a payload of at least targetMinBytes that lies
 * wholly in one chunk, so a large payload always ends up in the sink's target
 * when it supplies one (one copy either way). While such a payload is being
 * assembled, unfilledTarget() lets the socket read its rest straight into the
 * target, which saves that copy too. The header handed to the sink is this
 * parser's reused object: valid only during the call.
 *
 * Bounds: a header announcing more than maxPayloadBytes is TOO_LARGE (the
 * stream is corrupt). A payload larger than maxUnsolicitedBytes must have been
 * asked for: frameTarget has to supply its array (the device does for the
 * rendezvous data of a receive it matched); otherwise feed() returns
 * UNSOLICITED before allocating anything, so a peer cannot make the parser
 * allocate up to 4 GiB per frame by announcing it.
 */
import { newFrameHeader, type FrameHeader } from '@tsmpi/core/transport';
import { HEADER_BYTES, decodeHeader, offerPlainEager } from './frame-codec.ts';

/** Receives what the parser finds; the owner (a connection) implements it. */
export interface FrameSink {
  /** A complete frame; `header` and `payload` are valid only during the call. */
  frameArrived(header: FrameHeader, payload: Uint8Array): void;
  /** Optionally supplies the array a large payload is received into (exactly payloadLength bytes), or null. */
  frameTarget(header: FrameHeader): Uint8Array | null;
}

/**
 * Offered a plain EAGER frame whole in one chunk, its header read into numbers (the parser's side
 * of TransportHandlers.onEager: the connection adds the source process): true, it consumed it.
 */
export type EagerHook = (contextId: number, srcEndpoint: number, dstEndpoint: number, tag: number, bytes: Uint8Array, start: number, end: number) => boolean;

/** Status returned by FrameParser.feed. */
export const PARSE_STATUS = {
  OK: 0,
  /** A header announced a payload larger than maxPayloadBytes: the stream is corrupt. */
  TOO_LARGE: 1,
  /** A header announced a payload above maxUnsolicitedBytes that the sink did not ask for (frameTarget gave none). */
  UNSOLICITED: 2,
} as const;
export type ParseStatus = (typeof PARSE_STATUS)[keyof typeof PARSE_STATUS];

const STATE_HEADER = 0;
const STATE_PAYLOAD = 1;
const STATE_STOPPED = 2;

const EMPTY = new Uint8Array(0);

export class FrameParser {
  readonly #sink: FrameSink;
  readonly #targetMinBytes: number;
  readonly #maxPayloadBytes: number;
  readonly #maxUnsolicitedBytes: number;
  /** offered each plain EAGER frame whole in one chunk before any header object (TransportHandlers.onEager), or null */
  readonly #eager: EagerHook | null;
  /** the largest payload offered to #eager: one the view branch of feed() would deliver */
  readonly #eagerMaxBytes: number;
  readonly #header: FrameHeader = newFrameHeader();
  readonly #head = new Uint8Array(HEADER_BYTES);
  #headFill = 0;
  #state = STATE_HEADER;
  #payload: Uint8Array = EMPTY;
  #payloadFill = 0;

  /**
   * @param sink receives frames
   * @param targetMinBytes payloads of at least this size in one chunk are offered to frameTarget too
   * @param maxPayloadBytes larger announced payloads make feed() return TOO_LARGE
   * @param maxUnsolicitedBytes larger payloads that frameTarget does not supply an array for make
   *   feed() return UNSOLICITED (default: maxPayloadBytes, no such bound)
   * @param eager offered, as numbers and a payload range, each plain EAGER frame that lies whole in
   *   one chunk and whose payload would go to frameArrived as a view of the chunk; true: it consumed
   *   the frame, false: the parser decodes it and goes on as without it
   */
  constructor(sink: FrameSink, targetMinBytes: number, maxPayloadBytes: number, maxUnsolicitedBytes = maxPayloadBytes,
    eager: EagerHook | null = null) {
    this.#sink = sink;
    this.#eager = eager;
    this.#eagerMaxBytes = Math.min(maxPayloadBytes, targetMinBytes - 1, maxUnsolicitedBytes);
    this.#targetMinBytes = targetMinBytes;
    this.#maxPayloadBytes = maxPayloadBytes;
    this.#maxUnsolicitedBytes = maxUnsolicitedBytes;
  }

  /** The header of the frame being parsed (after feed() returned UNSOLICITED: the refused one). */
  get header(): Readonly<FrameHeader> {
    return this.#header;
  }

  /** Bytes of a partial frame held right now (0 at a frame boundary). */
  get bufferedBytes(): number {
    return this.#state === STATE_PAYLOAD ? HEADER_BYTES + this.#payloadFill : this.#headFill;
  }

  /**
   * The unfilled rest of the payload being assembled when it is at least `minBytes`
   * long, else null. The socket may read straight into it: feed() then finds the
   * chunk already in place and does not copy it.
   */
  unfilledTarget(minBytes: number): Uint8Array | null {
    if (this.#state !== STATE_PAYLOAD) return null;
    const target = this.#payload;
    return target.length - this.#payloadFill >= minBytes ? target.subarray(this.#payloadFill) : null;
  }

  /** Makes every later feed() a no-op (also stops the loop of a feed() in progress). */
  stop(): void {
    this.#state = STATE_STOPPED;
    this.#payload = EMPTY;
  }

  /** Parses every complete frame of `chunk`, keeping a partial one for the next call. */
  feed(chunk: Uint8Array): ParseStatus {
    const len = chunk.length;
    let pos = 0;
    while (pos < len) {
      const state = this.#state;
      if (state === STATE_HEADER) {
        let base: Uint8Array;
        let at: number;
        if (this.#headFill === 0 && len - pos >= HEADER_BYTES) {
          const eager = this.#eager;
          if (eager !== null) {
            // The frames the view branch below would deliver, offered as numbers first (no header object).
            const end = offerPlainEager(chunk, pos, len, this.#eagerMaxBytes, eager);
            if (end >= 0) {
              pos = end;
              continue;
            }
          }
          base = chunk; // fast path: the header lies wholly in this chunk
          at = pos;
          pos += HEADER_BYTES;
        } else {
          const need = HEADER_BYTES - this.#headFill;
          const take = need < len - pos ? need : len - pos;
          this.#head.set(chunk.subarray(pos, pos + take), this.#headFill);
          this.#headFill += take;
          pos += take;
          if (this.#headFill < HEADER_BYTES) return PARSE_STATUS.OK;
          this.#headFill = 0;
          base = this.#head;
          at = 0;
        }
        const h = this.#header;
        decodeHeader(base, at, h);
        const plen = h.payloadLength;
        if (plen > this.#maxPayloadBytes) {
          this.stop();
          return PARSE_STATUS.TOO_LARGE;
        }
        if (plen === 0) {
          this.#sink.frameArrived(h, EMPTY);
          continue;
        }
        const avail = len - pos;
        if (avail >= plen && plen < this.#targetMinBytes && plen <= this.#maxUnsolicitedBytes) {
          const end = pos + plen;
          const view = chunk.subarray(pos, end);
          pos = end;
          this.#sink.frameArrived(h, view);
          continue;
        }
        let target = this.#sink.frameTarget(h);
        if (target === null || target.length !== plen) {
          if (plen > this.#maxUnsolicitedBytes) {
            this.stop();
            return PARSE_STATUS.UNSOLICITED;
          }
          target = new Uint8Array(plen);
        }
        const take = avail < plen ? avail : plen;
        target.set(chunk.subarray(pos, pos + take), 0);
        pos += take;
        if (take === plen) {
          this.#sink.frameArrived(h, target);
          continue;
        }
        this.#payload = target;
        this.#payloadFill = take;
        this.#state = STATE_PAYLOAD;
      } else if (state === STATE_PAYLOAD) {
        const target = this.#payload;
        const need = target.length - this.#payloadFill;
        const take = need < len - pos ? need : len - pos;
        // A chunk read straight into the target (unfilledTarget) is already in place.
        if (pos !== 0 || chunk.buffer !== target.buffer || chunk.byteOffset !== target.byteOffset + this.#payloadFill) {
          target.set(chunk.subarray(pos, pos + take), this.#payloadFill);
        }
        this.#payloadFill += take;
        pos += take;
        if (this.#payloadFill < target.length) return PARSE_STATUS.OK;
        this.#payload = EMPTY;
        this.#payloadFill = 0;
        this.#state = STATE_HEADER;
        this.#sink.frameArrived(this.#header, target);
      } else {
        return PARSE_STATUS.OK; // STOPPED
      }
    }
    return PARSE_STATUS.OK;
  }
}
