/**
 * Builds N TCP transports in this process on 127.0.0.1 (listen, exchange
 * addresses, start): what the device and the wire-up service do in a job.
 */
import { afterAll } from 'vitest';
import type { FrameHeader, TransportHandlers, TransportLog } from '@tsmpi/core/transport';
import { parsePublished, type HostPort } from '../src/address.ts';
import { listenerBinding } from '../src/handshake.ts';
import { removeSameHostDirectory } from '../src/same-host.ts';
import { TcpTransport } from '../src/tcp-transport.ts';
import { DEFAULT_TUNING, type TcpTuning } from '../src/tuning.ts';

/** Job keys of this file's transports: their same-host directories (same-host.ts) go when the file's tests are done. */
const usedKeys = new Set<string>();
afterAll(() => {
  for (const key of usedKeys) removeSameHostDirectory(key);
});

/** Records `jobKey` as used by a transport made outside makeTcpJob (see usedKeys); returns it. */
export function jobKeyUsed(jobKey: string): string {
  usedKeys.add(jobKey);
  return jobKey;
}

/** The TCP host and port of a published address (address.ts), for a raw connection. */
export function hostPort(published: string): HostPort {
  const a = parsePublished(published);
  if (a === null) throw new Error(`not a published address: ${published}`);
  return a.tcp;
}

/** What a raw client's handshake must bind to reach the TCP listener that published `published` (handshake.ts). */
export function tcpListener(published: string): string {
  return listenerBinding('tcp', parsePublished(published)!.tcpText);
}

export interface LogRecord {
  level: string;
  obj: object;
  msg: string;
}

/** A logger that records warn/error (and drops debug/info). */
export function recordingLog(records: LogRecord[] = []): TransportLog & { records: LogRecord[] } {
  return {
    records,
    debug() {},
    info(obj, msg) {
      records.push({ level: 'info', obj, msg });
    },
    warn(obj, msg) {
      records.push({ level: 'warn', obj, msg });
    },
    error(obj, msg) {
      records.push({ level: 'error', obj, msg });
    },
  };
}

/** Handlers that record the sequence numbers delivered and the peers lost. */
export class RecordingHandlers implements TransportHandlers {
  seqs: number[] = [];
  lost: { process: number; code: string }[] = [];
  onDeliver(_src: number, h: FrameHeader): void {
    this.seqs.push(h.seq);
  }
  onSent(): void {}
  onPeerLost(process: number, err: { code: string }): void {
    this.lost.push({ process, code: err.code });
  }
}

/** Polls `cond` every 5 ms; fails naming `what` after `timeoutMs`. */
export async function waitUntil(cond: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Polls `cond` every 5 ms while `progress()` keeps changing; fails naming `what` once it has not
 * changed for `stallMs`. For waits whose length grows with the work and the machine's load: a
 * loaded machine that still moves passes, a stall fails.
 */
export async function waitWhileProgressing(cond: () => boolean, progress: () => number, what: string, stallMs: number): Promise<void> {
  let last = progress();
  let movedAt = Date.now();
  while (!cond()) {
    const now = progress();
    if (now !== last) {
      last = now;
      movedAt = Date.now();
    } else if (Date.now() - movedAt > stallMs) {
      throw new Error(`stalled waiting for ${what}: no progress (at ${now}) for ${stallMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

export async function makeTcpTransports(spec: {
  processCount: number;
  channelCount: number;
  endpointsPerProcess?: number;
  handlers: readonly TransportHandlers[];
  jobKey?: string;
  log?: TransportLog;
  tuning?: Partial<TcpTuning>;
  secure?: boolean;
}): Promise<TcpTransport[]> {
  return (await makeTcpJob(spec)).transports;
}

/** Like makeTcpTransports, also returning the published addresses. */
export async function makeTcpJob(spec: {
  processCount: number;
  channelCount: number;
  endpointsPerProcess?: number;
  handlers: readonly TransportHandlers[];
  jobKey?: string;
  log?: TransportLog;
  tuning?: Partial<TcpTuning>;
  maxUnsolicitedPayloadBytes?: number;
  /** TransportOptions.secure: TLS keyed by the job on every TCP connection. */
  secure?: boolean;
}): Promise<{ transports: TcpTransport[]; addresses: string[] }> {
  const tuning = { ...DEFAULT_TUNING, ...spec.tuning };
  const ts = spec.handlers.map((handlers, process) => new TcpTransport({
    process,
    processCount: spec.processCount,
    channelCount: spec.channelCount,
    jobKey: jobKeyUsed(spec.jobKey ?? 'c0ffee'),
    listenHost: '127.0.0.1',
    log: spec.log ?? recordingLog(),
    handlers,
    ...(spec.maxUnsolicitedPayloadBytes === undefined ? {} : { maxUnsolicitedPayloadBytes: spec.maxUnsolicitedPayloadBytes }),
    ...(spec.endpointsPerProcess === undefined ? {} : { endpointsPerProcess: spec.endpointsPerProcess }),
    ...(spec.secure === true ? { secure: true } : {}),
  }, tuning));
  const addresses = await Promise.all(ts.map((t) => t.listen()));
  for (const t of ts) t.start(addresses);
  return { transports: ts, addresses };
}
