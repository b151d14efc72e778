// testlist: { file: 'same-host.it.test.ts', np: [1] } — transports in one process, real Unix-domain and TCP sockets.
// Same-host peers talk over the Unix-domain socket in the job's directory of mode 0700 (same-host.ts,
// docs/adr/0029), which a transport publishes only once bound; a peer without one is still reached
// over TCP; a directory that is not safe turns the socket off; a relay between a Unix socket and
// the TCP port fails the handshake; the conformance suite passes with the Unix path turned off too.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader } from '@tsmpi/core/transport';
import { transportConformance } from '@tsmpi/core/transport/kit';
import { formatPublished, parsePublished } from '../src/address.ts';
import { sameHostDirectory, transportSocketPath } from '../src/same-host.ts';
import { TcpTransport } from '../src/tcp-transport.ts';
import { DEFAULT_TUNING } from '../src/tuning.ts';
import { hostPort, jobKeyUsed, makeTcpJob, makeTcpTransports, recordingLog, RecordingHandlers as Rec, waitUntil } from './tcp-harness.ts';

const isLinux = process.platform === 'linux';
const isRoot = process.getuid?.() === 0;
if (!isLinux) console.log('same-host.it.test.ts: the Unix-path tests read /proc/net/unix and run on Linux only');

transportConformance('tcp without same-host sockets', (spec) => makeTcpTransports({ ...spec, tuning: { sameHostUnix: false } }), { describe, it, expect });

function hdr(seq: number): FrameHeader {
  return { ...newFrameHeader(), kind: 1, seq, srcEndpoint: 0, dstEndpoint: 1 };
}

/** Sockets of this machine bound to the file `socketPath` (/proc/net/unix ends their line with it; accepted ones share it). */
function unixSocketsAt(socketPath: string): number {
  return fs.readFileSync('/proc/net/unix', 'utf8').split('\n').filter((line) => line.endsWith(` ${socketPath}`)).length;
}

/** The same-host socket path process `i` published. */
function unixPathOf(addresses: readonly string[], i: number): string | null {
  return parsePublished(addresses[i]!)?.unixPath ?? null;
}

