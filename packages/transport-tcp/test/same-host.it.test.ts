// testlist: { file: 'same-host.it.test.ts', np: [1] } — transports in one process, real Unix-domain and TCP sockets.
// Same-host peers talk over the abstract Unix-domain socket (same-host.ts); a peer without one
// is still reached over TCP; the conformance suite passes with the Unix path turned off too.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { newFrameHeader, transportConformance, type FrameHeader } from '@tsmpi/core/transport';
import { sameHostSocketName } from '../src/same-host.ts';
import { TcpTransport } from '../src/tcp-transport.ts';
import { DEFAULT_TUNING } from '../src/tuning.ts';
import { makeTcpJob, makeTcpTransports, recordingLog, RecordingHandlers as Rec, waitUntil } from './tcp-harness.ts';

const isLinux = process.platform === 'linux';
if (!isLinux) console.log('same-host.it.test.ts: abstract Unix-domain sockets exist only on Linux; the Unix-path tests are skipped');

transportConformance('tcp without same-host sockets', (spec) => makeTcpTransports({ ...spec, tuning: { sameHostUnix: false } }), { describe, it, expect });

function hdr(seq: number): FrameHeader {
  return { ...newFrameHeader(), kind: 1, seq, srcEndpoint: 0, dstEndpoint: 1 };
}

/**
 * Sockets of this machine bound to the abstract name `name`. /proc/net/unix shows a NUL as '@',
 * and Node binds abstract names NUL-padded to the whole sun_path, hence the trailing '@'s.
 */
function unixSocketsNamed(name: string): number {
  const shown = `@${name.slice(1)}`;
  return fs.readFileSync('/proc/net/unix', 'utf8').split('\n')
    .filter((line) => { const at = line.indexOf(` ${shown}`); return at >= 0 && /^@*$/.test(line.slice(at + 1 + shown.length)); }).length;
}

describe.runIf(isLinux)('same-host Unix-domain sockets', () => {
  it('carry the frames between transports that published the same host', async () => {
    const rs = [new Rec(), new Rec()];
    const { transports: ts, addresses } = await makeTcpJob({ processCount: 2, channelCount: 1, handlers: rs, jobKey: 'k1' });
    try {
      const name = sameHostSocketName('k1', addresses[1]!);
      expect(unixSocketsNamed(name), 'process 1 listens on its same-host socket').toBe(1);
      for (let i = 0; i < 5; i++) ts[0]!.send(1, hdr(i), null, -1);
      await waitUntil(() => rs[1]!.seqs.length === 5, 'five frames over the same-host socket', 10_000);
      expect(rs[1]!.seqs).toEqual([0, 1, 2, 3, 4]);
      // The listener plus the connection it accepted carry the name; a TCP connection would not.
      expect(unixSocketsNamed(name), 'the accepted connection is a Unix-domain socket').toBe(2);
    } finally {
      await Promise.all(ts.map((t) => t.close()));
    }
  });

  it('fall back to TCP when the peer has none', async () => {
    const rs = [new Rec(), new Rec()];
    const log = recordingLog();
    const ts = [0, 1].map((process) => new TcpTransport({
      process, processCount: 2, channelCount: 1, jobKey: 'k2', listenHost: '127.0.0.1', log, handlers: rs[process]!,
    }, { ...DEFAULT_TUNING, sameHostUnix: process === 0 }));
    const addresses = await Promise.all(ts.map((t) => t.listen()));
    for (const t of ts) t.start(addresses);
    try {
      expect(unixSocketsNamed(sameHostSocketName('k2', addresses[1]!))).toBe(0);
      for (let i = 0; i < 3; i++) ts[0]!.send(1, hdr(i), null, -1);
      await waitUntil(() => rs[1]!.seqs.length === 3, 'three frames over TCP after the fallback', 10_000);
      expect(rs[1]!.seqs).toEqual([0, 1, 2]);
      expect(rs[0]!.lost).toEqual([]);
      expect(log.records.filter((r) => r.level === 'warn' || r.level === 'error')).toEqual([]);
    } finally {
      await Promise.all(ts.map((t) => t.close()));
    }
  });

  it('are gone once the transport has closed', async () => {
    const { transports: ts, addresses } = await makeTcpJob({ processCount: 1, channelCount: 1, handlers: [new Rec()], jobKey: 'k3' });
    const name = sameHostSocketName('k3', addresses[0]!);
    expect(unixSocketsNamed(name)).toBe(1);
    await ts[0]!.close();
    await waitUntil(() => unixSocketsNamed(name) === 0, 'the same-host listener to close', 10_000);
  });
});
