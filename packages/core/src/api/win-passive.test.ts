/**
 * PassiveEpochs' lazy locks (win-passive.ts) against a recording stand-in for WinOrigin: which
 * requests a lock epoch sends, in which order, with which bytes. Pure: the stand-in answers as a
 * target would (OK, BUSY, GRANTED); rma-lazy.it.test.ts runs the same paths through mpiexec.
 */
import { describe, expect, it } from 'vitest';
import { RMA_BATCH, RMA_CODE, RMA_LOCK_TYPE, RMA_PREFIX_BYTES, RMA_STATUS } from '../device/index.ts';
import type { TargetSpec } from './win-args.ts';
import type { WinOrigin } from './win-origin.ts';
import { BATCH_BYTES, PassiveEpochs } from './win-passive.ts';

const TARGET = 1;
const EX = RMA_LOCK_TYPE.EXCLUSIVE;

function spec(byteDisp: number, bytes: number): TargetSpec {
  return { byteDisp, bytes, elem: 0 } as unknown as TargetSpec;
}

/** A WinOrigin that records what it is asked to send; `epochAnswers`, `controlAnswers`: the answers of one-frame epochs and of controls, in turn. */
function recorder(epochAnswers: number[] = [], controlAnswers: number[] = []) {
  const sent: string[] = [];
  const o = {
    isLocal: () => false,
    send: (_c: string, rank: number, code: number, t: TargetSpec, _op: number, data: Uint8Array, flags: number) => {
      sent.push(`send r${rank} code${code} disp${t.byteDisp} [${Array.from(data).join(',')}]${flags === RMA_BATCH ? ' batch' : ''}`);
    },
    epochOp: (_c: string, rank: number, code: number, t: TargetSpec, _op: number, type: number, framed: Uint8Array) => {
      sent.push(`epoch r${rank} code${code} type${type} disp${t.byteDisp} [${Array.from(framed.subarray(RMA_PREFIX_BYTES)).join(',')}] room${framed.length - (t.bytes as number)}`);
      return Promise.resolve(epochAnswers.shift() ?? RMA_STATUS.OK);
    },
    post: (_c: string, rank: number, code: number, _aux2: number, flags: number) => {
      sent.push(`post r${rank} code${code}${flags === RMA_BATCH ? ' batch' : ''}`);
    },
    control: (_c: string, rank: number, code: number, _aux2: number, flags = 0) => {
      sent.push(`control r${rank} code${code}${flags === RMA_BATCH ? ' batch' : ''}`);
      return Promise.resolve(controlAnswers.shift() ?? RMA_STATUS.OK);
    },
    acquire: (_c: string, rank: number) => {
      sent.push(`acquire r${rank}`);
      return Promise.resolve();
    },
    awaitFetches: () => Promise.resolve(),
    forget: () => undefined,
    complete: (_c: string, rank: number) => {
      sent.push(`complete r${rank}`);
      return Promise.resolve();
    },
  };
  return { sent, epochs: new PassiveEpochs(o as unknown as WinOrigin) };
}

