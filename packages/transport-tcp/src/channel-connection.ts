/**
 * One outbound channel: the socket this process opened to (peer, channel),
 * the client side of the handshake, and write batching. A process sends only
 * on connections it initiated and receives only on connections it accepted
 * (inbound-connection.ts), so two processes never race to connect.
 *
 * States
 *   CONNECTING  socket connecting or handshaking; frames accumulate in the batch
 *   OPEN        handshake done; frames go out at the next flush
 *   CLOSED      socket closed (gracefully or not); frames are dropped
 *
 * Batching: queue() encodes the header (and copies a small payload) into one
 * reusable growable Buffer and asks the owner for a flush; the owner runs one
 * flush per turn of the event loop, which hands everything queued to the
 * socket in ONE write (or one corked writev when large payloads are sent by
 * reference). The batch buffer is reused when the kernel took the bytes
 * synchronously (socket.writableLength is 0 after the write); otherwise it is
 * lent to the socket, and batches lent before, once the socket has finished
 * with them, take its place (spare-batches.ts; a fresh one when there is none):
 * a Put of 1 MiB, more than a same-host socket takes at once, then costs no new
 * buffer per call (a 1 MiB allocation, its first-touch page faults and the
 * external memory collections it caused, ADR 0045).
 *
 * Write completions: every write that needs one gets the same per-connection
 * callback (bound once); callbacks fire in write order, so a FIFO of entries
 * says what each one means: a sentToken (call onSent) or NO_TOKEN.
 *
 * The return direction of the socket carries only the server's ACCEPT and,
 * when the peer closes, a GOODBYE frame; anything else is a protocol error.
 */
import net from 'node:net';
import { newFrameHeader, type FrameHeader, type TransportError } from '@tsmpi/core/transport';
import type { HostPort } from './address.ts';
import type { ConnectionOwner } from './connection-owner.ts';
import { HEADER_BYTES, KIND_GOODBYE, encodeEagerHeader, encodeHeader } from './frame-codec.ts';
import { FrameParser, PARSE_STATUS, type FrameSink } from './frame-parser.ts';
import { ClientHandshake, HANDSHAKE_STATUS, THREAD_CONNECTION_BIT, listenerBinding } from './handshake.ts';
import { endHandshakeTimeout, wireSocket, type SocketEventSink } from './socket-events.ts';
import { SpareBatches } from './spare-batches.ts';

const STATE_CONNECTING = 0;
const STATE_OPEN = 1;
const STATE_CLOSED = 2;

/** The lent batches kept for reuse, together at most (spare-batches.ts): 1 MiB Puts, in 2 MiB batches, reuse theirs. */
const SPARE_MAX_BYTES = 4 * 1024 * 1024;
/** Completion entry of a write that carries no sentToken. */
const NO_TOKEN = -1;
const EMPTY = new Uint8Array(0);
/** Connect errors worth another try (tuning.connectRetryMs): the peer may be reachable a moment later. */
const RETRY_CODES = new Set(['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EAGAIN']);


const goodbyeHeader: FrameHeader = { ...newFrameHeader(), kind: KIND_GOODBYE };

export class ChannelConnection implements FrameSink, SocketEventSink {
  readonly peer: number;
  readonly channel: number;
  readonly #owner: ConnectionOwner;
  #state = STATE_CONNECTING;
  #socket: net.Socket | null = null;
  /** Made afresh at every dial: its MACs bind the listener dialled (handshake.ts). */
  #handshake: ClientHandshake | null = null;
  #helloSent = false;
  #parser: FrameParser | null = null;
  #isFlushScheduled = false;
  #isEndRequested = false;
  #hasGoodbye = false;
  #isEnded = false;
  #error: TransportError | null = null;
  #address: HostPort | null = null;
  /** The peer's TCP address as it published it ("host:port"): what a TCP handshake binds. */
  #addressText = '';
  /** The peer's same-host socket (same-host.ts) while it is still to be tried, else null. */
  #unixPath: string | null = null;
  #firstConnectAt = 0;
  #retryDelayMs = 0;
  #retryTimer: NodeJS.Timeout | null = null;
  /** Resolves once the handshake is done or the connection closed (TcpTransport.open). */
  readonly opened: Promise<void>;
  #resolveOpened: () => void = () => undefined;
  /** A thread connection holds its socket's event-loop reference while frames wait for the kernel (interface.ts threadConnections). */
  #isRefd = false;

