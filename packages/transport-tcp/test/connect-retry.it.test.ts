// testlist: { file: 'connect-retry.it.test.ts', np: [1] } — transports in one process, real sockets on 127.0.0.1.
// Failure detection across hosts (issue 11): a refused connect is retried with
// backoff, gives up after tuning.connectRetryMs with a lost peer, and every
// listener honours a port range (mpiexec --port-range).
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader } from '@tsmpi/core/transport';
import { TcpTransport } from '../src/tcp-transport.ts';
import { DEFAULT_TUNING } from '../src/tuning.ts';
import { parsePublished } from '../src/address.ts';
import { jobKeyUsed, recordingLog, RecordingHandlers as Rec, waitUntil as waitFor } from './tcp-harness.ts';

/** This file's patience for a condition (a hang fails with a message, never a timeout of the runner). */
const waitUntil = (cond: () => boolean, what: string, timeoutMs = 15_000): Promise<void> => waitFor(cond, what, timeoutMs);

/** A port that was free a moment ago (listen on 0, close). */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Whether `port` can be listened on now (listen, close). */
async function canListen(port: number): Promise<boolean> {
  const s = net.createServer();
  const ok = await new Promise<boolean>((r) => {
    s.once('error', () => r(false));
    s.listen(port, '127.0.0.1', () => r(true));
  });
  if (ok) await new Promise<void>((r) => s.close(() => r()));
  return ok;
}

/**
 * The first of `n` consecutive ports that were all free a moment ago, below Linux's ephemeral range
 * (32768 up): ports next to an ephemeral one are taken at any moment by the outgoing connections of
 * tests running beside this one (CI saw a whole --port-range taken that way).
 */
async function freeRange(n: number): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const lo = 20_000 + Math.floor(Math.random() * 12_000);
    let all = true;
    for (let p = lo; p < lo + n && all; p++) all = await canListen(p);
    if (all) return lo;
  }
  throw new Error(`no ${n} consecutive free ports found in 20000-32000`);
}

function transport(process: number, rec: Rec, extra: { listenPorts?: { lo: number; hi: number } } = {}, retryMs = 10_000): TcpTransport {
  return new TcpTransport(
    { process, processCount: 2, channelCount: 1, jobKey: jobKeyUsed('k'), listenHost: '127.0.0.1', log: recordingLog(), handlers: rec, ...extra },
    { ...DEFAULT_TUNING, connectRetryMs: retryMs, connectRefusedRetryMs: retryMs },
  );
}

const hdr = (seq: number): FrameHeader => ({ ...newFrameHeader(), kind: 1, seq, srcEndpoint: 0, dstEndpoint: 0 });

describe('tcp transport: connect retry, keep-alive and port range', () => {
  it('retries a refused connect until the peer listens, then delivers in order', async () => {
    const port = await freePort();
    const rs = [new Rec(), new Rec()];
    const a = transport(0, rs[0]!);
    const b = transport(1, rs[1]!, { listenPorts: { lo: port, hi: port } });
    try {
      const addrA = await a.listen();
      a.start([addrA, `127.0.0.1:${port}`]); // b is not listening yet: connects are refused
      a.send(1, hdr(1), null, -1);
      a.send(1, hdr(2), null, -1);
      await new Promise((r) => setTimeout(r, 300));
      expect(rs[0]!.lost).toEqual([]); // still retrying, not lost
      expect(parsePublished(await b.listen())?.tcpText).toBe(`127.0.0.1:${port}`);
      b.start([addrA, `127.0.0.1:${port}`]);
      await waitUntil(() => rs[1]!.seqs.length === 2, 'delivery after the retry');
      expect(rs[1]!.seqs).toEqual([1, 2]);
      expect(rs[0]!.lost).toEqual([]);
    } finally {
      a.destroy();
      b.destroy();
    }
  });

  it('gives up after connectRetryMs and reports the peer lost (TSMPI_ERR_CONNECT)', async () => {
    const port = await freePort();
    const rec = new Rec();
    const a = transport(0, rec, {}, 400);
    try {
      const addrA = await a.listen();
      a.start([addrA, `127.0.0.1:${port}`]);
      a.send(1, hdr(1), null, -1);
      await waitUntil(() => rec.lost.length === 1, 'the peer to be reported lost');
      expect(rec.lost).toEqual([{ process: 1, code: 'TSMPI_ERR_CONNECT' }]);
    } finally {
      a.destroy();
    }
  });

  it('close() during a retry wait resolves', async () => {
    const port = await freePort();
    const a = transport(0, new Rec());
    const addrA = await a.listen();
    a.start([addrA, `127.0.0.1:${port}`]);
    a.send(1, hdr(1), null, -1);
    await new Promise((r) => setTimeout(r, 100));
    await a.close(); // would time out (and the test with it) if the retry kept a socket counted
    expect(true).toBe(true);
  });

  it('listens inside --port-range and skips ports that are taken', async () => {
    const lo = await freeRange(4);
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(lo, '127.0.0.1', () => r()));
    const ts: TcpTransport[] = [];
    try {
      const range = { lo, hi: lo + 3 };
      const addresses: string[] = [];
      for (let p = 0; p < 2; p++) {
        const t = transport(p, new Rec(), { listenPorts: range });
        ts.push(t);
        addresses.push(await t.listen());
      }
      for (const a of addresses) {
        const port = parsePublished(a)!.tcp.port;
        expect(port).toBeGreaterThan(lo); // lo is taken
        expect(port).toBeLessThanOrEqual(lo + 3);
      }
      const full = transport(0, new Rec(), { listenPorts: { lo, hi: lo } });
      await expect(full.listen()).rejects.toThrow(/no free port in --port-range/);
    } finally {
      for (const t of ts) t.destroy();
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });

  it('turns on TCP keep-alive on every connection', async () => {
    const calls: boolean[] = [];
    const orig = net.Socket.prototype.setKeepAlive;
    net.Socket.prototype.setKeepAlive = function (this: net.Socket, enable?: boolean, delay?: number) {
      calls.push(enable === true && delay === DEFAULT_TUNING.keepAliveMs);
      return orig.call(this, enable, delay);
    };
    const rs = [new Rec(), new Rec()];
    const a = transport(0, rs[0]!);
    const b = transport(1, rs[1]!);
    try {
      const addrs = [await a.listen(), await b.listen()];
      a.start(addrs);
      b.start(addrs);
      a.send(1, hdr(7), null, -1);
      await waitUntil(() => rs[1]!.seqs.length === 1, 'delivery');
      expect(calls.length).toBeGreaterThanOrEqual(2); // the outbound and the accepted socket
      expect(calls.every((c) => c)).toBe(true);
    } finally {
      net.Socket.prototype.setKeepAlive = orig;
      a.destroy();
      b.destroy();
    }
  });
});
