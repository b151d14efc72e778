/**
 * The send paths: how a frame for another process leaves this thread's device, behind one
 * interface (SendPath), chosen once per device by selectSendPath when the device starts (its
 * direct routes are known then). One implementation per device, so every call through the
 * interface is monomorphic:
 *
 *   HostedPath    the thread runs the channels' transport (inline progress's main thread, a
 *                 channel engine): frames go on it; only this path takes the lean route (queueEager)
 *   DirectPath    a user thread that hosts nothing sends on connections of its own to the peers'
 *                 hosts of each channel (docs/adr/0015)
 *   InjectedPath  a user thread with neither: each frame goes through its channel's injection
 *                 ring, and the channel's host sends it (engines progress, jobs past DIRECT_MAX_PEERS)
 *   RoutedPath    any of the above, for a thread that follows remote endpoint readers' routes
 *                 (docs/adr/0019): a message's first frame takes the route (reader-routes.ts)
 *
 * Before start a device has no path: StartHold keeps the frames it sends until then.
 *
 * A channel a path does not cover (an engine's path for another engine's channel) falls back to
 * that channel's injection ring, as the channel's host is then another thread. Messages between
 * endpoints of one process take no path at all (Protocol.local).
 */
import { channelOf, newFrameHeader, type FrameHeader, type Transport } from '../transport/index.ts';
import type { ThreadBridge } from './thread-bridge.ts';
import type { ReaderRoutes } from './reader-routes.ts';

export interface SendPath {
  /**
   * Sends frame `h` (a protocol answer, a route's control frame or mark, or a message's frame) to
   * remote process `proc` on its channel's usual path. `call`: the API call an injection error names.
   */
  out(proc: number, h: FrameHeader, payload: Uint8Array | null, call: string): void;
  /**
   * Sends a message's first frame (EAGER, EAGER_SYNC, RNDV_RTS): `out`, or a remote reader's route.
   * `sentToken` >= 0 (only where waitsToOpen said so): the transport tells it (onSent) once the
   * frame is written; -1: nothing to tell.
   */
  first(proc: number, h: FrameHeader, payload: Uint8Array | null, call: string, sentToken: number): void;
  /**
   * A frame for `proc` on channel `c` would wait for this thread to open its connection, which takes
   * this thread's event loop: an eager send then completes once its frame is written (Device.send),
   * so that code which computes after the call does not hold it (docs/adr/0061).
   */
  waitsToOpen(proc: number, c: number): boolean;
  /** The largest message that goes eagerly on channel `c` (an injection ring bounds what it carries). */
  eagerMax(c: number): number;
  /** This thread answers channel `c`'s RNDV_CTS itself (it hosts it): a rendezvous sends from the user's buffer. */
  hosts(c: number): boolean;
  /**
   * The lean route of a send (docs/adr/0020, Device.sendBytes): where it applies (an eager message to
   * another process on a channel this thread hosts) queues a plain EAGER frame straight into the
   * channel's batch. False, having done nothing, elsewhere: the caller takes the general send.
   */
  queueEager(src: number, dst: number, ctx: number, tag: number, data: Uint8Array): boolean;
}

/** What a path is chosen from: the device's layout once its transports exist (Device.start). */
export interface PathLayout {
  readonly channels: number;
  readonly endpointsPerProcess: number;
  /** this thread's process: a message to one of its endpoints takes no path (Protocol.local) */
  readonly process: number;
  readonly eagerLimit: number;
  /** the largest eager message an injection ring takes (ThreadBridge.maxInjectBytes, bounded by eagerLimit) */
  readonly injectLimit: number;
  /** per channel: this thread hosts it */
  readonly hosted: readonly boolean[];
  /** the transport of the hosted channels (null: this thread hosts none) */
  readonly transport: Transport | null;
  /** per channel: this thread's own transport for it (direct routes), if any */
  readonly direct: readonly (Transport | undefined)[];
  readonly bridge: ThreadBridge;
  /** the lean send must also see failures other threads marked (a device without receive lanes) */
  readonly leanSeesSharedFailure: boolean;
  readonly failedClass: () => number;
  /** the device's reader routes where it follows remote readers' routes, else null */
  readonly routes: ReaderRoutes | null;
}