describe.runIf(isLinux)('same-host Unix-domain sockets', () => {
  it('are published once bound, sit in the job\'s directory of mode 0700, and carry the frames between transports of one host', async () => {
    const rs = [new Rec(), new Rec()];
    const { transports: ts, addresses } = await makeTcpJob({ processCount: 2, channelCount: 1, handlers: rs, jobKey: 'k1' });
    try {
      const p = unixPathOf(addresses, 1);
      expect(p).toBe(transportSocketPath('k1', 1, hostPort(addresses[1]!).port));
      const dir = fs.lstatSync(sameHostDirectory('k1'));
      expect(dir.isDirectory() && dir.uid === process.getuid!() && (dir.mode & 0o777) === 0o700, 'a directory of ours, mode 0700').toBe(true);
      expect(fs.lstatSync(p!).isSocket()).toBe(true);
      expect(unixSocketsAt(p!), 'process 1 listens on its same-host socket').toBe(1);
      for (let i = 0; i < 5; i++) ts[0]!.send(1, hdr(i), null, -1);
      await waitUntil(() => rs[1]!.seqs.length === 5, 'five frames over the same-host socket', 10_000);
      expect(rs[1]!.seqs).toEqual([0, 1, 2, 3, 4]);
      // The listener plus the connection it accepted carry the path; a TCP connection would not.
      expect(unixSocketsAt(p!), 'the accepted connection is a Unix-domain socket').toBe(2);
    } finally {
      await Promise.all(ts.map((t) => t.close()));
    }
  });

  it('fall back to TCP when the peer published none', async () => {
    const rs = [new Rec(), new Rec()];
    const log = recordingLog();
    const ts = [0, 1].map((process) => new TcpTransport({
      process, processCount: 2, channelCount: 1, jobKey: jobKeyUsed('k2'), listenHost: '127.0.0.1', log, handlers: rs[process]!,
    }, { ...DEFAULT_TUNING, sameHostUnix: process === 0 }));
    const addresses = await Promise.all(ts.map((t) => t.listen()));
    for (const t of ts) t.start(addresses);
    try {
      expect(unixPathOf(addresses, 0)).not.toBe(null);
      expect(unixPathOf(addresses, 1), 'nothing bound, nothing published').toBe(null);
      for (let i = 0; i < 3; i++) ts[0]!.send(1, hdr(i), null, -1);
      await waitUntil(() => rs[1]!.seqs.length === 3, 'three frames over TCP', 10_000);
      expect(rs[1]!.seqs).toEqual([0, 1, 2]);
      expect(rs[0]!.lost).toEqual([]);
      expect(log.records.filter((r) => r.level === 'warn' || r.level === 'error')).toEqual([]);
    } finally {
      await Promise.all(ts.map((t) => t.close()));
    }
  });

  it('are gone once the transport has closed', async () => {
    const { transports: ts, addresses } = await makeTcpJob({ processCount: 1, channelCount: 1, handlers: [new Rec()], jobKey: 'k3' });
    const p = unixPathOf(addresses, 0)!;
    expect(unixSocketsAt(p)).toBe(1);
    await ts[0]!.close();
    expect(fs.existsSync(p), 'the socket file is removed').toBe(false);
    await waitUntil(() => unixSocketsAt(p) === 0, 'the same-host listener to close', 10_000);
  });

  it.runIf(isRoot)('are off, with a warning, when another user made the job\'s directory first; the peers then use TCP', async () => {
    const key = jobKeyUsed(`squatted-${process.pid}`);
    const dir = sameHostDirectory(key);
    fs.mkdirSync(dir, { mode: 0o777 });
    fs.chmodSync(dir, 0o777);
    fs.chownSync(dir, 65534, 65534);
    const rs = [new Rec(), new Rec()];
    const log = recordingLog();
    try {
      const { transports: ts, addresses } = await makeTcpJob({ processCount: 2, channelCount: 1, handlers: rs, jobKey: key, log });
      try {
        expect(addresses.map((_, i) => unixPathOf(addresses, i)), 'no same-host socket published').toEqual([null, null]);
        expect(fs.readdirSync(dir), 'nothing bound in the stranger\'s directory').toEqual([]);
        const warns = log.records.filter((r) => r.level === 'warn');
        expect(warns.map((r) => r.msg)).toEqual(Array(2).fill('no same-host socket; the processes on this host connect to this one over TCP'));
        expect(String((warns[0]!.obj as { err: string }).err)).toMatch(/belongs to uid 65534, not to this user/);
        for (let i = 0; i < 3; i++) ts[0]!.send(1, hdr(i), null, -1);
        await waitUntil(() => rs[1]!.seqs.length === 3, 'three frames over TCP', 10_000);
        expect(rs[1]!.seqs).toEqual([0, 1, 2]);
      } finally {
        await Promise.all(ts.map((t) => t.close()));
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fail the handshake when a relay carries a Unix-socket connection to the TCP port: no frame arrives', async () => {
    const rs = [new Rec(), new Rec()];
    const log = recordingLog();
    const { transports: ts, addresses } = await makeTcpJob({ processCount: 2, channelCount: 1, handlers: rs, jobKey: 'k4', log });
    // A relay on a Unix socket of its own, forwarding every byte both ways to process 1's TCP port,
    // and process 0 told (as if published) that process 1's same-host socket is the relay's.
    const relayDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-'));
    const relayPath = path.join(relayDir, 's');
    const carried: Buffer[] = [];
    const relay = net.createServer((inbound) => {
      const out = net.connect(hostPort(addresses[1]!));
      inbound.on('data', (d) => carried.push(d));
      inbound.pipe(out).pipe(inbound);
      inbound.on('error', () => out.destroy());
      out.on('error', () => inbound.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(relayPath, resolve));
    try {
      const lying = [...addresses];
      lying[1] = formatPublished(parsePublished(addresses[1]!)!.tcpText, relayPath);
      ts[0]!.start(lying);
      ts[0]!.send(1, hdr(7), Uint8Array.of(1, 2, 3), -1);
      await waitUntil(() => rs[0]!.lost.length === 1, 'the sender to give up on the relayed connection', 10_000);
      expect(rs[0]!.lost).toEqual([{ process: 1, code: 'TSMPI_ERR_HANDSHAKE' }]);
      expect(carried.length, 'the connection went through the relay').toBeGreaterThan(0);
      expect(rs[1]!.seqs, 'nothing delivered').toEqual([]);
      const refusals = log.records.filter((r) => r.msg === 'refused a connection that failed the handshake');
      expect(refusals.map((r) => (r.obj as { reason: string; listener: string }).reason)).toEqual(['job key proof does not match']);
      expect((refusals[0]!.obj as { listener: string }).listener).toBe(`tcp ${parsePublished(addresses[1]!)!.tcpText}`);
    } finally {
      for (const t of ts) t.destroy();
      await new Promise((resolve) => relay.close(resolve));
      fs.rmSync(relayDir, { recursive: true, force: true });
    }
  });
});