describe('PassiveEpochs (lazy locks)', () => {
  it('sends one Put as one frame at unlock, with a copy taken at Put (the caller reused its buffer)', async () => {
    const { sent, epochs } = recorder();
    await epochs.open('Win.lock', TARGET, EX, false);
    const buf = new Uint8Array([1, 2, 3, 4]);
    epochs.put('Win.Put', TARGET, RMA_CODE.PUT, spec(16, 4), 0, buf);
    buf.fill(9);
    expect(sent).toEqual([]);
    await epochs.close('Win.unlock', TARGET);
    expect(sent).toEqual([`epoch r1 code${RMA_CODE.PUT} type${EX} disp16 [1,2,3,4] room${RMA_PREFIX_BYTES}`]);
  });

  it('locks the ordinary way and sends the same bytes again when the one-frame epoch is refused', async () => {
    const { sent, epochs } = recorder([RMA_STATUS.BUSY]);
    await epochs.open('Win.lock', TARGET, EX, false);
    epochs.put('Win.Accumulate', TARGET, RMA_CODE.ACC, spec(8, 2), 3, new Uint8Array([5, 6]));
    await epochs.close('Win.unlock', TARGET);
    expect(sent).toEqual([
      `epoch r1 code${RMA_CODE.ACC} type${EX} disp8 [5,6] room${RMA_PREFIX_BYTES}`,
      'acquire r1',
      `send r1 code${RMA_CODE.ACC} disp8 [5,6]`,
      `control r1 code${RMA_CODE.UNLOCK}`,
    ]);
  });

  it('sends two Puts as one batch in order (LOCK, the Puts, UNLOCK)', async () => {
    const { sent, epochs } = recorder();
    await epochs.open('Win.lock', TARGET, EX, false);
    epochs.put('Win.Put', TARGET, RMA_CODE.PUT, spec(0, 1), 0, new Uint8Array([1]));
    epochs.put('Win.Put', TARGET, RMA_CODE.PUT, spec(1, 1), 0, new Uint8Array([2]));
    await epochs.close('Win.unlock', TARGET);
    expect(sent).toEqual([
      `post r1 code${RMA_CODE.LOCK} batch`,
      `send r1 code${RMA_CODE.PUT} disp0 [1] batch`,
      `send r1 code${RMA_CODE.PUT} disp1 [2] batch`,
      `control r1 code${RMA_CODE.UNLOCK} batch`,
    ]);
  });

  it('sends LOCK, the Put and FLUSH as one batch at a flush; the lock is then held: later Puts go at once, unlock is one UNLOCK', async () => {
    const { sent, epochs } = recorder();
    await epochs.open('Win.lock', TARGET, EX, false);
    epochs.put('Win.Put', TARGET, RMA_CODE.PUT, spec(0, 1), 0, new Uint8Array([1]));
    await epochs.ready('Win.flush', TARGET);
    epochs.put('Win.Put', TARGET, RMA_CODE.PUT, spec(1, 1), 0, new Uint8Array([2]));
    await epochs.ready('Win.flush', TARGET);
    await epochs.close('Win.unlock', TARGET);
    expect(sent).toEqual([
      `post r1 code${RMA_CODE.LOCK} batch`,
      `send r1 code${RMA_CODE.PUT} disp0 [1] batch`,
      `control r1 code${RMA_CODE.FLUSH} batch`,
      `send r1 code${RMA_CODE.PUT} disp1 [2]`,
      `control r1 code${RMA_CODE.UNLOCK}`,
    ]);
  });

  it('locks the ordinary way and sends the same bytes again when a flush\'s batch is refused', async () => {
    const { sent, epochs } = recorder([], [RMA_STATUS.BUSY]);
    await epochs.open('Win.lock', TARGET, EX, false);
    epochs.put('Win.Put', TARGET, RMA_CODE.PUT, spec(0, 2), 0, new Uint8Array([3, 4]));
    await epochs.ready('Win.flush', TARGET);
    await epochs.close('Win.unlock', TARGET);
    expect(sent).toEqual([
      `post r1 code${RMA_CODE.LOCK} batch`,
      `send r1 code${RMA_CODE.PUT} disp0 [3,4] batch`,
      `control r1 code${RMA_CODE.FLUSH} batch`,
      'acquire r1',
      `send r1 code${RMA_CODE.PUT} disp0 [3,4]`,
      `control r1 code${RMA_CODE.UNLOCK}`,
    ]);
  });

  it('sends nothing at a flush of a lazy epoch with no operation', async () => {
    const { sent, epochs } = recorder();
    await epochs.open('Win.lock', TARGET, EX, false);
    await epochs.ready('Win.flush', TARGET);
    await epochs.close('Win.unlock', TARGET);
    expect(sent).toEqual([]);
  });

  it('takes the lock at a request\'s fetch (Rget), then sends what waited before it and starts the fetch, in order', async () => {
    const { sent, epochs } = recorder();
    await epochs.open('Win.lock', TARGET, EX, false);
    epochs.put('Win.Put', TARGET, RMA_CODE.PUT, spec(0, 1), 0, new Uint8Array([7]));
    const fetched = epochs.fetch('Win.Rget', TARGET, (flags) => {
      sent.push(`get r1${flags === RMA_BATCH ? ' batch' : ''}`);
      return Promise.resolve();
    }, 0, false);
    await fetched;
    epochs.put('Win.Put', TARGET, RMA_CODE.PUT, spec(1, 1), 0, new Uint8Array([8]));
    await epochs.close('Win.unlock', TARGET);
    expect(sent).toEqual([
      'acquire r1',
      `send r1 code${RMA_CODE.PUT} disp0 [7]`,
      'get r1',
      `send r1 code${RMA_CODE.PUT} disp1 [8]`,
      `control r1 code${RMA_CODE.UNLOCK}`,
    ]);
  });

  it('sends a Get (completed at unlock) in the batch: LOCK, the Put, the Get, UNLOCK; it settles with the batch', async () => {
    const { sent, epochs } = recorder();
    await epochs.open('Win.lock', TARGET, EX, false);
    epochs.put('Win.Put', TARGET, RMA_CODE.PUT, spec(0, 1), 0, new Uint8Array([7]));
    let settled = false;
    const fetched = epochs.fetch('Win.Get', TARGET, (flags) => {
      sent.push(`get r1${flags === RMA_BATCH ? ' batch' : ''}`);
      return Promise.resolve();
    }, 0, true).then(() => void (settled = true));
    expect(epochs.holdsFetch(TARGET)).toBe(true);
    await Promise.resolve();
    expect([sent, settled]).toEqual([[], false]);
    await epochs.close('Win.unlock', TARGET);
    await fetched;
    expect(sent).toEqual([
      `post r1 code${RMA_CODE.LOCK} batch`,
      `send r1 code${RMA_CODE.PUT} disp0 [7] batch`,
      'get r1 batch',
      `control r1 code${RMA_CODE.UNLOCK} batch`,
    ]);
  });

  it('drops a refused batch\'s fetch answer and fetches again once the lock is held', async () => {
    const { sent, epochs } = recorder([], [RMA_STATUS.BUSY]);
    await epochs.open('Win.lock', TARGET, EX, false);
    const outcomes: string[] = [];
    const fetched = epochs.fetch('Win.FetchAndOp', TARGET, (flags) => {
      sent.push(`get r1${flags === RMA_BATCH ? ' batch' : ''}`);
      // A refused batch's fetch is answered with no bytes: WinOrigin.fetch rejects it.
      return flags === RMA_BATCH ? Promise.reject(new Error('no bytes')) : Promise.resolve();
    }, 8, true).then(() => void outcomes.push('resolved'), (e: Error) => void outcomes.push(e.message));
    await epochs.close('Win.unlock', TARGET);
    await fetched;
    expect(sent).toEqual([
      `post r1 code${RMA_CODE.LOCK} batch`,
      'get r1 batch',
      `control r1 code${RMA_CODE.UNLOCK} batch`,
      'acquire r1',
      'get r1',
      `control r1 code${RMA_CODE.UNLOCK}`,
    ]);
    expect(outcomes).toEqual(['resolved']);
  });

  it('passes a granted batch fetch\'s own error on (an answer that was short)', async () => {
    const { epochs } = recorder();
    await epochs.open('Win.lock', TARGET, EX, false);
    const fetched = epochs.fetch('Win.Get', TARGET, () => Promise.reject(new Error('short answer')), 0, true);
    await epochs.close('Win.unlock', TARGET);
    await expect(fetched).rejects.toThrow('short answer');
  });

  it('takes the lock when a deferrable fetch\'s data passes BATCH_BYTES', async () => {
    const { sent, epochs } = recorder();
    await epochs.open('Win.lock', TARGET, EX, false);
    await epochs.fetch('Win.GetAccumulate', TARGET, () => {
      sent.push('get r1');
      return Promise.resolve();
    }, BATCH_BYTES + 8, true);
    expect(sent).toEqual(['acquire r1', 'get r1']);
  });

  it('rejects a waiting fetch with the lock\'s failure', async () => {
    const failing = new PassiveEpochs({
      isLocal: () => false,
      acquire: () => Promise.reject(new Error('target lost')),
    } as unknown as WinOrigin);
    await failing.open('Win.lock', TARGET, EX, false);
    let started = false;
    await expect(failing.fetch('Win.Rget', TARGET, () => {
      started = true;
      return Promise.resolve();
    }, 0, false)).rejects.toThrow('target lost');
    expect(started).toBe(false);
  });
});
