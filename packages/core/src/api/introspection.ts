/** MPI.config() and MPI.stats(): tsmpi's own introspection (API.md "Introspection"). */
import { runtime } from './runtime.ts';

export interface Config {
  channels: number;
  matching: 'parallel' | 'global';
  refcount: 'naive' | 'predefined' | 'gc';
  progress: 'inline' | 'threads';
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
}

/** The settings in force for this process. */
export function config(): Config {
  const rt = runtime('config');
  const s = rt.settings;
  return { channels: s.channels, matching: s.matching, refcount: s.refcount, progress: rt.progress, eagerLimit: s.eagerLimit, endpoints: s.endpoints };
}

/** Counters of this process since init. */
export function stats(): Stats {
  const rt = runtime('stats');
  const d = rt.device;
  const perChannel = d.transport?.channelStats() ?? Array.from({ length: rt.settings.channels }, () => ({ sent: 0, received: 0 }));
  return {
    ...d.stats,
    unexpectedQueued: d.unexpectedQueued(),
    postedQueued: d.postedQueued(),
    perChannel,
    contextIdsInUse: 4,
    liveObjects: { comm: 4, group: 0, datatype: 0, request: d.table.inUse(), op: 0 },
    gcCycles: 0,
  };
}
