import { describe, expect, it } from 'vitest';
import { portOrder } from './listen-port.ts';

describe('portOrder', () => {
  it('visits every port of the range once, from the start offset', () => {
    expect(portOrder({ lo: 5000, hi: 5003 }, 2)).toEqual([5002, 5003, 5000, 5001]);
    expect(portOrder({ lo: 7, hi: 7 }, 0)).toEqual([7]);
    expect(new Set(portOrder({ lo: 100, hi: 199 }, 57)).size).toBe(100);
  });
});
