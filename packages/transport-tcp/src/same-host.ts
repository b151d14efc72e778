/**
 * Same-host connections over Unix-domain sockets (docs/adr/0012).
 *
 * Besides its TCP listener, a transport listens on an abstract Unix-domain
 * socket (Linux only: a name in the kernel's abstract namespace, no file to
 * create or remove, gone when the listener closes). The name is derived from
 * the job key and the transport's published "host:port", so a peer computes it
 * from what it already has and the address format stays as it is:
 *
 *   "\0tsmpi-" + HMAC-SHA256(jobKey, "unix")[0..12) as hex + "-" + address
 *
 * A connecting transport dials that name instead of TCP when the peer
 * published the same host (an IP literal) as itself (one host, or at least one network
 * namespace: abstract names are scoped by network namespace, as loopback is).
 * If the name is not there (the peer could not listen on it) the connection
 * falls back to TCP once, before any handshake byte. The job-key handshake
 * runs on the Unix socket exactly as on TCP, so a process squatting a name
 * learns nothing and is refused.
 *
 * Why: raw Node, same machine and run, 5 interleaved rounds (adr 0012): a
 * 32-byte ping-pong took 18.6 us per round trip over a Unix socket against
 * 23.1 over TCP loopback, and 12-frame batches ran at 0.339 against 0.278 M
 * frames/s (medians): a Unix socket skips the TCP/IP stack in the kernel.
 */
import { createHmac } from 'node:crypto';
import net from 'node:net';

/** Whether abstract Unix-domain socket names exist on this platform. */
export const HAS_ABSTRACT_SOCKETS = process.platform === 'linux';

/** The abstract socket name of the transport that published `address` in the job keyed `jobKey`. */
export function sameHostSocketName(jobKey: string, address: string): string {
  return `\0tsmpi-${jobTag(jobKey)}-${address}`;
}

/**
 * The abstract socket name of the reader of endpoint `endpoint` of process `process`, in its
 * `epoch`-th reading (docs/adr/0019, proposed; core's readers listen on it): a sender computes it
 * from what it knows, as it does the transport's own name, so nothing is published. The epoch
 * keeps a sender that still knows an old reader from reaching a new one by its name.
 */
export function readerSocketName(jobKey: string, process: number, endpoint: number, epoch: number): string {
  return `\0tsmpi-${jobTag(jobKey)}-reader-${process}-${endpoint}-${epoch}`;
}

/** The part of every same-host name that says whose job it is: derived from the job key, never the key itself. */
function jobTag(jobKey: string): string {
  return createHmac('sha256', jobKey).update('unix').digest('hex').slice(0, 24);
}

/**
 * Whether a peer that published `peerHost` runs on this transport's host (it published `ownHost`).
 * Only IP literals count: a host name (published for a wildcard listen address) can be shared
 * by two hosts (mpiexec --same-name), and the same name and port there would reach the wrong
 * process of the job.
 */
export function isSameHost(ownHost: string | null, peerHost: string): boolean {
  return ownHost !== null && ownHost === peerHost && net.isIP(peerHost) !== 0;
}
