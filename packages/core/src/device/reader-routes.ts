/**
 * Endpoint readers and the routes to them (docs/adr/0019, 0021): the one side-route mechanism of
 * the device. A worker thread may read an endpoint of its process itself (readEndpoint): it listens
 * on a same-host socket of its own and announces the route (ROUTE_OPEN); the other processes'
 * threads then send their frames for that endpoint there (send), switching paths in order with the
 * channel's host (route-switch.ts marks, route-intake.ts tags), and leave with a FIN when the route
 * closes (handBack: ROUTE_CLOSE, the users' count, the FINs). Keyed by endpoint.
 *
 * Exists only in a process with a route table (endpointReceive `thread` where it applies); the
 * device (device-wiring.ts) hands it the frames it reads that carry route tags or route control, and
 * gives it, through RouteHost, its own sending path, its transports' handlers and its failure.
 * Invariants: a sending thread's frames to one endpoint take one path at a time, the switch mark
 * first on the path it leaves; a reader's socket closes only once every user it was counted has
 * sent its FIN (or its connection ended after its last data frame: a dead sender's end is its FIN).
 *
 * Size: past 600 lines as one mechanism, reading and sending, whose halves share the route words and the FIN rules.
 */
import { FRAME_KIND, newFrameHeader, type FrameHeader, type ReaderSocketName, type Transport, type TransportError, type TransportFactory } from '../transport/index.ts';
import { ERR_PROC_FAILED, mpiError, type MPIError } from '../util/index.ts';
import type { Logger } from '../log/index.ts';
import type { SharedState } from './shared-state.ts';
import type { Completion } from './completion.ts';
import { EMPTY } from './completion.ts';
import { ROUTE_STATE, routeEpoch, routeState, routeUsers } from './route-table.ts';
import { RouteIntakes, isRouteTagged, routeTag, tagEpoch, tagThread } from './route-intake.ts';
import { PATH_READER, RouteSender, type SendStep } from './route-sender.ts';
import type { EndpointReader } from './endpoint-reader.ts';

/** What the reader routes use of the device's options. */
export interface RouteOptions {
  readonly process: number;
  readonly processCount: number;
  readonly endpointsPerProcess: number;
  readonly channels: number;
  readonly eagerLimit: number;
  readonly jobKey: string;
  readonly listenHost: string;
  readonly transportFactory: TransportFactory | null;
  readonly log: Logger;
  readonly threadId: number;
  readonly readerSocketName?: ReaderSocketName;
  readonly readsEndpoints?: boolean;
}

/** What the routes ask of the device that owns them (device-wiring.ts builds it). */
export interface RouteHost {
  readonly opts: RouteOptions;
  readonly shared: SharedState;
  readonly firstEndpoint: number;
  readonly endpointCount: number;
  readonly completion: Completion;
  isLocal(endpoint: number): boolean;
  processOf(endpoint: number): number;
  /** Sends a frame on this thread's usual path to `proc` (its hosted channel, direct route or injection ring). */
  out(proc: number, h: FrameHeader, payload: Uint8Array | null, call?: string): void;
  /** A transport of this thread's own connections (not started). */
  threadTransport(logFields: Record<string, unknown>, onPeerLost: (proc: number, err: TransportError) => void, channels?: readonly number[], channelCount?: number): Transport;
  /** The device's transport handlers, for a reader's listening transport. */
  deliver(src: number, h: FrameHeader, payload: Uint8Array): void;
  sent(token: number): void;
  peerLost(proc: number, err: TransportError): void;
  payloadTarget(src: number, h: FrameHeader): Uint8Array | null;
  /** A data frame the intakes let through, in order: matched as the device's arrivals are. */
  arrive(srcProcess: number, h: FrameHeader, payload: Uint8Array): void;
  fatal(err: MPIError, lostProcess: number | null): void;
  failure(): Error | null;
  isClosing(): boolean;
}

