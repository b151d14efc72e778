// Where an unexpected message's bytes wait (unexpected-payloads.ts): in a multithreaded process the
// payload pool for small ones, the big arena (FLAG.BIG) past the pool's largest class; in a
// single-threaded one a private copy, whatever its size; drop() gives the memory back.
import { describe, expect, it } from 'vitest';
import { FLAG, KIND, NIL, SLOT, SLOT_WORDS, SlotPool } from './request-table.ts';
import { SharedState } from './shared-state.ts';
import { UnexpectedPayloads } from './unexpected-payloads.ts';

function setup(multithreaded: boolean): { shared: SharedState; store: UnexpectedPayloads; msg: number } {
  const shared = SharedState.create({
    processCount: 1, endpointsPerProcess: 1, channels: 1, matching: 'parallel', requestSlots: 64, multithreaded, blockedSlotBytes: 4,
  });
  const store = new UnexpectedPayloads(shared);
  const msg = new SlotPool(shared.table, null).alloc(KIND.MESSAGE);
  return { shared, store, msg };
}

const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 7) & 0xff);
// toEqual walks 100,000 elements slowly; compare the bytes in one call
const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));

describe('UnexpectedPayloads', () => {
  it('multithreaded: keeps a small payload in the shared pool, as a copy, and frees it on drop', () => {
    const { shared, store, msg } = setup(true);
    const w = shared.table.words;
    expect(store.keepsBeforeQueue).toBe(true);
    const payload = bytes(100);
    expect(store.keep(msg, payload)).toBe(true);
    const off = w[msg * SLOT_WORDS + SLOT.PAYLOAD]!;
    expect(off).not.toBe(NIL);
    payload.fill(0); // the sender's memory may change at once
    const flags = w[msg * SLOT_WORDS + SLOT.FLAGS]!;
    expect(flags & FLAG.BIG).toBe(0);
    expect(store.bytesOf(msg, 100, flags)).toEqual(bytes(100));
    store.drop(msg);
    // the freed block is the next one the pool hands out
    expect(shared.payloads.alloc(100)).toBe(off);
  });

  it.each([100, 100_000])('single-threaded: a %i-byte payload is a private copy, kept once the message is queued, not in the shared pool', (n) => {
    const { shared, store, msg } = setup(false);
    expect(store.keepsBeforeQueue).toBe(false);
    const payload = Buffer.from(bytes(n)); // a Buffer's slice() is a view: the copy must not be one
    expect(store.keep(msg, payload)).toBe(true);
    expect(shared.table.words[msg * SLOT_WORDS + SLOT.PAYLOAD]).toBe(NIL);
    payload.fill(0);
    const got = store.bytesOf(msg, n, shared.table.words[msg * SLOT_WORDS + SLOT.FLAGS]!);
    expect(got.buffer instanceof SharedArrayBuffer).toBe(false);
    expect(same(got, bytes(n))).toBe(true);
    store.drop(msg);
    // the pool was never used: its first block is still the first one it hands out
    expect(shared.payloads.alloc(100)).toBe(16);
  });

  it('multithreaded: a payload past the pool\'s largest class goes to the big arena', () => {
    const { shared, store, msg } = setup(true);
    const w = shared.table.words;
    const big = bytes(100_000);
    expect(store.keep(msg, big)).toBe(true);
    const flags = w[msg * SLOT_WORDS + SLOT.FLAGS]!;
    expect(flags & FLAG.BIG).toBe(FLAG.BIG);
    const got = store.bytesOf(msg, big.length, flags);
    expect(got.buffer).toBe(shared.big!.bytes.buffer);
    expect(same(got, big)).toBe(true);
    store.drop(msg);
  });
});
