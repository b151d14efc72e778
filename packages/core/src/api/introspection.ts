/** MPI.config(), MPI.stats() and comm.stats(): tsmpi's own introspection (API.md "Introspection"). */
import { COMM_STAT, OBJECT_KIND, STAT, STAT_ROW_WORDS } from '../device/index.ts';
import { runtime, type ThreadRuntime } from '../runtime/index.ts';

export interface Config {
  channels: number;
  matching: 'parallel' | 'global';
  refcount: 'naive' | 'predefined' | 'gc';
  progress: 'inline' | 'threads' | 'engines';
  /** How blocking calls wait here: 'poll' only where this thread reads the sockets and can yield its core. */
  wait: 'poll' | 'block';
  eagerLimit: number;
  endpoints: number;
}

export interface Stats {
  messagesSent: number;
  messagesReceived: number;
  bytesSent: number;
  bytesReceived: number;
  unexpectedQueued: number;
  postedQueued: number;
  perChannel: { sent: number; received: number }[];
  contextIdsInUse: number;
  liveObjects: { comm: number; group: number; datatype: number; request: number; op: number };
  gcCycles: number;
  /**
   * The calling thread's routes to remote endpoints' readers (endpointReceive `thread`,
   * docs/adr/0019): `ready`, its connections to readers that carry frames now (a thread joins an
   * open route only once its connection is ready); `framesSent`, data frames it sent on them
   * since init. Zeros when no route is followed.
   */
  readerRoutes: { ready: number; framesSent: number };
}

/**
 * comm.stats(): what this process did on one communicator since it was made (the MPI_T idea), over
 * all its threads and channel engines, counted where MPI.stats() counts its totals.
 */
export interface CommStats {
  /** messages sent on the communicator, its collectives' own messages included, counted as MPI.stats() counts them */
  messagesSent: number;
  /** messages that arrived on it (counted on arrival, as in MPI.stats()) */
  messagesReceived: number;
  bytesSent: number;
  bytesReceived: number;
  /** collective calls (creations of communicators from it included) the calling thread's endpoint started on it */
  collectives: number;
  /** milliseconds the process's threads spent blocked in calls on it (summed over threads: two threads blocked 1 s each give 2000) */
  blockedMs: number;
}

/** The settings in force for this process. */
export function config(): Config {
  const rt = runtime('config');
  const s = rt.settings;
  return { channels: s.channels, matching: s.matching, refcount: s.refcount, progress: rt.progress, wait: rt.waitPoll.isEnabled ? 'poll' : 'block', eagerLimit: s.eagerLimit, endpoints: s.endpoints };
}

/** Counters of this process since init. */
export function stats(): Stats {
  const rt = runtime('stats');
  const d = rt.device;
  const live = liveObjects(rt);
  const perChannel = d.channelStats() ?? Array.from({ length: rt.settings.channels }, () => ({ sent: 0, received: 0 }));
  const { messagesSent, messagesReceived, bytesSent, bytesReceived } = messageTotals(rt);
  return {
    messagesSent, messagesReceived, bytesSent, bytesReceived,
    unexpectedQueued: d.unexpectedQueued(),
    postedQueued: d.postedQueued(),
    perChannel,
    contextIdsInUse: live.comm,
    liveObjects: live,
    gcCycles: d.lifetime.gcCycles(),
    readerRoutes: d.readers.readerRoutes,
  };
}

/**
 * Messages and bytes of this process since init: the sum of every thread's and channel engine's
 * row (a receive completed by an engine counts in the engine's row). MPI.stats() and finalize's
 * report to mpiexec both give these.
 */
export function messageTotals(rt: ThreadRuntime): Pick<Stats, 'messagesSent' | 'messagesReceived' | 'bytesSent' | 'bytesReceived'> {
  const rows = rt.device.shared.stats;
  let messagesSent = 0, messagesReceived = 0, bytesSent = 0, bytesReceived = 0;
  for (let i = 0; i < rows.length; i += STAT_ROW_WORDS) {
    messagesSent += rows[i + STAT.SENT]!;
    messagesReceived += rows[i + STAT.RECEIVED]!;
    bytesSent += rows[i + STAT.BYTES_SENT]!;
    bytesReceived += rows[i + STAT.BYTES_RECEIVED]!;
  }
  return { messagesSent, messagesReceived, bytesSent, bytesReceived };
}

/**
 * Live objects of each kind: object-table records (predefined ones included; under gc, freed
 * objects not yet collected too) and requests started and not yet completed (persistent ones
 * until freed), not request-pool slots.
 */
export function liveObjects(rt: ThreadRuntime): Stats['liveObjects'] {
  const live = rt.device.objects.liveCounts();
  return { comm: live[OBJECT_KIND.COMM], group: live[OBJECT_KIND.GROUP], datatype: live[OBJECT_KIND.DATATYPE], request: rt.device.lifetime.liveRequests(), op: live[OBJECT_KIND.OP] };
}

/** What comm.stats() reads of a communicator (Pt2ptComm's fields). */
interface CountedComm {
  readonly _ctx: number;
  readonly _sendCtx: number;
  readonly _collSeq: number;
}

/**
 * comm.stats() of `comm`: its context's blocks of every statistics row (device/shared-state.ts
 * COMM_STAT; an intercommunicator sends on the remote group's context id, so its sends are read
 * there) and its collective sequence, which every collective call advances by one.
 */
export function commStats(rt: ThreadRuntime, comm: CountedComm): CommStats {
  const shared = rt.device.shared;
  const mine = shared.commCounts(comm._ctx);
  const sent = comm._sendCtx === comm._ctx ? mine : shared.commCounts(comm._sendCtx);
  return {
    messagesSent: sent[COMM_STAT.SENT]!,
    messagesReceived: mine[COMM_STAT.RECEIVED]!,
    bytesSent: sent[COMM_STAT.BYTES_SENT]!,
    bytesReceived: mine[COMM_STAT.BYTES_RECEIVED]!,
    collectives: comm._collSeq >>> 0,
    blockedMs: mine[COMM_STAT.BLOCKED_MS]!,
  };
}