/** The local endpoint a thread reads (docs/adr/0019): its reading's epoch and the transport listening on its socket. */
interface EndpointReading {
  readonly endpoint: number;
  readonly epoch: number;
  readonly transport: Transport;
  /** ROUTE_OPEN went to every other process (only once the socket listens: a sender may dial it from then on) */
  announced: boolean;
  /** data frames read on the reader's socket (the info line at its close says how many took the path) */
  frames: number;
  /** per process: its senders' FINs consumed (handBack waits for as many as that process counted users) */
  readonly fins: number[];
  /** FINs taken from the end of a dead sender thread's connection, by `process:thread:epoch` (#onSenderConnectionEnd) */
  readonly finsTaken: Set<string>;
  /** told when a FIN is consumed, while handBack waits */
  onFin: (() => void) | null;
}

/**
 * This thread's connection to a remote endpoint's reader: the reader's epoch and this thread's
 * transport to its socket. Made at the first send that finds the route open; the thread joins the
 * route (RouteSender.next's mayJoin) only once `ready`, so its frames never wait for a handshake
 * that needs its own event loop (docs/adr/0019 Left item 1).
 */
interface ReaderPath {
  readonly epoch: number;
  readonly transport: Transport;
  /** the transport's open() resolved: the connection takes frames without this thread's loop */
  ready: boolean;
  /** a frame or the mark went out on it: its loss loses messages (until then, losing it loses nothing) */
  carried: boolean;
  /** it ended while it carried frames (#onReaderLost): told once */
  lost: boolean;
}

/**
 * How long a thread whose connection to a reader ended unannounced waits for the reader's process
 * to fail before it takes that process for lost itself (#onReaderLost): the process fails once its
 * Worker's 'exit' event comes, after Node has torn down the thread's heap (long for a large one).
 */
const READER_LOSS_GRACE_MS = 10_000;

/**
 * Sub-kinds of a CONTROL frame (in `aux`) for the routes of docs/adr/0019, no payload:
 * - OPEN, CLOSE: a reader announces its route, to every other process on its own thread
 *   connections, recorded by whichever thread hosts the channel there: srcEndpoint is the reader's
 *   endpoint, dstEndpoint the process's first endpoint, aux2 the reading's epoch;
 * - CLOSED: that thread's answer to a CLOSE, the other way on the same channel: `tag` counts the
 *   process's threads registered as the route's users (the FINs the reader waits for from it);
 * - MARK: a sending thread's switch mark (route-switch.ts) on the path it leaves, tagged in `seq`
 *   like its data frames (route-intake.ts); on a reader's socket it is the FIN the reader counts.
 */
export const ROUTE_CONTROL = { OPEN: 1, CLOSE: 2, CLOSED: 3, MARK: 4 } as const;

export class ReaderRoutes implements EndpointReader {
  readonly #host: RouteHost;
  readonly #opts: RouteOptions;
  readonly #shared: SharedState;
  readonly #first: number;
  readonly #me: number;
  /** the endpoint this thread reads (readEndpoint), or null */
  #reading: EndpointReading | null = null;
  /** readings handed back whose senders have not all left yet, by endpoint (handBack) */
  readonly #closingReadings = new Map<number, EndpointReading>();
  /**
   * This thread's choice of path per frame to a remote endpoint (null where it sends no data
   * frames: engines, or no transport), its connections to remote readers by endpoint, and the
   * consumer side of the switch for the frames it reads (as a channel's host, or as a reader).
   */
  readonly #routeSender: RouteSender | null = null;
  readonly #readerPaths = new Map<number, ReaderPath>();
  readonly #intakes: RouteIntakes;
  #watchingRoutes = false;
  /** data frames this thread sent on readers' paths (MPI.stats readerRoutes) */
  #framesToReaders = 0;
  readonly #markHdr: FrameHeader = newFrameHeader();
  #destroyed = false;

  constructor(host: RouteHost) {
    this.#host = host;
    this.#opts = host.opts;
    this.#shared = host.shared;
    this.#first = host.firstEndpoint;
    this.#me = host.opts.threadId;
    const routes = host.shared.routes!;
    this.#intakes = new RouteIntakes(routes, this.#first, host.arrive, this.#onMarkConsumed);
    const o = host.opts;
    if (o.readerSocketName !== undefined && o.transportFactory !== null && o.threadId >= 0) this.#routeSender = new RouteSender(routes, o.threadId);
  }

  /** This thread follows remote readers' routes: its data frames to remote endpoints go through send(). */
  get follows(): boolean {
    return this.#routeSender !== null;
  }

