// testlist: { file: 'add-peers.it.test.ts', np: [1] } — transports in one process, real loopback sockets.
// Transport.addPeers (interface.ts; dynamic processes, docs/adr/0040-dynamic-processes.md): a
// process that started before a peer existed learns the peer's address later and reaches it;
// until then a send to it is a lost peer, never a hang.
import { describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader } from '@tsmpi/core/transport';
import { TcpTransport } from '../src/tcp-transport.ts';
import { recordingLog, RecordingHandlers as Rec, waitUntil } from './tcp-harness.ts';

const JOB = { processCount: 3, channelCount: 1, endpointsPerProcess: 1, listenHost: '127.0.0.1', jobKey: 'add-peers' } as const;

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
});
