import { describe, expect, it } from 'vitest';
import { formatAddress, formatPublished, parseAddress, parsePublished } from './address.ts';

describe('address', () => {
  it('formats and parses IPv4 and IPv6 literals', () => {
    expect(formatAddress('127.0.0.1', 4000)).toBe('127.0.0.1:4000');
    expect(formatAddress('::1', 4000)).toBe('[::1]:4000');
    expect(parseAddress('127.0.0.1:4000')).toEqual({ host: '127.0.0.1', port: 4000 });
    expect(parseAddress('[::1]:5')).toEqual({ host: '::1', port: 5 });
    expect(parseAddress('node-7.cluster:65535')).toEqual({ host: 'node-7.cluster', port: 65535 });
  });

  it('publishes a reachable name for a wildcard listen host', () => {
    expect(formatAddress('0.0.0.0', 1)).not.toContain('0.0.0.0');
  });

  it('rejects malformed addresses', () => {
    for (const bad of ['', 'host', ':80', 'h:0', 'h:70000', 'h:8x', '::1:80', '[::1:80', 'loopback:0']) {
      expect(parseAddress(bad), bad).toBe(null);
    }
  });

  it('publishes the same-host socket only when one was bound, and parses it back', () => {
    expect(formatPublished('127.0.0.1:4000', null)).toBe('127.0.0.1:4000');
    expect(parsePublished('127.0.0.1:4000')).toEqual({ tcpText: '127.0.0.1:4000', tcp: { host: '127.0.0.1', port: 4000 }, unixPath: null });
    const both = formatPublished('[::1]:4000', '/tmp/tsmpi-ab/t-0-4000');
    expect(parsePublished(both)).toEqual({ tcpText: '[::1]:4000', tcp: { host: '::1', port: 4000 }, unixPath: '/tmp/tsmpi-ab/t-0-4000' });
    expect(parsePublished(formatPublished('h:1', '/a dir/with spaces'))?.unixPath).toBe('/a dir/with spaces');
    for (const bad of ['127.0.0.1:4000 ', '127.0.0.1:4000 unix:', '127.0.0.1:4000 unix:rel/path', '127.0.0.1:4000 tcp:/x', 'h:0 unix:/x', ' unix:/x']) {
      expect(parsePublished(bad), bad).toBe(null);
    }
  });
});
