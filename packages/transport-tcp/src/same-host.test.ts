import { describe, expect, it } from 'vitest';
import { isSameHost, readerSocketName, sameHostSocketName } from './same-host.ts';

describe('same-host', () => {
  it('counts only an identical IP literal as this host', () => {
    expect(isSameHost('127.0.0.1', '127.0.0.1')).toBe(true);
    expect(isSameHost('10.1.0.2', '10.1.0.2')).toBe(true);
    expect(isSameHost('::1', '::1')).toBe(true);
    expect(isSameHost('10.1.0.2', '10.1.0.3')).toBe(false);
    expect(isSameHost('node', 'node')).toBe(false); // a shared host name may be two hosts
    expect(isSameHost(null, '127.0.0.1')).toBe(false);
  });

  it('names the socket from the job key and the address, in the abstract namespace', () => {
    const a = sameHostSocketName('key-1', '127.0.0.1:4000');
    expect(a.startsWith('\0tsmpi-')).toBe(true);
    expect(a.endsWith('-127.0.0.1:4000')).toBe(true);
    expect(a).not.toContain('key-1');
    expect(sameHostSocketName('key-2', '127.0.0.1:4000')).not.toBe(a);
    expect(sameHostSocketName('key-1', '127.0.0.1:4001')).not.toBe(a);
    expect(Buffer.byteLength(sameHostSocketName('k', '[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535'))).toBeLessThanOrEqual(108);
  });

  it('names an endpoint reader\'s socket from the job key, process, endpoint and epoch, apart from every transport\'s', () => {
    const a = readerSocketName('key-1', 3, 7, 2);
    expect(a.startsWith('\0tsmpi-')).toBe(true);
    expect(a).not.toContain('key-1');
    const others = [readerSocketName('key-2', 3, 7, 2), readerSocketName('key-1', 4, 7, 2), readerSocketName('key-1', 3, 8, 2), readerSocketName('key-1', 3, 7, 3), readerSocketName('key-1', 37, 2, 2)];
    expect(new Set([a, ...others]).size).toBe(others.length + 1);
    expect(a).not.toBe(sameHostSocketName('key-1', '3:7'));
    expect(Buffer.byteLength(readerSocketName('k', 2 ** 32 - 1, 2 ** 32 - 1, 2 ** 29))).toBeLessThanOrEqual(108);
  });
});