  #batch: Buffer;
  #batchLen = 0;
  /** Batches the socket still points into, oldest first, each with the count of write completions after which it is free. */
  readonly #lent: Buffer[] = [];
  readonly #lentFreeAt: number[] = [];
  /** Writes with a completion callback issued, and completed (#writeDone), since the connection began. */
  #writesIssued = 0;
  #writesDone = 0;
  /** Lent batches the socket has finished with, taken before a new one is allocated. */
  readonly #spares = new SpareBatches(SPARE_MAX_BYTES);
  /** Payloads written by reference: batch offset they follow, array, token; #refCount used. */
  readonly #refAt: number[] = [];
  readonly #refPayload: Uint8Array[] = [];
  readonly #refToken: number[] = [];
  #refCount = 0;
  #refBytes = 0;
  /** Tokens whose payload was copied into the batch: onSent after the next flush. */
  readonly #copiedTokens: number[] = [];
  /** Write-completion FIFO (see header). */
  readonly #done: number[] = [];
  #doneHead = 0;
  readonly #afterWrite: (err?: Error | null) => void;

  constructor(owner: ConnectionOwner, peer: number, channel: number) {
    this.#owner = owner;
    this.peer = peer;
    this.channel = channel;
    this.#batch = Buffer.allocUnsafe(owner._tuning.batchInitialBytes);
    this.#afterWrite = (err) => this.#writeDone(err);
    this.opened = new Promise((resolve) => {
      this.#resolveOpened = resolve;
    });
  }

  /**
   * Starts connecting to the peer's listener: its same-host socket `unixPath` first when given (a
   * path the peer published as bound, or a reader's), else TCP to `address`, published as
   * `addressText`. `address` null: the same-host socket only, no TCP to fall back to (a reader's).
   */
  connect(address: HostPort | null, addressText: string, unixPath: string | null = null): void {
    this.#address = address;
    this.#addressText = addressText;
    this.#unixPath = unixPath;
    this.#firstConnectAt = Date.now();
    this.#retryDelayMs = this.#owner._tuning.connectRetryDelayMs;
    this.#dial();
  }

