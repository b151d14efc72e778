// testlist: { file: 'add-peers.it.test.ts', np: [1] } — transports in one process, real loopback sockets.
// Transport.addPeers (interface.ts; dynamic processes, docs/adr/0040-dynamic-processes.md): a
// process that started before a peer existed learns the peer's address later and reaches it;
// until then a send to it is a lost peer, never a hang. A coupled job's process under channel engines
// (docs/adr/0043-connect-two-jobs.md, ForeignPeer.channelAddresses) is dialled per channel at that channel's engine.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader } from '@tsmpi/core/transport';
import { TcpTransport } from '../src/tcp-transport.ts';
import { jobKeyUsed, recordingLog, RecordingHandlers as Rec, waitUntil } from './tcp-harness.ts';

// Job keys name the same-host directories (same-host.ts): jobKeyUsed has the harness remove them after the file,
// and a per-run suffix keeps this run's apart from another checkout's run of the same file on the machine.
const RUN = randomBytes(4).toString('hex');
const JOB = { processCount: 3, channelCount: 1, endpointsPerProcess: 1, listenHost: '127.0.0.1', jobKey: jobKeyUsed(`add-peers-${RUN}`) } as const;

function hdr(seq: number, dst: number): FrameHeader {
  return { ...newFrameHeader(), kind: 1, seq, srcEndpoint: 0, dstEndpoint: dst };
}

describe('TcpTransport.addPeers', () => {
  it('reaches a process whose address came after start, in both directions', async () => {
    const got0 = new Rec();
    const got2 = new Rec();
    const t0 = new TcpTransport({ ...JOB, process: 0, log: recordingLog(), handlers: got0 });
    const a0 = await t0.listen();
    // Process 2 joins later: it knows process 0 from the start; 0 learns 2 by addPeers.
    t0.start([a0, '', '']);
    const t2 = new TcpTransport({ ...JOB, process: 2, log: recordingLog(), handlers: got2 });
    const a2 = await t2.listen();
    t2.start([a0, '', a2]);
    try {
      t0.addPeers(['', '', a2]);
      for (let i = 0; i < 5; i++) t0.send(2, hdr(i, 2), Uint8Array.of(i), -1);
      await waitUntil(() => got2.seqs.length === 5, 'five frames at process 2', 20_000);
      expect(got2.seqs).toEqual([0, 1, 2, 3, 4]);
      t2.send(0, { ...hdr(9, 0), srcEndpoint: 2 }, Uint8Array.of(9), -1);
      await waitUntil(() => got0.seqs.length === 1, 'the answer at process 0', 20_000);
      expect(got0.seqs).toEqual([9]);
    } finally {
      t2.destroy();
      t0.destroy();
    }
  });

  it('dials a coupled job\'s process on channel c at its engine c (ForeignPeer.channelAddresses), proving the pair key', async () => {
    // Job A: one inline process owning both channels (its number 0; B's process 0 is its 1). Job B: process 0 under
    // channel engines, one transport per channel (A's process 0 is its 1). J = 2, so A's two endpoints use both channels.
    const C = { processCount: 2, channelCount: 2, endpointsPerProcess: 2, listenHost: '127.0.0.1' } as const;
    const pairKey = 'p'.repeat(64);
    const gotA = new Rec();
    const got = [new Rec(), new Rec()];
    const a = new TcpTransport({ ...C, process: 0, jobKey: jobKeyUsed(`job-a-${RUN}`), log: recordingLog(), handlers: gotA });
    const engines = [0, 1].map((c) => new TcpTransport({ ...C, process: 0, jobKey: jobKeyUsed(`job-b-${RUN}`), channels: [c], log: recordingLog(), handlers: got[c]! }));
    const aAddr = await a.listen();
    const eAddr = await Promise.all(engines.map((e) => e.listen()));
    a.start([aAddr, '']);
    for (const e of engines) e.start(['', '']);
    try {
      a.addPeers(['', eAddr[0]!], new Map([[1, { key: pairKey, asProcess: 1, theirProcess: 0, channelAddresses: eAddr }]]));
      for (const e of engines) e.addPeers(['', aAddr], new Map([[1, { key: pairKey, asProcess: 1, theirProcess: 0 }]]));
      // channelOf(s, d, 2, 2) = (s div 2 + d div 2 + min(s, d) mod 2) mod 2: endpoint 0 -> 2 is channel 1, endpoint 1 -> 2 channel 0.
      a.send(1, { ...hdr(10, 2), srcEndpoint: 0 }, Uint8Array.of(1), -1);
      a.send(1, { ...hdr(20, 2), srcEndpoint: 1 }, Uint8Array.of(2), -1);
      await waitUntil(() => got[0]!.seqs.length === 1 && got[1]!.seqs.length === 1, 'one frame at each engine', 20_000);
      expect([got[0]!.seqs, got[1]!.seqs]).toEqual([[20], [10]]);
      expect(gotA.lost).toEqual([]);
    } finally {
      for (const e of engines) e.destroy();
      a.destroy();
    }
  });
});
