/** MPI.config() and MPI.stats(): tsmpi's own introspection (API.md "Introspection"). */
import { OBJECT_KIND, STAT } from '../device/index.ts';
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
  for (let i = 0; i < rows.length; i += STAT.WORDS) {
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
