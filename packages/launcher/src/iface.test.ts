import type { NetworkInterfaceInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { externalAddresses, isIfaceSyntax, isThisMachine, parseCidr, parsePortRange, resolveIface, wireupBinding, type InterfaceTable } from './iface.ts';

function info(address: string, internal = false): NetworkInterfaceInfo {
  const family = address.includes(':') ? 'IPv6' : 'IPv4';
  return { address, family, internal, netmask: '', mac: '', cidr: null, ...(family === 'IPv6' ? { scopeid: 0 } : {}) } as NetworkInterfaceInfo;
}

const TABLE: InterfaceTable = {
  lo: [info('127.0.0.1', true), info('::1', true)],
  eth0: [info('fe80::1'), info('10.0.0.5')],
  veth1: [info('198.18.0.3')],
};

describe('iface', () => {
  it('resolves --iface by name, CIDR or address on the host that owns the table', () => {
    expect(resolveIface('eth0', TABLE)).toBe('10.0.0.5'); // IPv4 first, link-local never
    expect(resolveIface('198.18.0.0/15', TABLE)).toBe('198.18.0.3');
    expect(resolveIface('198.18.0.3', TABLE)).toBe('198.18.0.3');
    expect(resolveIface('lo', TABLE)).toBe('127.0.0.1');
  });

  it('names what the host has when --iface matches nothing', () => {
    const e = resolveIface('ib0', TABLE);
    expect(e).toBeInstanceOf(Error);
    expect((e as Error).message).toMatch(/--iface ib0 matches no interface.*eth0 10\.0\.0\.5.*veth1 198\.18\.0\.3/);
    expect(resolveIface('192.168.0.0/16', TABLE)).toBeInstanceOf(Error);
  });

  it('lists external addresses without loopback', () => {
    expect(externalAddresses(TABLE)).toEqual(['10.0.0.5', '198.18.0.3']);
  });

  it('matches CIDRs bit by bit', () => {
    const m = parseCidr('198.18.0.0/15')!;
    expect(m('198.19.255.255')).toBe(true);
    expect(m('198.20.0.0')).toBe(false);
    expect(parseCidr('0.0.0.0/0')!('8.8.8.8')).toBe(true);
    expect(parseCidr('10.0.0.0/33')).toBe(null);
    expect(parseCidr('eth0')).toBe(null);
  });

  it('knows which names mean this machine, never by resolving names', () => {
    expect(isThisMachine('localhost', 'node7.cluster', TABLE)).toBe(true);
    expect(isThisMachine('127.0.1.1', 'node7.cluster', TABLE)).toBe(true);
    expect(isThisMachine('node7', 'node7.cluster', TABLE)).toBe(true);
    expect(isThisMachine('node7.cluster', 'node7.cluster', TABLE)).toBe(true);
    expect(isThisMachine('198.18.0.3', 'node7.cluster', TABLE)).toBe(true);
    expect(isThisMachine('node8', 'node7.cluster', TABLE)).toBe(false);
    expect(isThisMachine('198.18.0.4', 'node7.cluster', TABLE)).toBe(false);
  });

  it('parses --port-range and checks --iface syntax', () => {
    expect(parsePortRange('5000-5100')).toEqual({ lo: 5000, hi: 5100 });
    expect(parsePortRange('5100-5000')).toBeInstanceOf(Error);
    expect(parsePortRange('0-10')).toBeInstanceOf(Error);
    expect(parsePortRange('1-70000')).toBeInstanceOf(Error);
    expect(isIfaceSyntax('eth0')).toBe(true);
    expect(isIfaceSyntax('10.0.0.0/8')).toBe(true);
    expect(isIfaceSyntax('a b')).toBe(false);
  });

  it('binds the wire-up service on loopback for one machine, on --iface or every address across hosts', () => {
    expect(wireupBinding(false, false, 'eth0', TABLE)).toEqual({ bindHost: '127.0.0.1', localListen: '127.0.0.1', ifaceError: null });
    expect(wireupBinding(true, true, 'eth0', TABLE)).toEqual({ bindHost: '10.0.0.5', localListen: '10.0.0.5', ifaceError: null });
    // Two non-loopback addresses: the ranks here wait for the first proxy link to learn theirs.
    expect(wireupBinding(true, true, null, TABLE)).toEqual({ bindHost: '0.0.0.0', localListen: null, ifaceError: null });
    // Only spawned processes may run elsewhere (no proxy link will tell): the first non-loopback address.
    expect(wireupBinding(true, false, null, TABLE)).toEqual({ bindHost: '0.0.0.0', localListen: '10.0.0.5', ifaceError: null });
    expect(wireupBinding(true, true, null, { lo: TABLE.lo, eth0: [info('10.0.0.5')] })).toEqual({ bindHost: '0.0.0.0', localListen: '10.0.0.5', ifaceError: null });
    const bad = wireupBinding(true, true, 'ib0', TABLE);
    expect(bad.bindHost).toBe('0.0.0.0');
    expect(bad.ifaceError?.message).toMatch(/ib0/);
  });
});
