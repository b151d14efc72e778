/** The wire-up protocol's codec, fed raw bytes (no sockets). */
import { pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import {
  decodeClientMessage,
  decodeServerMessage,
  encodeClientMessage,
  encodeServerMessage,
  type ClientMessage,
  type ServerMessage,
} from '@tsmpi/core/pmi';

describe('wire-up protocol', () => {
  it('round-trips every client message', () => {
    const messages: ClientMessage[] = [
      { t: 'hello', v: 2, rank: 3, pid: 42, nonce: Buffer.alloc(32, 1), proof: Buffer.alloc(32, 2) },
      { t: 'fence', puts: [['k', 'v'], ['k2', '']] },
      { t: 'get', id: 7, key: 'k' },
      { t: 'initialized' },
      { t: 'finalized', id: 8, report: { messagesSent: 1, messagesReceived: 2, bytesSent: 3, bytesReceived: 4 } },
      { t: 'abort', id: 9, code: 7, message: 'bye' },
      { t: 'rollCallReply', id: 1, blockedIn: { call: 'recv', comm: 'COMM_WORLD', peer: null, tag: 5 } },
      { t: 'rollCallReply', id: 2, blockedIn: null },
      { t: 'rollCallReply', id: 3, blockedIn: null, counters: { messagesSent: 1, messagesReceived: 2, bytesSent: 3, bytesReceived: 4, collectives: 5 } },
      { t: 'rollCallReply', id: 4, blockedIn: null, counters: { messagesSent: 1, messagesReceived: 2, bytesSent: 3, bytesReceived: 4, collectives: 5, channels: [{ sent: 1, received: 2 }], peerBytes: [[0, 10], [2, 30]] } },
      { t: 'dyn', id: 3, op: 'spawn', a: { commands: [{ command: 'x.js', args: [], maxprocs: 2 }] } },
    ];
    for (const m of messages) expect(decodeClientMessage(encodeClientMessage(m))).toEqual(m);
  });

  it('round-trips every server message', () => {
    const messages: ServerMessage[] = [
      { t: 'challenge', v: 2, nonce: Buffer.alloc(32, 3) },
      { t: 'welcome', size: 4, proof: Buffer.alloc(32, 4) },
      { t: 'fenceDone', kvs: [['a', 'b']] },
      { t: 'getReply', id: 1, value: null },
      { t: 'getReply', id: 2, value: 'x' },
      { t: 'ack', id: 3 },
      { t: 'rollCall', id: 4 },
      { t: 'rollCall', id: 5, counters: true },
      { t: 'peerFailed', process: 3, why: 'process 3 (process 1 of the job coupled at port tsmpi-port:0123456789abcdef@127.0.0.1:5) failed: it exited with code 1' },
    ];
    for (const m of messages) expect(decodeServerMessage(encodeServerMessage(m))).toEqual(m);
  });

  it('encodes into fresh buffers (ws masks client frames in place)', () => {
    const a = encodeClientMessage({ t: 'get', id: 1, key: 'a' });
    const copy = Buffer.from(a);
    encodeClientMessage({ t: 'get', id: 2, key: 'bbbbbbbb' });
    expect(a.equals(copy)).toBe(true);
  });

  it.each([
    ['garbage bytes', Buffer.from([0xc1, 0xff, 0x00])],
    ['an array', pack([1, 2])],
    ['unknown type', pack({ t: 'nope' })],
    ['hello without proof', pack({ t: 'hello', v: 2, rank: 0, pid: 1, nonce: Buffer.alloc(32) })],
    ['hello with a key instead of a proof', pack({ t: 'hello', v: 2, rank: 0, pid: 1, key: 'ab'.repeat(32) })],
    ['proof as text', pack({ t: 'hello', v: 2, rank: 0, pid: 1, nonce: Buffer.alloc(32), proof: 'x'.repeat(32) })],
    ['fractional rank', pack({ t: 'hello', v: 2, rank: 0.5, pid: 1, nonce: Buffer.alloc(32), proof: Buffer.alloc(32) })],
    ['welcome without proof', pack({ t: 'welcome', size: 2 })],
    ['challenge without nonce', pack({ t: 'challenge', v: 2 })],
    ['bad puts', pack({ t: 'fence', puts: [['k']] })],
    ['bad report', pack({ t: 'finalized', id: 1, report: { messagesSent: -1 } })],
    ['bad blockedIn', pack({ t: 'rollCallReply', id: 1, blockedIn: { call: 1 } })],
    ['counters without collectives', pack({ t: 'rollCallReply', id: 1, blockedIn: null, counters: { messagesSent: 1, messagesReceived: 2, bytesSent: 3, bytesReceived: 4 } })],
    ['peerBytes with a negative process', pack({ t: 'rollCallReply', id: 1, blockedIn: null, counters: { messagesSent: 1, messagesReceived: 2, bytesSent: 3, bytesReceived: 4, collectives: 0, peerBytes: [[-1, 3]] } })],
    ['channels not counts', pack({ t: 'rollCallReply', id: 1, blockedIn: null, counters: { messagesSent: 1, messagesReceived: 2, bytesSent: 3, bytesReceived: 4, collectives: 0, channels: [{ sent: 'x', received: 0 }] } })],
    ['negative counter', pack({ t: 'rollCallReply', id: 1, blockedIn: null, counters: { messagesSent: -1, messagesReceived: 2, bytesSent: 3, bytesReceived: 4, collectives: 0 } })],
    ['unknown dynamic op', pack({ t: 'dyn', id: 1, op: 'fork', a: {} })],
    ['dynamic arguments not an object', pack({ t: 'dyn', id: 1, op: 'spawn', a: [1] })],
    ['dynamic reply with a bad error', pack({ t: 'dynReply', id: 1, error: ['ERR_SPAWN'], value: null })],
    ['peerFailed with a negative process', pack({ t: 'peerFailed', process: -1, why: 'x' })],
    ['peerFailed without why', pack({ t: 'peerFailed', process: 3 })],
    ['peerFailed with a long why', pack({ t: 'peerFailed', process: 3, why: 'x'.repeat(4096) })],
    ['empty', Buffer.alloc(0)],
  ])('rejects %s without throwing', (_name, bytes) => {
    expect(decodeClientMessage(bytes)).toBeNull();
    expect(decodeServerMessage(bytes)).toBeNull();
  });
});
