// testlist: { file: 'secure.it.test.ts', np: [1] } — transports in one process over real TCP sockets with TLS (mpiexec --secure).
// TransportOptions.secure (job-tls-socket.ts, docs/adr/0034-secure-option-tls-psk.md): the conformance suite over TLS; frames
// with payloads arrive intact; a peer with another key, or without --secure, fails the TLS handshake
// with an error that names it, and the listener logs a stranger's attempt with its address; a raw
// stranger speaking the connection handshake in clear gets nothing.
import net from 'node:net';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { jobTlsClientOptions, newFrameHeader, type FrameHeader, type TransportError, type TransportHandlers } from '@tsmpi/core/transport';
import { transportConformance } from '@tsmpi/core/transport/kit';
import { TcpTransport } from '../src/tcp-transport.ts';
import { DEFAULT_TUNING } from '../src/tuning.ts';
import { hostPort, jobKeyUsed, makeTcpJob, makeTcpTransports, recordingLog, waitUntil } from './tcp-harness.ts';

// Same-host sockets off: every connection here is TCP, so every one runs TLS.
transportConformance('tcp with TLS keyed by the job (secure)', (spec) => makeTcpTransports({ ...spec, secure: true, tuning: { sameHostUnix: false } }), { describe, it, expect });

const KEY_A = 'aa'.repeat(32);
const KEY_B = 'bb'.repeat(32);

class Rec implements TransportHandlers {
  payloads: Uint8Array[] = [];
  lost: { process: number; err: TransportError }[] = [];
  onDeliver(_src: number, _h: FrameHeader, payload: Uint8Array): void {
    this.payloads.push(payload.slice());
  }
  onSent(): void {}
  onPeerLost(process: number, err: TransportError): void {
    this.lost.push({ process, err });
  }
}

function hdr(seq: number): FrameHeader {
  return { ...newFrameHeader(), kind: 1, seq, srcEndpoint: 0, dstEndpoint: 1 };
}

/** Two transports on 127.0.0.1 over TCP only, each with its own key and its own secure flag. */
async function pair(a: { key: string; secure: boolean }, b: { key: string; secure: boolean }) {
  const rs = [new Rec(), new Rec()];
  const logs = [recordingLog(), recordingLog()];
  const ts = [a, b].map((o, process) => new TcpTransport({
    process, processCount: 2, channelCount: 1, jobKey: jobKeyUsed(o.key), listenHost: '127.0.0.1', log: logs[process]!, handlers: rs[process]!,
    ...(o.secure ? { secure: true } : {}),
  }, { ...DEFAULT_TUNING, sameHostUnix: false, handshakeTimeoutMs: 3_000 }));
  const addresses = await Promise.all(ts.map((t) => t.listen()));
  for (const t of ts) t.start(addresses);
  return { ts, rs, logs, addresses };
}