  /** An EAGER, EAGER_SYNC or RNDV_RTS frame read here: the intakes keep a switching sender's frames in order, then the matcher. */
  arriveFrame(srcProcess: number, h: FrameHeader, payload: Uint8Array): void {
    this.#intakes.offer(srcProcess, h, payload, false);
  }

  /** Every connection and socket of the routes closes (the device closes): after the FINs (leave) and the hand-back. */
  close(): Promise<void>[] {
    return [this.handBack('close'), ...[...this.#readerPaths.values()].map((p) => p.transport.close())];
  }

  destroy(): void {
    this.#destroyed = true;
    this.#reading?.transport.destroy();
    for (const r of this.#closingReadings.values()) r.transport.destroy();
    for (const p of this.#readerPaths.values()) p.transport.destroy();
  }

  /** The endpoint this thread reads (readEndpoint), or -1. */
  get readingEndpoint(): number {
    return this.#reading?.endpoint ?? -1;
  }

  /**
   * This thread becomes the reader of local endpoint `endpoint` (docs/adr/0019) if it may (its
   * device has readerSocketName, the process a route table) and the endpoint has no reader:
   * claims it, opening a new epoch, and listens on the reader's same-host socket. Synchronous,
   * as MPI.threadAttach is: the listen completes on this thread's event loop (a failure hands
   * the endpoint back with a warning). True when this thread reads `endpoint` now.
   *
   * Once the socket listens the reader announces its route (ROUTE_OPEN): the other processes'
   * threads may then send it their frames to `endpoint` directly (send), which this thread
   * matches as they arrive (#onDeliver). An endpoint this thread handed back whose senders have
   * not all left yet (handBack) cannot be read again until they have: false.
   */
  readEndpoint(endpoint: number): boolean {
    const o = this.#opts;
    const routes = this.#shared.routes;
    if (this.#reading !== null) return this.#reading.endpoint === endpoint;
    if (routes === null || o.readsEndpoints !== true || o.readerSocketName === undefined || o.transportFactory === null || this.#host.isClosing() || !this.#host.isLocal(endpoint)) return false;
    const epoch = routes.claimReader(endpoint - this.#first, this.#me);
    if (epoch < 0) return false;
    const name = o.readerSocketName(o.jobKey, o.process, endpoint, epoch);
    // Assigned once the transport exists; its delivery handler counts the reading's frames.
    let reading: EndpointReading;
    const transport = this.#listeningTransport(name, { reader: endpoint }, () => reading.frames++,
      (src, lastSeq) => this.#onSenderConnectionEnd(reading, src, lastSeq));
    reading = { endpoint, epoch, transport, announced: false, frames: 0, fins: new Array<number>(o.processCount).fill(0), finsTaken: new Set(), onFin: null };
    this.#reading = reading;
    o.log.info({ endpoint, epoch, thread: this.#me }, 'endpoint reader: this thread reads the endpoint');
    // MPI.finalize waits for every reader of the process to hand back before its barrier, while the
    // other processes can still answer the close (lifecycle.ts).
    const finalizing = reading;
    void routes.finalizingAfter().then(() => {
      if (this.#reading === finalizing) void this.handBack('the process finalizes');
    });
    transport.listen().then(() => {
      if (this.#reading === reading && !reading.announced) this.#announceOpen(reading);
    }, (err: unknown) => {
      if (this.#reading !== reading) return;
      o.log.warn({ endpoint, epoch, err: (err as Error).message }, 'endpoint reader: cannot listen on the reader socket; the endpoint stays on the engine path');
      void this.handBack('listen failed');
    });
    // A same-host name is bound inside listen(), whose promise resolves only on a later turn: a
    // thread that only waits in MPI meanwhile could run a whole exchange before its ROUTE_OPEN went
    // out. Announcing now puts it on this thread's connections ahead of anything it sends next.
    if (transport.isListening?.() === true) this.#announceOpen(reading);
    return true;
  }

  /** ROUTE_OPEN of `reading`, once its socket listens (a sender may dial it from then on). */
  #announceOpen(reading: EndpointReading): void {
    reading.announced = true;
    this.#announceRoute(reading, ROUTE_CONTROL.OPEN);
    this.#opts.log.info({ endpoint: reading.endpoint, epoch: reading.epoch, thread: this.#me }, 'endpoint reader: route announced to every other process');
  }

  /**
   * Hands the endpoint this thread reads back to the channel's host (docs/adr/0019 "Leaving":
   * threadAttach elsewhere, the thread's event loop emptying, close): announces ROUTE_CLOSE, and
   * once every other process has answered how many of its threads had joined the route
   * (ROUTE_CLOSED) and each of those has sent its FIN on the reader's socket (everything they
   * sent there has then been matched), stops listening and releases the claim, so another
   * thread may read it in a new epoch. Until then the socket stays open and this thread's event
   * loop alive: a sender that computes delays the reader's end, never a message. Nothing to do
   * when it reads none.
   */
  async handBack(why: string): Promise<void> {
    const reading = this.#reading;
    if (reading === null) return;
    this.#reading = null;
    const log = this.#opts.log;
    log.info({ endpoint: reading.endpoint, epoch: reading.epoch, thread: this.#me, why }, 'endpoint reader: handed the endpoint back');
    const routes = this.#shared.routes!;
    const local = reading.endpoint - this.#first;
    // Every process that heard the opening hears the close, on the same connections, after it.
    if (reading.announced) {
      this.#announceRoute(reading, ROUTE_CONTROL.CLOSE);
      this.#closingReadings.set(reading.endpoint, reading);
      this.#host.completion.hold();
      try {
        await this.#sendersLeft(reading);
      } finally {
        this.#host.completion.release();
        this.#closingReadings.delete(reading.endpoint);
      }
      log.info({ endpoint: reading.endpoint, epoch: reading.epoch, thread: this.#me, frames: reading.frames, fins: reading.fins.reduce((a, b) => a + b, 0) }, 'endpoint reader: every sender has left; the socket closes');
    }
    routes.clearClosed(local);
    routes.releaseReader(local, this.#me);
    try {
      await reading.transport.close();
    } catch (err) {
      // Every sender has sent its FIN: nothing can be lost; the name is the epoch's alone.
      log.warn({ endpoint: reading.endpoint, epoch: reading.epoch, err: (err as Error).message }, 'endpoint reader: closing the reader socket failed');
    }
  }

  /**
   * Resolves once every other process answered `reading`'s ROUTE_CLOSE and as many FINs as it
   * counted users have been consumed here, or this device fails or is destroyed.
   */
  async #sendersLeft(reading: EndpointReading): Promise<void> {
    const routes = this.#shared.routes!;
    const local = reading.endpoint - this.#first;
    const o = this.#opts;
    for (;;) {
      const seen = routes.closedChanges(local);
      let left = true;
      for (let p = 0; p < o.processCount && left; p++) {
        if (p === o.process) continue;
        const users = routes.closedUsers(local, p);
        if (users < 0 || reading.fins[p]! < users) left = false;
      }
      if (left || this.#host.failure() !== null || this.#shared.failedClass() !== 0 || this.#destroyed) return;
      await new Promise<void>((resolve) => {
        reading.onFin = resolve;
        void routes.closedAfter(local, seen).then(resolve);
        // A failing job ends the wait too (its transports are being destroyed).
        const failed = setTimeout(resolve, 1000);
        failed.unref();
      });
      reading.onFin = null;
    }
  }

  /**
   * ROUTE_OPEN or ROUTE_CLOSE of `reading` to every other process, on this thread's own connections
   * (SendPath.out: its direct routes): one CONTROL frame per process, from the reader's endpoint to the
   * process's first endpoint, so one reader's announcements to a process share a connection and
   * arrive in the order sent. A frame that cannot go (the process is failing) is logged, not thrown:
   * hand-back runs at threadAttach and at the thread's end, where nobody could take the error.
   */
  #announceRoute(reading: EndpointReading, what: number): void {
    const o = this.#opts;
    const h = this.#markHdr;
    for (let p = 0; p < o.processCount; p++) {
      if (p === o.process) continue;
      h.kind = FRAME_KIND.CONTROL;
      h.flags = 0;
      h.contextId = 0;
      h.srcEndpoint = reading.endpoint;
      h.dstEndpoint = p * o.endpointsPerProcess;
      h.tag = 0;
      h.seq = 0;
      h.aux = what;
      h.aux2 = reading.epoch;
      h.payloadLength = 0;
      try {
        this.#host.out(p, h, null);
      } catch (err) {
        o.log.warn({ endpoint: reading.endpoint, epoch: reading.epoch, peer: p, err: (err as Error).message }, 'endpoint reader: a route announcement could not be sent');
      }
    }
  }

  /**
   * A route CONTROL frame from another process (ROUTE_CONTROL): a reader's announcement, recorded
   * in this process's route table (a close is answered with the users it counted: ROUTE_CLOSED);
   * an answer to one of this process's readers; or a sender's switch mark, consumed in order with
   * its data frames (#intakes).
   */
  onControl(srcProcess: number, h: FrameHeader): void {
    const routes = this.#shared.routes;
    const remote = !this.#host.isLocal(h.srcEndpoint) && h.srcEndpoint < this.#host.endpointCount && this.#host.isLocal(h.dstEndpoint);
    if (routes === null || !remote) {
      this.#opts.log.warn({ aux: h.aux, src: h.srcEndpoint, dst: h.dstEndpoint, epoch: h.aux2 }, 'control frame dropped: no route table here, or not between a remote and a local endpoint');
      return;
    }
    switch (h.aux) {
      case ROUTE_CONTROL.MARK:
        this.#intakes.offer(srcProcess, h, EMPTY, true);
        return;
      case ROUTE_CONTROL.CLOSED:
        routes.recordClosed(h.dstEndpoint - this.#first, srcProcess, h.tag);
        return;
      case ROUTE_CONTROL.OPEN:
      case ROUTE_CONTROL.CLOSE: {
        const open = h.aux === ROUTE_CONTROL.OPEN;
        const word = routes.setRoute(h.srcEndpoint, h.aux2, open ? ROUTE_STATE.OPEN : ROUTE_STATE.CLOSING);
        this.#opts.log.info({ endpoint: h.srcEndpoint, epoch: h.aux2, state: open ? 'open' : 'closing', recorded: word >= 0 }, 'endpoint route announced');
        if (!open) this.#answerClose(srcProcess, h, word < 0 ? 0 : routeUsers(word));
        return;
      }
      default:
        this.#opts.log.warn({ aux: h.aux, src: h.srcEndpoint }, 'control frame of unknown sub-kind dropped');
    }
  }

  /**
   * ROUTE_CLOSED to the reader that sent ROUTE_CLOSE `h`: `users` of this process's threads joined
   * the route (its count is final once closing: RouteTable.registerUser). It goes back on the
   * channel the close came on, which this thread hosts.
   */
  #answerClose(srcProcess: number, h: FrameHeader, users: number): void {
    const out = this.#markHdr;
    out.kind = FRAME_KIND.CONTROL;
    out.flags = 0;
    out.contextId = 0;
    out.srcEndpoint = h.dstEndpoint;
    out.dstEndpoint = h.srcEndpoint;
    out.tag = users;
    out.seq = 0;
    out.aux = ROUTE_CONTROL.CLOSED;
    out.aux2 = h.aux2;
    out.payloadLength = 0;
    try {
      this.#host.out(srcProcess, out, null);
    } catch (err) {
      this.#opts.log.warn({ endpoint: h.srcEndpoint, epoch: h.aux2, err: (err as Error).message }, 'endpoint route: the answer to a close could not be sent');
    }
  }


  /**
   * A sender thread's connection to `reading`'s socket from process `src` closed, its last frame's
   * tag `lastSeq` (docs/adr/0019 gap 4). A thread that leaves sends its FIN last (an even epoch), so
   * a connection whose last frame is a data frame of a reader epoch (odd) belonged to a thread that
   * died on the route (terminate, an uncaught error): everything it sent has been read, which is
   * what a FIN vouches for, so its end is taken for that FIN, consumed in order behind its frames.
   * The handBack then counts it, and the channel host releases the frames of that thread id's next
   * epoch (route-sender.ts: the next thread with the id goes on there).
   */
  #onSenderConnectionEnd(reading: EndpointReading, src: number, lastSeq: number): void {
    if (lastSeq < 0 || !isRouteTagged(lastSeq) || (tagEpoch(lastSeq) & 1) !== PATH_READER || this.#destroyed) return;
    const thread = tagThread(lastSeq);
    const fin = tagEpoch(lastSeq) + 1;
    const local = reading.endpoint - this.#first;
    // Once per (process, thread, epoch): the FIN may be in already (its words say so), and a thread's
    // other connections to this socket end too.
    const key = `${src}:${thread}:${fin}`;
    if (this.#shared.routes!.markWord(src, thread, local).get() >= fin || reading.finsTaken.has(key)) return;
    reading.finsTaken.add(key);
    this.#opts.log.warn({ endpoint: reading.endpoint, epoch: reading.epoch, peer: src, thread, tagEpoch: fin - 1 }, 'endpoint reader: a sender thread\'s connection ended without its FIN (the thread died); its end is taken for the FIN');
    const h = newFrameHeader();
    h.kind = FRAME_KIND.CONTROL;
    h.srcEndpoint = src * this.#opts.endpointsPerProcess;
    h.dstEndpoint = reading.endpoint;
    h.seq = routeTag(thread, fin);
    h.aux = ROUTE_CONTROL.MARK;
    this.#intakes.offer(src, h, EMPTY, true);
  }

  /** A mark consumed here: on a reader's socket it is a sender's FIN. */
  readonly #onMarkConsumed = (srcProcess: number, mark: FrameHeader): void => {
    const dstEndpoint = mark.dstEndpoint;
    const reading = this.#reading?.endpoint === dstEndpoint ? this.#reading : this.#closingReadings.get(dstEndpoint);
    // Only a reader's device consumes marks for an endpoint it reads: it hosts no channel (an
    // engine or inline progress's main thread does, and never reads), so its marks are FINs.
    if (reading === undefined || reading === null) return;
    reading.fins[srcProcess]!++;
    reading.onFin?.();
  };

  // --- sending on routes (docs/adr/0019) ----------------------------------------------

  /**
   * Sends data frame `h` to remote process `proc` on the path this thread's route to h.dstEndpoint
   * takes now (RouteSender), with the switch mark first on the path it leaves and the route's tag in
   * `seq`: on the reader's socket (true; a route joins a reader only once its connection is open,
   * and `sentToken`, if >= 0, is told when the frame is written), or false: the caller sends it on
   * the engine path (RoutedPath: the inner SendPath's first).
   */
  send(proc: number, h: FrameHeader, payload: Uint8Array | null, call: string, sentToken: number): boolean {
    const step = this.#routeSender!.next(h.dstEndpoint, this.#mayJoin);
    h.seq = step.tag;
    if (step.mark) this.#sendMark(proc, h.srcEndpoint, h.dstEndpoint, step, call);
    if (step.path !== PATH_READER) return false;
    const path = this.#readerPath(proc, h.dstEndpoint, step.readerEpoch);
    path.carried = true;
    path.transport.send(proc, h, payload, sentToken);
    this.#framesToReaders++;
    this.#watchRoutes();
    return true;
  }

  /** The reused header of a switch mark from `src` to `d` carrying the route tag `tag` (aux2 0: the caller sets what its path needs). */
  #markHeader(src: number, d: number, tag: number): FrameHeader {
    const m = this.#markHdr;
    m.kind = FRAME_KIND.CONTROL;
    m.flags = 0;
    m.contextId = 0;
    m.srcEndpoint = src;
    m.dstEndpoint = d;
    m.tag = 0;
    m.seq = tag;
    m.aux = ROUTE_CONTROL.MARK;
    m.aux2 = 0;
    m.payloadLength = 0;
    return m;
  }

  /**
   * A transport that listens on the same-host socket `listenName` (an endpoint reader's)
   * and delivers what it reads as the engine's would; `countFrame` runs for each data frame (not
   * control), `onConnectionEnd` when a sending thread's connection ends.
   */
  #listeningTransport(
    listenName: string, logFields: Record<string, unknown>, countFrame: () => void,
    onConnectionEnd: (src: number, lastSeq: number) => void,
  ): Transport {
    const o = this.#opts;
    return o.transportFactory!({
      process: o.process,
      processCount: o.processCount,
      channelCount: o.channels,
      endpointsPerProcess: o.endpointsPerProcess,
      jobKey: o.jobKey,
      listenHost: o.listenHost,
      listenName,
      maxUnsolicitedPayloadBytes: o.eagerLimit,
      log: o.log.child({ mod: 'transport', ...logFields }),
      handlers: {
        onDeliver: (src, header, payload) => {
          if (header.kind !== FRAME_KIND.CONTROL) countFrame();
          this.#host.deliver(src, header, payload);
        },
        onSent: (token) => this.#host.sent(token),
        onPeerLost: (proc, err) => this.#host.peerLost(proc, err),
        payloadTarget: (src, header) => this.#host.payloadTarget(src, header),
        onThreadConnectionEnd: onConnectionEnd,
      },
    });
  }

  /** The switch mark of `step` on the path it leaves; leaving a reader's socket (the FIN) ends this thread's connection to it. */
  #sendMark(proc: number, src: number, d: number, step: SendStep, call: string): void {
    const m = this.#markHeader(src, d, step.tag);
    if (step.markPath !== PATH_READER) {
      this.#host.out(proc, m, null, call);
      return;
    }
    const path = this.#readerPath(proc, d, step.markReaderEpoch);
    path.carried = true;
    path.transport.send(proc, m, null, -1);
    this.#readerPaths.delete(d);
    // close() sends what is queued first; the reader takes the connection's end for no loss.
    path.transport.close().catch((err: unknown) => this.#opts.log.warn({ endpoint: d, epoch: path.epoch, err: (err as Error).message }, 'endpoint route: closing a connection to a reader failed'));
  }

  /**
   * RouteSender's mayJoin: whether this thread's connection to the reader of `d` in `epoch` carries
   * frames yet. The first ask starts it (open(): connect and handshake, on this thread's event loop)
   * and says no, so the frame takes the engine path; once open() resolved the thread joins at its
   * next frame. A thread that computes right after sending has sent everything on the engine path.
   */
  readonly #mayJoin = (d: number, epoch: number): boolean => {
    const path = this.#readerPath(this.#host.processOf(d), d, epoch);
    this.#watchRoutes();
    return path.ready;
  };

  /**
   * This thread's connection to the reader of remote endpoint `d` in `epoch` (made on first use,
   * opened at once; one of an older epoch that never carried a frame is dropped).
   */
  #readerPath(proc: number, d: number, epoch: number): ReaderPath {
    const known = this.#readerPaths.get(d);
    if (known !== undefined && known.epoch === epoch) return known;
    if (known !== undefined) this.#dropReaderPath(d, known);
    const o = this.#opts;
    return this.#connectPath(this.#readerPaths, d, proc, o.readerSocketName!(o.jobKey, proc, d, epoch), epoch, { toReader: d },
      (p, path, err) => this.#onReaderLost(p, d, path, err));
  }

  /**
   * Makes, records under `key` in `paths` and starts opening this thread's connection to the socket
   * named `address` of process `proc` (a reader's); the path is ready once open() resolved.
   */
  #connectPath(
    paths: Map<number, ReaderPath>, key: number, proc: number, address: string, epoch: number,
    logFields: Record<string, unknown>, onLost: (proc: number, path: ReaderPath, err: TransportError) => void,
  ): ReaderPath {
    const addresses = new Array<string>(this.#opts.processCount).fill('');
    addresses[proc] = address;
    let path: ReaderPath;
    // One channel: every frame of this thread to the socket, whatever endpoint it is attached to, and
    // its FIN (sent from the process's first endpoint) go on one connection, in the order sent; with
    // the job's C channels, channelOf would spread them by source endpoint over connections that
    // the reader reads in no common order (and open() would dial all C of them).
    const transport = this.#host.threadTransport({ mod: 'transport', ...logFields }, (p, err) => onLost(p, path, err), undefined, 1);
    path = { epoch, transport, ready: transport.open === undefined, carried: false, lost: false };
    paths.set(key, path);
    transport.start(addresses);
    if (transport.open !== undefined) {
      void transport.open(proc).then(() => {
        // open() also resolves when the connection failed (onPeerLost has dropped the path then).
        if (paths.get(key) === path) path.ready = true;
      });
    }
    return path;
  }

  /** Drops a connection to a reader that never carried a frame (the route closed, moved on before it was ready, or the thread leaves). */
  #dropReaderPath(d: number, path: ReaderPath): void {
    if (this.#readerPaths.get(d) === path) this.#readerPaths.delete(d);
    // Nothing is queued on it: destroy, as close() could wait on a handshake that needs this thread's loop.
    path.transport.destroy();
  }

  /** This thread's routes to remote readers, for MPI.stats (docs/adr/0019): connections that carry frames, and data frames sent on them. */
  get readerRoutes(): { ready: number; framesSent: number } {
    let ready = 0;
    for (const p of this.#readerPaths.values()) if (p.ready) ready++;
    return { ready, framesSent: this.#framesToReaders };
  }


  /**
   * FINs for every route this thread is on whose reader has closed (`all`: every route, the thread
   * is about to end), each ending its connection: the reader waits for them (handBack).
   */
  leave(all: boolean): void {
    const rs = this.#routeSender;
    if (rs === null) return;
    for (const { d, step } of rs.finish(all)) this.#sendMark(this.#host.processOf(d), this.#first, d, step, 'progress');
    // Connections made for a route this thread never joined: dropped once the route is no longer open in their epoch.
    const routes = this.#shared.routes!;
    for (const [d, path] of [...this.#readerPaths]) {
      if (path.carried) continue;
      const w = routes.route(d);
      if (all || routeState(w) !== ROUTE_STATE.OPEN || routeEpoch(w) !== path.epoch) this.#dropReaderPath(d, path);
    }
  }

  /**
   * While this thread is on a reader's path: one wait on the route-change counter (no event-loop
   * reference), and at each change the FINs of the routes that closed, so a thread that stops
   * sending to an endpoint still lets its reader go.
   */
  #watchRoutes(): void {
    if (this.#watchingRoutes || this.#readerPaths.size === 0) return;
    const routes = this.#shared.routes!;
    this.#watchingRoutes = true;
    const seen = routes.changes();
    // A close recorded between this thread's choice of path and `seen` would not wake the wait.
    this.leave(false);
    void routes.changedAfter(seen).then(() => {
      this.#watchingRoutes = false;
      if (this.#destroyed) return;
      this.leave(false);
      this.#watchRoutes();
    });
  }

  /** The thread is about to end (or the process finalizes): every route left (FINs), then the endpoint it reads handed back. */
  async leaveAll(why: string): Promise<void> {
    this.leave(true);
    await this.handBack(why);
  }

  #onReaderLost(proc: number, d: number, path: ReaderPath, err: TransportError): void {
    if (this.#host.isClosing() || this.#readerPaths.get(d) !== path) return;
    if (!path.carried) {
      // Nothing went out on it: the reader left (or is leaving) before this thread joined; the frames stay on the engine path.
      this.#opts.log.info({ peer: proc, endpoint: d, epoch: path.epoch, code: err.code }, 'endpoint route: a connection to a reader that carried nothing ended; staying on the engine path');
      this.#dropReaderPath(d, path);
      return;
    }
    if (path.lost) return;
    path.lost = true;
    if (err.code !== 'TSMPI_ERR_PEER_CLOSED') {
      this.#opts.log.error({ peer: proc, endpoint: d, code: err.code }, 'endpoint reader lost');
      this.#readerProcessLost(proc, d, err);
      return;
    }
    // The reader's socket ended while its route was open: the reader died (docs/adr/0019 "The reader
    // dies"). That is the route's loss, not yet the process's: the reader's process fails itself,
    // naming the endpoint (its Worker's 'exit' always comes, late), and the end of its other
    // connections then tells this device. Stopping now, as on a lost process, would stop the reader's
    // process in turn, blaming this one, before it could tell (a reader stopped for memory marks
    // nothing first). If the process has not failed after READER_LOSS_GRACE_MS it is taken for lost.
    this.#opts.log.info({ peer: proc, endpoint: d, code: err.code }, 'endpoint reader lost: its route is lost, its process is taken for lost when it fails');
    setTimeout(() => {
      if (!this.#destroyed && !this.#host.isClosing() && this.#host.failure() === null) this.#readerProcessLost(proc, d, err);
    }, READER_LOSS_GRACE_MS).unref();
  }

  /** The reader of remote endpoint `d` is gone and so, for this device, is its process `proc`. */
  #readerProcessLost(proc: number, d: number, err: TransportError): void {
    this.#host.fatal(mpiError(ERR_PROC_FAILED, 'progress', `lost the connection to the reader of endpoint ${d} in process ${proc} (${err.code}: ${err.message})`, err), proc);
  }
}
