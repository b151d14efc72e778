// The roll-call table of runtime/blocked.ts: a worker thread's slot from its
// MPI.Worker constructor (markStarting) through its calls to its end (clearSlot).
import { describe, expect, it } from 'vitest';
import { BlockedCalls, BLOCKED_SLOT_WORDS, INIT_CALL, STARTING_CALL, clearSlot, markStarting } from './blocked.ts';
import { WaitPoll } from './wait-poll.ts';

const CAPACITY = 4;

function table(): { buffer: SharedArrayBuffer; main: BlockedCalls } {
  const buffer = new SharedArrayBuffer(CAPACITY * BLOCKED_SLOT_WORDS * 4);
  const main = new BlockedCalls(new WaitPoll());
  main.attachTable(buffer, 0, CAPACITY);
  return { buffer, main };
}

describe('BlockedCalls slots of worker threads', () => {
  it('reports a thread marked starting, then its init, then its calls, and nothing once cleared', () => {
    const { buffer, main } = table();
    expect(main.report()).toBeNull();
    markStarting(buffer, 2);
    expect(main.report()?.threads).toEqual([{ thread: 2, call: STARTING_CALL, comm: '', peer: null, tag: null, calls: 0 }]);
    // The thread's own BlockedCalls overwrites the mark when its MPI.init begins.
    const worker = new BlockedCalls(new WaitPoll());
    worker.attachTable(buffer, 2, CAPACITY);
    worker.enter(INIT_CALL, '', null, null);
    expect(main.report()?.threads).toEqual([{ thread: 2, call: INIT_CALL, comm: '', peer: null, tag: null, calls: 1 }]);
    worker.leave();
    expect(main.report()).toBeNull();
    worker.enter('recv', 'COMM_WORLD', 1, 5);
    expect(main.report()?.threads).toEqual([{ thread: 2, call: 'recv', comm: 'COMM_WORLD', peer: 1, tag: 5, calls: 2 }]);
    clearSlot(buffer, 2);
    expect(main.report()).toBeNull();
  });

  it('keeps the main thread\'s own call beside a starting thread', () => {
    const { buffer, main } = table();
    markStarting(buffer, 1);
    main.enter('barrier', 'COMM_WORLD', null, null);
    const r = main.report();
    expect(r?.call).toBe('barrier');
    expect(r?.calls).toBe(1); // each blocking call entered counts, so a roll-call can tell a wait from a loop of calls
    main.leave();
    main.enter('barrier', 'COMM_WORLD', null, null);
    expect(main.report()?.calls).toBe(2);
    expect(r?.threads?.map((t) => t.call)).toEqual([STARTING_CALL]);
  });
});