describe('TLS keyed by the job (TransportOptions.secure)', () => {
  it('carries frames of every size intact, eager and by reference', async () => {
    const rs = [new Rec(), new Rec()];
    const { transports: ts } = await makeTcpJob({ processCount: 2, channelCount: 2, handlers: rs, jobKey: KEY_A, secure: true, tuning: { sameHostUnix: false } });
    try {
      const sizes = [0, 1, 100, 16 * 1024, 300_000, 4 << 20];
      const sent = sizes.map((n, i) => Uint8Array.from({ length: n }, (_, j) => (j * 31 + i) & 0xff));
      sent.forEach((p, i) => ts[0]!.send(1, hdr(i), p, i));
      await waitUntil(() => rs[1]!.payloads.length === sizes.length, 'every frame over TLS', 30_000);
      expect(rs[1]!.payloads.map((p) => p.length)).toEqual(sizes);
      rs[1]!.payloads.forEach((p, i) => expect(Buffer.from(p).equals(Buffer.from(sent[i]!)), `frame ${i} intact`).toBe(true));
      expect(rs[0]!.lost).toEqual([]);
    } finally {
      await Promise.all(ts.map((t) => t.close()));
    }
  });

  it('a peer with another job key fails the TLS handshake: the dialler names the peer, the listener logs the attempt', async () => {
    const { ts, rs, logs, addresses } = await pair({ key: KEY_A, secure: true }, { key: KEY_B, secure: true });
    try {
      ts[0]!.send(1, hdr(0), new Uint8Array([1, 2, 3]), -1);
      await waitUntil(() => rs[0]!.lost.length === 1, 'process 1 reported lost', 20_000);
      const { process, err } = rs[0]!.lost[0]!;
      expect(process).toBe(1);
      expect(err.code).toBe('TSMPI_ERR_CONNECT');
      const { host, port } = hostPort(addresses[1]!);
      expect(err.message).toContain(`to process 1: TLS handshake with ${host}:${port} failed`);
      expect(err.message).toMatch(/does not hold this job's key, or does not run with --secure/);
      expect(rs[1]!.payloads).toEqual([]);
      await waitUntil(() => logs[1]!.records.some((r) => r.msg.includes('failed the TLS handshake')), 'the listener logs the refusal', 10_000);
      const rec = logs[1]!.records.find((r) => r.msg.includes('failed the TLS handshake'))!.obj as { remoteAddress?: string; listener?: string };
      expect(rec.remoteAddress).toBe('127.0.0.1');
      expect(rec.listener).toBe(`tcp ${host}:${port}`);
    } finally {
      await Promise.all(ts.map((t) => t.close()));
    }
  });

  it('a secure process and a plain one cannot talk, either way round, and say why', async () => {
    for (const [a, b] of [[true, false], [false, true]] as const) {
      const { ts, rs } = await pair({ key: KEY_A, secure: a }, { key: KEY_A, secure: b });
      try {
        ts[0]!.send(1, hdr(0), new Uint8Array([7]), -1);
        await waitUntil(() => rs[0]!.lost.length === 1, 'process 1 reported lost', 20_000);
        expect(rs[1]!.payloads).toEqual([]);
        // The secure dialler says TLS failed; the plain one sees the listener close during the handshake.
        expect(rs[0]!.lost[0]!.err.message).toMatch(a ? /TLS handshake with 127\.0\.0\.1:\d+ failed/ : /handshake|closed|timed out/);
      } finally {
        await Promise.all(ts.map((t) => t.close()));
      }
    }
  });

  it('a stranger with the wrong key, or in clear, gets nothing and the job\'s frames still flow', async () => {
    const rs = [new Rec(), new Rec()];
    const log = recordingLog();
    const { transports: ts, addresses } = await makeTcpJob({ processCount: 2, channelCount: 1, handlers: rs, jobKey: KEY_A, secure: true, log, tuning: { sameHostUnix: false } });
    try {
      const { host, port } = hostPort(addresses[1]!);
      // TLS with another job's key: the handshake fails, nothing of the listener's reaches the stranger.
      const tlsResult = await new Promise<string>((resolve) => {
        const s = tls.connect({ host, port, ...jobTlsClientOptions(KEY_B) });
        s.on('secureConnect', () => resolve('secure'));
        s.on('data', () => resolve('data'));
        s.on('error', (e) => resolve(`error ${e.message}`));
        s.on('close', () => resolve('closed'));
      });
      expect(tlsResult).toMatch(/^(error|closed)/);
      // In clear: the listener's challenge never comes (it speaks TLS only); the stranger is dropped.
      const clear = await new Promise<Buffer>((resolve) => {
        const s = net.connect({ host, port });
        const got: Buffer[] = [];
        s.on('connect', () => s.write(Buffer.alloc(64, 0x41)));
        s.on('data', (d) => got.push(d));
        s.on('error', () => undefined);
        s.on('close', () => resolve(Buffer.concat(got)));
      });
      // Whatever came back is a TLS alert record (content type 21), never the connection handshake's challenge.
      expect(clear.length === 0 || clear[0] === 21).toBe(true);
      for (let i = 0; i < 3; i++) ts[0]!.send(1, hdr(i), new Uint8Array([i]), -1);
      await waitUntil(() => rs[1]!.payloads.length === 3, 'the job\'s frames', 10_000);
      expect(rs[0]!.lost).toEqual([]);
      expect(rs[1]!.lost).toEqual([]);
      await waitUntil(() => log.records.filter((r) => r.msg.includes('failed the TLS handshake')).length >= 2, 'both strangers logged', 10_000);
    } finally {
      await Promise.all(ts.map((t) => t.close()));
    }
  });
});