/** The one place that chooses how this device's frames leave (see the file's comment). */
export function selectSendPath(l: PathLayout): SendPath {
  let path: SendPath;
  if (l.transport !== null && l.hosted.some((h) => h)) path = new HostedPath(l);
  else if (l.direct.some((t) => t !== undefined)) path = new DirectPath(l);
  else path = new InjectedPath(l);
  return l.routes === null ? path : new RoutedPath(path, l.routes);
}

/** The channels' transport runs on this thread (docs/DESIGN "Channels and progress"). */
export class HostedPath implements SendPath {
  readonly #hosted: readonly boolean[];
  readonly #t: Transport;
  readonly #bridge: ThreadBridge;
  readonly #eagerLimit: number;
  readonly #injectLimit: number;
  readonly #channels: number;
  readonly #J: number;
  readonly #process: number;
  readonly #seesShared: boolean;
  readonly #failedClass: () => number;
  readonly #queueEager: boolean;

  constructor(l: PathLayout) {
    this.#hosted = l.hosted;
    this.#t = l.transport!;
    this.#bridge = l.bridge;
    this.#eagerLimit = l.eagerLimit;
    this.#injectLimit = l.injectLimit;
    this.#channels = l.channels;
    this.#J = l.endpointsPerProcess;
    this.#process = l.process;
    this.#seesShared = l.leanSeesSharedFailure;
    this.#failedClass = l.failedClass;
    this.#queueEager = l.transport!.queueEager !== undefined;
  }

  out(proc: number, h: FrameHeader, payload: Uint8Array | null, call: string): void {
    this.first(proc, h, payload, call, -1);
  }

