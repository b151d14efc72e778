// WorkerPeers (worker-peers.ts) on real BroadcastChannels within one thread (instances with the
// same channel name hear each other as threads do): the book reaches listening threads before
// announce resolves, a thread started later gets it from its boot record, a thread that started
// from an older record asks for it at join, and a thread that ended is not waited for; a coupled
// job's processes, their failures and releases travel in the book (docs/adr/0043).
import { afterEach, describe, expect, it } from 'vitest';
import { peersThreadEnded, WorkerPeers, type PeerBook } from './worker-peers.ts';

let job = 0;
const open: WorkerPeers[] = [];

function main(): WorkerPeers {
  const p = new WorkerPeers(`unit-${process.pid}-${++job}`, 0, 0, null, () => {});
  open.push(p);
  return p;
}

function worker(m: WorkerPeers, threadId: number, applied: PeerBook[], boot = m.boot()): WorkerPeers {
  const p = new WorkerPeers(`unit-${process.pid}-${job}`, 0, threadId, boot, (b) => applied.push(b));
  open.push(p);
  return p;
}

afterEach(() => {
  for (const p of open.splice(0)) p.close();
});

describe('WorkerPeers', () => {
  it('answers at once with no worker thread listening, and a thread started later gets the book at construction', async () => {
    const m = main();
    await m.announce(['', '', 'tcp-2'], null);
    const applied: PeerBook[] = [];
    worker(m, 1, applied);
    expect(applied.map((b) => [b.gen, b.addresses])).toEqual([[1, ['', '', 'tcp-2']]]);
  });

  it('resolves announce only after every joined thread applied the book; books merge', async () => {
    const m = main();
    const a: PeerBook[] = [];
    const b: PeerBook[] = [];
    await worker(m, 1, a).join();
    await worker(m, 2, b).join();
    await m.announce(['', '', 'tcp-2'], [['', '', 'e0-2'], ['', '', 'e1-2']]);
    expect(a.map((x) => x.gen)).toEqual([1]);
    expect(b.map((x) => x.gen)).toEqual([1]);
    await m.announce(['', '', '', 'tcp-3'], [['', '', '', 'e0-3'], ['', '', '', 'e1-3']]);
    expect(a[1]).toEqual({ gen: 2, addresses: ['', '', 'tcp-2', 'tcp-3'], perChannel: [['', '', 'e0-2', 'e0-3'], ['', '', 'e1-2', 'e1-3']] });
    expect(b.map((x) => x.gen)).toEqual([1, 2]);
  });

  it('carries a coupled job\'s processes, then their failures and releases, to joined threads and in later boot records', async () => {
    const m = main();
    const a: PeerBook[] = [];
    await worker(m, 1, a).join();
    const pair = { key: 'k'.repeat(64), asProcess: 2, theirProcess: 0, channelAddresses: ['e0', 'e1'] };
    await m.announce(['', '', 'tcp-2'], null, { coupled: new Map([[2, pair]]) });
    await m.announce([], null, { failed: [[2, 'process 2 (process 0 of the job coupled at port P) failed: it exited']] });
    await m.announce([], null, { released: [2] });
    expect(a.at(-1)).toEqual({
      gen: 3, addresses: ['', '', 'tcp-2'], perChannel: null,
      coupled: [[2, pair]], failed: [[2, 'process 2 (process 0 of the job coupled at port P) failed: it exited']], released: [2],
    });
    const later: PeerBook[] = [];
    worker(m, 2, later);
    expect(later.map((b) => [b.coupled, b.released])).toEqual([[[[2, pair]], [2]]]);
  });

  it('a thread whose boot record is older than the last announcement gets the book before join resolves', async () => {
    const m = main();
    const stale = m.boot();
    await m.announce(['', 'tcp-1'], null);
    const applied: PeerBook[] = [];
    await worker(m, 3, applied, stale).join();
    expect(applied.map((b) => [b.gen, b.addresses])).toEqual([[1, ['', 'tcp-1']]]);
  });

  it('does not wait for a thread that ended', async () => {
    const m = main();
    const applied: PeerBook[] = [];
    const w = worker(m, 4, applied);
    await w.join();
    w.close(); // it hears nothing more, as a thread that ended
    const done = m.announce(['', 'tcp-1'], null);
    peersThreadEnded(m.state, 4);
    await done;
    expect(applied).toEqual([]);
  });
});