  /** The handshake for the listener about to be dialled: the same-host socket while it is to be tried, else the TCP address. */
  #newHandshake(): ClientHandshake {
    const o = this.#owner;
    const listener = this.#unixPath !== null ? listenerBinding('unix', this.#unixPath) : listenerBinding('tcp', this.#addressText);
    return new ClientHandshake(o._keyOf(this.peer), o._helloProcess(this.peer), o._threadConnections ? (this.channel | THREAD_CONNECTION_BIT) >>> 0 : this.channel, listener);
  }

  #dial(): void {
    // Every dial starts a fresh handshake: a retry, a thread connection retried after its handshake
    // began (#isThreadHandshakeStall), or the fall back from the same-host socket to TCP.
    this.#helloSent = false;
    this.#handshake = this.#newHandshake();
    // Without an address the Unix path is never dropped (_onClose falls back to TCP only with one).
    const socket = this.#unixPath !== null
      ? net.connect({ path: this.#unixPath })
      : this.#owner._dialTcp(this.#address!, this.peer);
    this.#socket = socket;
    this.#error = null;
    wireSocket(socket, this, this.#owner._tuning.handshakeTimeoutMs, this.#owner._tuning.keepAliveMs);
    if (this.#isRefd) socket.ref(); // frames queued before a retry still wait
  }

  /**
   * A connect that failed before the handshake began with a transient error is
   * retried with backoff (tuning.connectRetryMs); the socket count stays as it
   * is meanwhile, so close() waits for the retry to end.
   */
  #shouldRetry(): boolean {
    const isThread = this.#owner._threadConnections;
    if (this.#state !== STATE_CONNECTING || (this.#helloSent && !isThread) || this.#owner._isClosing || this.#isEndRequested) return false;
    const code = (this.#error?.cause as NodeJS.ErrnoException | undefined)?.code;
    if (code === undefined || !RETRY_CODES.has(code)) return false;
    const t = this.#owner._tuning;
    const budgetMs = code === 'ECONNREFUSED' ? t.connectRefusedRetryMs : isThread ? t.threadConnectRetryMs : t.connectRetryMs;
    return Date.now() - this.#firstConnectAt + this.#retryDelayMs <= budgetMs;
  }

  #retryLater(): void {
    const delay = this.#retryDelayMs;
    this.#retryDelayMs = Math.min(delay * 2, this.#owner._tuning.connectRetryMaxDelayMs);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      if (this.#state !== STATE_CONNECTING || this.#owner._isClosing) {
        this.#state = STATE_CLOSED;
        this.#resolveOpened();
        this.#dropQueued();
        this.#owner._socketClosed();
        return;
      }
      this.#dial();
    }, delay);
    if (!this.#isRefd) this.#retryTimer.unref();
  }

  /** Bytes queued on this channel and not yet taken by the kernel. */
  get queuedBytes(): number {
    const s = this.#socket;
    return this.#batchLen + this.#refBytes + (s === null ? 0 : s.writableLength);
  }

  /** Bytes written on this connection's current socket (Node counts them; mpiexec --dashboard's traffic matrix). */
  get bytesWritten(): number {
    return this.#socket?.bytesWritten ?? 0;
  }

  /** Handshake done: what is queued goes to the socket at the turn's flush. */
  get isOpen(): boolean {
    return this.#state === STATE_OPEN;
  }

  get isClosed(): boolean {
    return this.#state === STATE_CLOSED;
  }

  /**
   * Queues one EAGER frame whose payload is copied (the lean send, interface.ts `queueEager`):
   * the header's bytes are written in place from numbers (encodeEagerHeader), no header object.
   */
  queueEager(contextId: number, src: number, dst: number, tag: number, payload: Uint8Array): void {
    const plen = payload.length;
    // #reserve only when the batch must grow (the lean path counts its calls, ADR 0020).
    if (this.#batchLen + HEADER_BYTES + plen > this.#batch.length) this.#reserve(HEADER_BYTES + plen);
    const b = this.#batch;
    const o = this.#batchLen;
    encodeEagerHeader(b, o, contextId, src, dst, tag, plen);
    if (plen > 0) b.set(payload, o + HEADER_BYTES);
    this.#batchLen = o + HEADER_BYTES + plen;
    if (!this.#isFlushScheduled && this.#state === STATE_OPEN) {
      this.#isFlushScheduled = true;
      this.#owner._scheduleFlush(this);
    }
    if (!this.#isRefd && this.#owner._threadConnections) this.#holdLoop(true);
  }

  /**
   * Queues one frame (hot path: no allocation unless the batch must grow).
   * @returns false when the channel is past its high-water mark
   */
  queue(header: FrameHeader, payload: Uint8Array | null, sentToken: number): boolean {
    const plen = payload === null ? 0 : payload.length;
    const tuning = this.#owner._tuning;
    const isRef = sentToken >= 0 && plen >= tuning.referenceMinBytes;
    this.#reserve(isRef ? HEADER_BYTES : HEADER_BYTES + plen);
    const batch = this.#batch;
    encodeHeader(batch, this.#batchLen, header, plen);
    this.#batchLen += HEADER_BYTES;
    if (isRef) {
      const i = this.#refCount++;
      this.#refAt[i] = this.#batchLen;
      this.#refPayload[i] = payload!;
      this.#refToken[i] = sentToken;
      this.#refBytes += plen;
    } else {
      if (plen > 0) {
        batch.set(payload!, this.#batchLen);
        this.#batchLen += plen;
      }
      if (sentToken >= 0) this.#copiedTokens.push(sentToken);
    }
    if (!this.#isFlushScheduled && this.#state === STATE_OPEN) {
      this.#isFlushScheduled = true;
      this.#owner._scheduleFlush(this);
    }
    if (!this.#isRefd && this.#owner._threadConnections) this.#holdLoop(true);
    return this.queuedBytes <= tuning.highWaterMarkBytes;
  }

  /** Hands everything queued to the socket in one write (called once per turn by the owner). */
  flush(): void {
    this.#isFlushScheduled = false;
    if (this.#state !== STATE_OPEN || this.#isEnded) return;
    const socket = this.#socket!;
    const len = this.#batchLen;
    const refs = this.#refCount;
    if (len > 0 || refs > 0) {
      const batch = this.#batch;
      if (refs === 0) {
        this.#done.push(NO_TOKEN);
        this.#writesIssued++;
        socket.write(batch.subarray(0, len), this.#afterWrite);
      } else {
        socket.cork();
        let from = 0;
        for (let i = 0; i < refs; i++) {
          const at = this.#refAt[i]!;
          if (at > from) socket.write(batch.subarray(from, at));
          from = at;
          this.#done.push(this.#refToken[i]!);
          this.#writesIssued++;
          socket.write(this.#refPayload[i]!, this.#afterWrite);
          this.#refPayload[i] = EMPTY;
        }
        if (len > from) {
          this.#done.push(NO_TOKEN);
          this.#writesIssued++;
          socket.write(batch.subarray(from, len), this.#afterWrite);
        }
        socket.uncork();
        this.#refCount = 0;
        this.#refBytes = 0;
      }
      this.#batchLen = 0;
      // The kernel did not take everything: the socket still points into this buffer.
      if (socket.writableLength > 0) this.#lend(batch);
    }
    const copied = this.#copiedTokens;
    if (copied.length > 0) {
      const onSent = this.#owner._handlers;
      for (let i = 0; i < copied.length; i++) onSent.onSent(copied[i]!);
      copied.length = 0;
    }
    if (this.#isRefd && socket.writableLength === 0) this.#holdLoop(false);
  }

  /**
   * Refs (or unrefs) the socket, so the thread's event loop lives until its frames reach the kernel,
   * and tells the owner (TransportOptions.onHoldChange): a thread that dies while one of its
   * connections holds frames has lost them.
   */
  #holdLoop(hold: boolean): void {
    if (hold !== this.#isRefd) this.#owner._onHoldChange?.(hold);
    this.#isRefd = hold;
    if (hold) this.#socket?.ref();
    else this.#socket?.unref();
  }

  /** close(): once open, flush, say GOODBYE and end the socket; the peer then ends its side. */
  beginClose(): void {
    this.#isEndRequested = true;
    if (this.#retryTimer !== null) {
      this.destroy();
      return;
    }
    if (this.#state === STATE_OPEN) this.#end();
  }

  /** destroy(): drop the socket and everything queued. */
  destroy(): void {
    if (this.#retryTimer !== null) {
      clearTimeout(this.#retryTimer);
      this.#retryTimer = null;
      this.#state = STATE_CLOSED;
      this.#resolveOpened();
      this.#dropQueued();
      this.#owner._socketClosed();
      return;
    }
    this.#state = STATE_CLOSED;
    this.#resolveOpened();
    this.#parser?.stop();
    this.#socket?.destroy();
    this.#dropQueued();
    if (this.#isRefd) this.#holdLoop(false);
  }

  // FrameSink: the return direction carries only GOODBYE.
  frameArrived(header: FrameHeader): void {
    if (header.kind === KIND_GOODBYE) {
      this.#hasGoodbye = true;
      this.#owner._peerDeparted(this.peer);
      return;
    }
    this.#fail('TSMPI_ERR_SOCKET', 'unexpected frame on the return direction of a channel');
  }

  frameTarget(): Uint8Array | null {
    return null;
  }

  /** @internal socket 'data' */
  _onData(chunk: Uint8Array): void {
    if (this.#state === STATE_OPEN) {
      if (this.#parser!.feed(chunk) !== PARSE_STATUS.OK) this.#fail('TSMPI_ERR_SOCKET', 'corrupt frame on the return direction');
      return;
    }
    const hs = this.#handshake;
    if (this.#state !== STATE_CONNECTING || hs === null) return;
    const status = hs.feed(chunk);
    if (hs.hello !== null && !this.#helloSent) {
      this.#helloSent = true;
      this.#socket!.write(hs.hello);
    }
    if (status === HANDSHAKE_STATUS.FAILED) {
      this.#fail('TSMPI_ERR_HANDSHAKE', hs.failure);
    } else if (status === HANDSHAKE_STATUS.DONE) {
      const rest = hs.rest;
      this.#handshake = null;
      this.#state = STATE_OPEN;
      this.#resolveOpened();
      endHandshakeTimeout(this.#socket!);
      this.#parser = new FrameParser(this, Number.MAX_SAFE_INTEGER, 0); // only GOODBYE (no payload) may come back
      if (rest.length > 0) this._onData(rest);
      if (this.#state !== STATE_OPEN) return;
      if (this.#isEndRequested) this.#end();
      else if (this.#batchLen > 0 || this.#refCount > 0 || this.#copiedTokens.length > 0) this.flush();
    }
  }

  /** @internal socket 'end': the peer ended its side. */
  _onEnd(): void {
    this.#isEnded = true;
    if (this.#isThreadHandshakeStall('ECONNRESET', 'peer closed the connection during the handshake')) return;
    if (!this.#hasGoodbye && !this.#owner._isClosing && this.#state !== STATE_CLOSED) {
      this.#fail(this.#lossCode(), this.#state === STATE_OPEN
        ? 'peer ended the connection without saying goodbye'
        : 'peer closed the connection during the handshake (wrong job key?)');
    }
  }

  /** @internal socket 'error' */
  _onError(err: Error): void {
    if (this.#error !== null) return;
    this.#error = { code: this.#lossCode(err), message: `channel ${this.channel} to process ${this.peer}: ${err.message}`, cause: err };
  }

  /** @internal socket 'timeout' (armed only while handshaking) */
  _onTimeout(): void {
    if (this.#isThreadHandshakeStall('ETIMEDOUT', 'connect or handshake timed out')) return;
    if (this.#state === STATE_CONNECTING) this.#fail('TSMPI_ERR_CONNECT', 'connect or handshake timed out');
  }

  /**
   * A thread connection's connect or handshake that stalls (times out, or the peer gives up on it)
   * is a busy peer, not a lost one (tuning.threadConnectRetryMs): the socket goes and _onClose
   * retries. Process connections keep failing at once. Whether to retry is decided in one place
   * (#shouldRetry), so this only records the cause as a transient errno.
   */
  #isThreadHandshakeStall(errno: string, message: string): boolean {
    if (!this.#owner._threadConnections || this.#state !== STATE_CONNECTING || this.#owner._isClosing || this.#isEndRequested) return false;
    const cause = Object.assign(new Error(message), { code: errno });
    this.#error = { code: 'TSMPI_ERR_CONNECT', message: `channel ${this.channel} to process ${this.peer}: ${message}`, cause };
    this.#socket?.destroy();
    return true;
  }

  /** @internal socket 'close' */
  _onClose(): void {
    if (this.#unixPath !== null && this.#address !== null && this.#state === STATE_CONNECTING && !this.#helloSent && !this.#owner._isClosing && !this.#isEndRequested) {
      // The peer has no same-host socket (or it failed before the handshake): TCP, once, right away.
      this.#owner._log.debug({ peer: this.peer, channel: this.channel, code: this.#error?.code }, 'same-host socket failed; connecting over TCP');
      this.#unixPath = null;
      this.#socket = null;
      this.#dial();
      return;
    }
    if (this.#shouldRetry()) {
      this.#owner._log.debug({ peer: this.peer, channel: this.channel, code: this.#error?.code, delayMs: this.#retryDelayMs }, 'connect failed; retrying');
      this.#socket = null;
      this.#retryLater();
      return;
    }
    const wasOpen = this.#state !== STATE_CLOSED;
    this.#state = STATE_CLOSED;
    this.#resolveOpened();
    this.#parser?.stop();
    if (wasOpen && !this.#hasGoodbye && !this.#owner._isClosing) {
      this.#owner._peerLost(this.peer, this.#error ?? {
        code: this.#lossCode(),
        message: `channel ${this.channel} to process ${this.peer} closed unexpectedly`,
      });
    }
    this.#dropQueued();
    this.#owner._socketClosed();
  }

  /**
   * CONNECT before our HELLO, HANDSHAKE after it (a wrong key is answered by a close), PEER_CLOSED once
   * open, and also for a reset after our HELLO: a listener that refuses our key has read the whole HELLO
   * and closes in order, so a reset means that the peer went away with our bytes unread (it died).
   */
  #lossCode(err?: Error): string {
    if (this.#state !== STATE_CONNECTING) return 'TSMPI_ERR_PEER_CLOSED';
    if (!this.#helloSent) return 'TSMPI_ERR_CONNECT';
    const errno = (err as NodeJS.ErrnoException | undefined)?.code;
    return errno === 'ECONNRESET' || errno === 'EPIPE' ? 'TSMPI_ERR_PEER_CLOSED' : 'TSMPI_ERR_HANDSHAKE';
  }

  #end(): void {
    if (this.#isEnded) {
      this.#socket!.end();
      return;
    }
    this.#reserve(HEADER_BYTES);
    encodeHeader(this.#batch, this.#batchLen, goodbyeHeader, 0);
    this.#batchLen += HEADER_BYTES;
    this.flush();
    this.#isEnded = true;
    this.#socket!.end();
  }

  #fail(code: string, message: string): void {
    if (this.#state === STATE_CLOSED) return;
    const err: TransportError = { code, message: `channel ${this.channel} to process ${this.peer}: ${message}` };
    this.#error ??= err;
    this.#state = STATE_CLOSED;
    this.#resolveOpened();
    this.#parser?.stop();
    this.#socket?.destroy();
    if (!this.#owner._isClosing) this.#owner._peerLost(this.peer, this.#error);
    this.#dropQueued();
  }

  #dropQueued(): void {
    this.#batchLen = 0;
    for (let i = 0; i < this.#refCount; i++) this.#refPayload[i] = EMPTY;
    this.#refCount = 0;
    this.#refBytes = 0;
    this.#copiedTokens.length = 0;
    // Closed: nothing of this connection waits for the kernel any more (the owner's count says so).
    if (this.#isRefd) this.#holdLoop(false);
  }

  #reserve(extra: number): void {
    const need = this.#batchLen + extra;
    if (need > this.#batch.length) this.#grow(need);
  }

  /** Moves the batch into `need` bytes or more: a spare that fits, else a buffer of twice the size or more. */
  #grow(need: number): void {
    let grown = this.#spares.take(need);
    if (grown === null) {
      let size = this.#batch.length * 2;
      while (size < need) size *= 2;
      grown = Buffer.allocUnsafe(size);
    }
    grown.set(this.#batch.subarray(0, this.#batchLen), 0);
    this.#batch = grown;
  }

  /**
   * Leaves `batch` to the socket until this flush's writes complete (the last of them has a
   * completion callback, and Node completes a socket's writes in order), and takes the largest
   * spare, or a fresh buffer of batchInitialBytes (#grow moves it into a spare when one fits), as
   * the batch.
   */
  #lend(batch: Buffer): void {
    this.#lent.push(batch);
    this.#lentFreeAt.push(this.#writesIssued);
    this.#batch = this.#spares.takeLargest() ?? Buffer.allocUnsafe(this.#owner._tuning.batchInitialBytes);
  }

  #writeDone(err?: Error | null): void {
    // A lent batch whose flush's writes are all complete is free: kept as a spare up to SPARE_MAX_BYTES
    // in all (one very large send does not pin its size for the connection's life).
    const completed = ++this.#writesDone;
    const lent = this.#lent;
    while (lent.length > 0 && this.#lentFreeAt[0]! <= completed) {
      const free = lent.shift()!;
      this.#lentFreeAt.shift();
      this.#spares.give(free);
    }
    const done = this.#done;
    const token = done[this.#doneHead++]!;
    if (this.#doneHead === done.length) {
      done.length = 0;
      this.#doneHead = 0;
    }
    if (token !== NO_TOKEN && (err === undefined || err === null) && this.#state !== STATE_CLOSED) {
      this.#owner._handlers.onSent(token);
    }
    if (this.#isRefd && this.#batchLen === 0 && this.#refCount === 0 && (this.#socket === null || this.#socket.writableLength === 0)) this.#holdLoop(false);
  }
}
