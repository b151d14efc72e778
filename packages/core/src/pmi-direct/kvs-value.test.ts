// Wire-safe values (kvs-value.ts): a published address with a space survives PMI-1 and PMI-2.
import { describe, expect, it } from 'vitest';
import { decodeKvsValue, encodeKvsValue } from './kvs-value.ts';

describe('kvs values', () => {
  it('encodes a space, "=", ";" and non-ASCII as %XX and decodes them back', () => {
    const address = '127.0.0.1:40001 unix:/tmp/tsmpi-ab/t-0-40001';
    const encoded = encodeKvsValue(address);
    expect(encoded).toBe('127.0.0.1:40001%20unix:/tmp/tsmpi-ab/t-0-40001');
    expect(decodeKvsValue(encoded)).toBe(address);
    expect(encodeKvsValue('a=b;c é')).toBe('a%3Db%3Bc%20%C3%A9');
    expect(decodeKvsValue('a%3Db%3Bc%20%C3%A9')).toBe('a=b;c é');
  });

  it('refuses what it would not have written', () => {
    expect(decodeKvsValue('a b')).toBeNull();
    expect(decodeKvsValue('%2')).toBeNull();
    expect(decodeKvsValue('%zz')).toBeNull();
    expect(decodeKvsValue('%41')).toBeNull(); // "A" is written as itself
  });
});
