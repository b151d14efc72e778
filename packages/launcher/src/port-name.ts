/**
 * Port names (MPI.openPort's strings; docs/adr/0043-connect-two-jobs.md): what they hold, and how much of one
 * may be shown. A port name is a capability: `tsmpi-port:JOB@HOST:PORT:SECRET`, or under mpiexec --secure
 * `tsmpi-tls-port:JOB@HOST:PORT:SECRET` (the other job must run with --secure too, and the port link runs TLS
 * keyed by SECRET). JOB is the opening mpiexec's random 64-bit tag (not secret: it tells another job's port
 * from a closed one), HOST:PORT its wire-up service (absent when the job has none to offer), SECRET a random
 * 128-bit token. SECRET is never written to a log or an error text: those show the public part only.
 */

/** The prefix of a port of a job without --secure. */
const PLAIN_PREFIX = 'tsmpi-port:';
/** The prefix of a port of a job run with --secure. */
const TLS_PREFIX = 'tsmpi-tls-port:';
/** Its kind, its job tag, the accepting mpiexec's wire-up address (absent in a port of a job without one), its secret. */
const PORT_NAME = /^tsmpi-(tls-)?port:([0-9a-f]{16})(?:@(\S+:\d{1,5}))?:([0-9a-f]{32})$/;

/** A port name's parts. */
export interface PortName {
  /** The opening job runs with --secure. */
  readonly isSecure: boolean;
  readonly jobTag: string;
  /** "host:port" of the opening mpiexec's wire-up service, or null. */
  readonly address: string | null;
  readonly secret: string;
}

/** A new port name of the job tagged `jobTag`. */
export function formatPortName(isSecure: boolean, jobTag: string, address: string | null, secret: string): string {
  return `${isSecure ? TLS_PREFIX : PLAIN_PREFIX}${jobTag}${address === null ? '' : `@${address}`}:${secret}`;
}

/** The parts of `port`, or null when it is not a port name of this shape. */
export function parsePortName(port: unknown): PortName | null {
  const m = typeof port === 'string' ? PORT_NAME.exec(port) : null;
  if (m === null) return null;
  return { isSecure: m[1] !== undefined, jobTag: m[2]!, address: m[3] ?? null, secret: m[4]! };
}

/** A port name without its secret (what anyone may know of it: the kind, the job tag and the address), for mpiexec's own lines. */
export function publicPort(port: string): string {
  const p = parsePortName(port);
  return p === null ? '(unknown)' : `${p.isSecure ? TLS_PREFIX : PLAIN_PREFIX}${p.jobTag}${p.address === null ? '' : `@${p.address}`}`;
}

/** `port` as error texts name it: a port name without its secret; anything else cut to 200 characters. */
export function describePort(port: unknown): string {
  if (typeof port !== 'string') return `port ${typeof port}`;
  if (parsePortName(port) !== null) return `port "${publicPort(port)}:(secret)"`;
  return `port "${port.length > 200 ? `${port.slice(0, 200)}...` : port}"`;
}