  first(proc: number, h: FrameHeader, payload: Uint8Array | null, call: string, sentToken: number): void {
    const c = channelOf(h.srcEndpoint, h.dstEndpoint, this.#J, this.#channels);
    if (this.#hosted[c]) this.#t.send(proc, h, payload, sentToken);
    else this.#bridge.inject(c, proc, h, payload, call);
  }

  waitsToOpen(proc: number, c: number): boolean {
    return this.#hosted[c] === true && this.#t.isOpen?.(proc, c) === false;
  }

  eagerMax(c: number): number {
    return this.#hosted[c] ? this.#eagerLimit : this.#injectLimit;
  }

  hosts(c: number): boolean {
    return this.#hosted[c] === true;
  }

  queueEager(src: number, dst: number, ctx: number, tag: number, data: Uint8Array): boolean {
    const J = this.#J;
    const proc = (dst / J) | 0;
    if (data.length > this.#eagerLimit || proc === this.#process || !this.#queueEager) return false;
    // channelOf's one-endpoint case inline (interface.ts): the common process has one endpoint.
    const c = J === 1 ? (src + dst) % this.#channels : channelOf(src, dst, J, this.#channels);
    // With receive lanes only this device marks the process failed (its own failure, which the caller checked).
    if (!this.#hosted[c] || (this.#seesShared && this.#failedClass() !== 0)) return false;
    return this.#t.queueEager!(proc, c, ctx, src, dst, tag, data);
  }
}

/** A user thread's own connections to the peers' hosts of each channel (docs/adr/0015). */
export class DirectPath implements SendPath {
  readonly #direct: readonly (Transport | undefined)[];
  readonly #bridge: ThreadBridge;
  readonly #eagerLimit: number;
  readonly #injectLimit: number;
  readonly #channels: number;
  readonly #J: number;

  constructor(l: PathLayout) {
    this.#direct = l.direct;
    this.#bridge = l.bridge;
    this.#eagerLimit = l.eagerLimit;
    this.#injectLimit = l.injectLimit;
    this.#channels = l.channels;
    this.#J = l.endpointsPerProcess;
  }

  out(proc: number, h: FrameHeader, payload: Uint8Array | null, call: string): void {
    this.first(proc, h, payload, call, -1);
  }

  first(proc: number, h: FrameHeader, payload: Uint8Array | null, call: string, sentToken: number): void {
    const c = channelOf(h.srcEndpoint, h.dstEndpoint, this.#J, this.#channels);
    const d = this.#direct[c];
    if (d !== undefined) d.send(proc, h, payload, sentToken);
    else this.#bridge.inject(c, proc, h, payload, call);
  }

  waitsToOpen(proc: number, c: number): boolean {
    return this.#direct[c]?.isOpen?.(proc, c) === false;
  }

  eagerMax(c: number): number {
    return this.#direct[c] !== undefined ? this.#eagerLimit : this.#injectLimit;
  }

  hosts(): boolean {
    return false;
  }

  queueEager(): boolean {
    return false;
  }
}

/** Every frame through its channel's injection ring (thread-bridge.ts); the channel's host sends it. */
export class InjectedPath implements SendPath {
  readonly #bridge: ThreadBridge;
  readonly #injectLimit: number;
  readonly #channels: number;
  readonly #J: number;

  constructor(l: PathLayout) {
    this.#bridge = l.bridge;
    this.#injectLimit = l.injectLimit;
    this.#channels = l.channels;
    this.#J = l.endpointsPerProcess;
  }

  out(proc: number, h: FrameHeader, payload: Uint8Array | null, call: string): void {
    this.#bridge.inject(channelOf(h.srcEndpoint, h.dstEndpoint, this.#J, this.#channels), proc, h, payload, call);
  }

  first(proc: number, h: FrameHeader, payload: Uint8Array | null, call: string): void {
    this.out(proc, h, payload, call);
  }

  /** The channel's host opens the connection on its own event loop, whatever this thread does. */
  waitsToOpen(): boolean {
    return false;
  }

  eagerMax(): number {
    return this.#injectLimit;
  }

  hosts(): boolean {
    return false;
  }

  queueEager(): boolean {
    return false;
  }
}

/**
 * A thread that follows remote readers' routes (docs/adr/0019): a message's first frame goes by
 * ReaderRoutes.send (the reader's socket, or the inner path, tagged, with switch marks); answers
 * and control frames take the inner path. No lean send: route frames carry tags.
 */
export class RoutedPath implements SendPath {
  readonly #inner: SendPath;
  readonly #routes: ReaderRoutes;

  constructor(inner: SendPath, routes: ReaderRoutes) {
    this.#inner = inner;
    this.#routes = routes;
  }

  out(proc: number, h: FrameHeader, payload: Uint8Array | null, call: string): void {
    this.#inner.out(proc, h, payload, call);
  }

  first(proc: number, h: FrameHeader, payload: Uint8Array | null, call: string, sentToken: number): void {
    if (!this.#routes.send(proc, h, payload, call, sentToken)) this.#inner.first(proc, h, payload, call, sentToken);
  }

  /** The inner path's answer: a route takes a reader's socket only once its connection is open (ReaderRoutes.send). */
  waitsToOpen(proc: number, c: number): boolean {
    return this.#inner.waitsToOpen(proc, c);
  }

  eagerMax(c: number): number {
    return this.#inner.eagerMax(c);
  }

  hosts(c: number): boolean {
    return this.#inner.hosts(c);
  }

  queueEager(): boolean {
    return false;
  }
}

/**
 * The path of a device that has not started (issue 34). A peer that started first may already send
 * to this device's transport, which listens before Device.start, and some of its frames make the
 * device answer (a CANCEL_SEND, a matched EAGER_SYNC or RNDV_RTS, an RMA request, a route's control
 * frame): each frame is handled when it arrives, and the frames it sends back wait here, copied,
 * in order, until start chooses the real path (release); then they go out on it, ahead of anything
 * the started device sends. A frame sent to the hold after release goes straight on. A message of
 * this thread's own cannot start before the device does: `first` is an internal error.
 */
export class StartHold implements SendPath {
  #held: HeldFrame[] = [];
  /** the path chosen at start (release), or null before */
  #next: SendPath | null = null;

  out(proc: number, h: FrameHeader, payload: Uint8Array | null, call: string): void {
    if (this.#next !== null) {
      this.#next.out(proc, h, payload, call);
      return;
    }
    // The caller reuses its header, and a payload may be a view of memory it reuses: both are copied.
    this.#held.push({ proc, h: Object.assign(newFrameHeader(), h), payload: payload === null ? null : payload.slice(), call });
  }

  first(): void {
    throw new Error('internal: the device sent a message before Device.start');
  }

  waitsToOpen(): boolean {
    return false;
  }

  eagerMax(): number {
    return 0;
  }

  hosts(): boolean {
    return false;
  }

  queueEager(): boolean {
    return false;
  }

  /** Device.start: sends the held frames on `path`, in the order they were made, and forwards any later one to it. */
  release(path: SendPath): void {
    this.#next = path;
    const held = this.#held;
    this.#held = [];
    for (const f of held) path.out(f.proc, f.h, f.payload, f.call);
  }
}

/** A frame a device sent before it started (StartHold). */
interface HeldFrame {
  readonly proc: number;
  readonly h: FrameHeader;
  readonly payload: Uint8Array | null;
  readonly call: string;
}
