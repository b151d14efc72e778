// WindowDirectory without threads: two directories on one BroadcastChannel name (as two threads of
// one process would open) announce, acknowledge, find and withdraw window records; another
// process's name hears nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { RMA_CODE, RMA_CONTROL, RMA_REGION_SPAN, RmaTarget, type RmaWindowRecord } from './rma-target.ts';
import { channelHosts, directoryName } from './rma-directory.ts';

const noOut = { out: () => undefined, eagerMax: () => 1 << 16, processOf: (e: number) => e };
const opened: RmaTarget[] = [];

function thread(process: number, threadId: number): RmaTarget {
  const t = new RmaTarget(noOut);
  t.openDirectory('job-test', process, directoryName({ threadId, hosted: [] }));
  opened.push(t);
  return t;
}

function record(endpoint: number, serial = 1): RmaWindowRecord {
  return { contextId: 7, endpoint, serial, memory: new Uint8Array(new SharedArrayBuffer(16)), control: new Int32Array(new SharedArrayBuffer(4 * RMA_CONTROL.WORDS)) };
}

afterEach(() => {
  for (const t of opened.splice(0)) t.directory?.close();
});

describe('WindowDirectory', () => {
  it('publish resolves once the named hosts have the record; they share its memory; withdraw removes it', async () => {
    const a = thread(0, 1);
    const host = thread(0, 0);
    const stranger = thread(1, 0);
    const w = record(3);
    a.register(w);
    await a.directory!.publish(w, ['thread:0', 'thread:1']);
    const seen = host.recordOf(7, 3)!;
    expect(seen.endpoint).toBe(3);
    seen.memory[5] = 9;
    expect(w.memory[5]).toBe(9);
    expect(Atomics.add(seen.control, RMA_CONTROL.ACC, 0)).toBe(0);
    expect(stranger.recordOf(7, 3)).toBeUndefined();
    await a.directory!.withdraw(w, ['thread:0']);
    expect(host.recordOf(7, 3)).toBeUndefined();
  });

  it('whenKnown waits for another member\'s announce of that creation, not an older window\'s on the same context', async () => {
    const a = thread(0, 1);
    const b = thread(0, 2);
    const old = record(4, 1);
    a.register(old);
    await a.directory!.publish(old, ['thread:2']);
    const known = b.directory!.whenKnown(7, 4, 2);
    const w = record(4, 2);
    a.register(w);
    await a.directory!.publish(w, []);
    expect((await known).serial).toBe(2);
    // The older creation's late withdraw leaves the newer record alone.
    await a.directory!.withdraw(old, ['thread:2']);
    expect(b.recordOf(7, 4)?.serial).toBe(2);
  });

  it('a thread that takes a dynamic window\'s record after its target attached (the attach\'s message still on its way) holds an operation at the address until that message', async () => {
    const target = thread(0, 1);
    const origin = thread(0, 2);
    const w: RmaWindowRecord = { ...record(5), memory: new Uint8Array(new SharedArrayBuffer(0)), regions: new Map() };
    target.register(w);
    await target.directory!.publish(w, []);
    // The origin's thread has not run since: the record and the attach wait in its queue together
    // (a descheduled thread under load, rma-threads "attach"). The target attaches as Win.attach
    // does (count in SEQ, apply, tell) and the address reaches the origin's thread by a message.
    const region = new Uint8Array(new SharedArrayBuffer(8)).fill(4);
    const seq = Atomics.add(w.control, RMA_CONTROL.SEQ, 1) + 1;
    target.attach(7, 5, 1, region, seq);
    target.directory!.attach(7, 5, 1, region, seq);
    // Node runs microtasks between two messages of one port: the origin's creation ends (whenKnown)
    // and its Get runs after the record's message and before the attach's.
    const answer = await origin.directory!.whenKnown(7, 5, 1).then((rec) => new Promise<number[] | null>((resolve) => {
      origin.applyLocal(rec, RMA_CODE.GET, 0, 0, 2, RMA_REGION_SPAN + 3, new Uint8Array(0), (a) => resolve(a === null ? null : [...a]));
    }));
    expect(answer).toEqual([4, 4]);
    // The region it applied to is the target's memory (one SharedArrayBuffer).
    origin.recordOf(7, 5)!.regions!.get(1)![0] = 9;
    expect(region[0]).toBe(9);
  });

  it('names the channels\' hosts: none alone, the engines, or the main thread', () => {
    expect(channelHosts(1, true, 2)).toEqual([]);
    expect(channelHosts(3, true, 2)).toEqual(['engine:0', 'engine:1']);
    expect(channelHosts(3, false, 2)).toEqual(['thread:0']);
    expect(directoryName({ threadId: -1, hosted: [1] })).toBe('engine:1');
  });
});
