// Unit test of the leaders' swap encoding of an intercommunicator side ([context id, endpoints]).
import { describe, expect, it } from 'vitest';
import '../index.ts'; // the api modules load in the package's order (they import one another)
import { decodeSide, encodeSide } from './intercomm.ts';

describe('encodeSide / decodeSide', () => {
  it('round-trips, also from a Node Buffer that is a view at an odd offset of a larger buffer (a TLS read)', () => {
    const side = encodeSide(42, Int32Array.of(3, 7, 11));
    expect(decodeSide(side)).toEqual({ ctx: 42, endpoints: Int32Array.of(3, 7, 11) });
    const big = Buffer.alloc(4097);
    big.set(side, 1);
    // The answer's first byte is the ok/error flag: the side starts at offset 1 of the read.
    const view = big.subarray(1, 1 + side.length);
    expect(decodeSide(view)).toEqual({ ctx: 42, endpoints: Int32Array.of(3, 7, 11) });
  });
});
