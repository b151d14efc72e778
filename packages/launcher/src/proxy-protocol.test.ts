import { describe, expect, it } from 'vitest';
import { decodeHeadMessage, decodeProxyMessage, encodeProxyMessage, parseLaunchSpec, PROXY_PROTOCOL_VERSION } from './proxy-protocol.ts';
import { candidateAddresses, isSlurmSpecFor } from './proxy.ts';

const SPEC = {
  v: PROXY_PROTOCOL_VERSION, key: 'k'.repeat(64), index: 1, host: 'th2', port: 4000, addresses: ['10.0.0.1'], size: 4,
  ranks: [{ rank: 2, localRank: 0, localSize: 2 }], file: '/usr/bin/node', args: ['p.ts'], wdir: '/w', env: { A: 'b' },
  iface: null, portRange: '5000-5100',
};

describe('proxy protocol', () => {
  it('round-trips every message both ways', () => {
    const fromProxy = [
      { t: 'hello', v: 3, index: 0, hostname: 'h', pid: 9, nonce: Buffer.alloc(32, 1), proof: Buffer.alloc(32, 2) }, { t: 'address', listenHost: '10.0.0.2' },
      { t: 'started', rank: 1, pid: 5 }, { t: 'startError', rank: 1, message: 'ENOENT' },
      { t: 'out', rank: 1, fd: 2, data: new Uint8Array([104, 10]) }, { t: 'exit', rank: 1, code: null, signal: 'SIGKILL' },
      { t: 'closed', rank: 1 }, { t: 'fatal', message: 'bad iface' }, { t: 'stdinAck', bytes: 65536 }, { t: 'hb' },
    ] as const;
    const plain = (m: object | null): unknown => (m !== null && 'data' in m ? { ...m, data: [...(m.data as Uint8Array)] } : m);
    for (const m of fromProxy) expect(plain(decodeProxyMessage(encodeProxyMessage(m)))).toEqual(plain(m));
    for (const m of [{ t: 'challenge', v: 3, nonce: Buffer.alloc(32, 5) }, { t: 'welcome', proof: Buffer.alloc(32, 6) }, { t: 'signal', rank: -1, sig: 'SIGINT' }, { t: 'stdinEnd' }, { t: 'hb' }] as const) {
      expect(decodeHeadMessage(encodeProxyMessage(m))).toEqual(m);
    }
    const chunk = decodeHeadMessage(encodeProxyMessage({ t: 'stdin', data: new Uint8Array([1, 2, 3]) }));
    expect(chunk?.t === 'stdin' ? [...chunk.data] : null).toEqual([1, 2, 3]);
  });

  it('returns null for malformed messages instead of throwing', () => {
    expect(decodeProxyMessage(new Uint8Array([0xc1]))).toBe(null);
    // A hello that carries a key instead of a proof is no hello (the key never travels on the link).
    expect(decodeProxyMessage(encodeProxyMessage({ t: 'hello', v: 3, key: 'k'.repeat(64), index: 0, hostname: 'h', pid: 9 } as never))).toBe(null);
    expect(decodeHeadMessage(encodeProxyMessage({ t: 'welcome' } as never))).toBe(null);
    expect(decodeProxyMessage(encodeProxyMessage({ t: 'out', rank: 1, fd: 3, data: new Uint8Array() } as never))).toBe(null);
    expect(decodeHeadMessage(encodeProxyMessage({ t: 'signal', rank: 'x' } as never))).toBe(null);
    expect(decodeHeadMessage(encodeProxyMessage({ t: 'stdin', data: 'text' } as never))).toBe(null);
    expect(decodeProxyMessage(encodeProxyMessage({ t: 'stdinAck', bytes: -1 } as never))).toBe(null);
  });

  it('parses the launch spec line and rejects other versions or shapes', () => {
    expect(parseLaunchSpec(JSON.stringify(SPEC))).toEqual(SPEC);
    expect((parseLaunchSpec(JSON.stringify({ ...SPEC, v: 99 })) as Error).message).toMatch(/version 99/);
    expect(parseLaunchSpec(JSON.stringify({ ...SPEC, ranks: [{ rank: 'x' }] }))).toBeInstanceOf(Error);
    expect(parseLaunchSpec('not json')).toBeInstanceOf(Error);
    expect(parseLaunchSpec(JSON.stringify({ ...SPEC, secure: true }))).toEqual({ ...SPEC, secure: true });
    expect(parseLaunchSpec(JSON.stringify({ ...SPEC, secure: 'yes' }))).toBeInstanceOf(Error);
  });

  it('tries the ssh client address first, then mpiexec\'s own list', () => {
    const spec = parseLaunchSpec(JSON.stringify({ ...SPEC, addresses: ['10.0.0.1', '198.18.0.2'] }));
    if (spec instanceof Error) throw spec;
    expect(candidateAddresses(spec, '198.18.0.2 51000 198.18.0.3 22')).toEqual(['198.18.0.2', '10.0.0.1']);
    expect(candidateAddresses(spec, undefined)).toEqual(['10.0.0.1', '198.18.0.2']);
  });

  it('under Slurm: each proxy takes the line of its node (SLURMD_NODENAME), or of its SLURM_NODEID for placeholders', () => {
    const n1 = { ...SPEC, host: 'n01' };
    const n2 = { ...SPEC, host: 'n02', index: 2 };
    expect(isSlurmSpecFor(n1, { SLURMD_NODENAME: 'n01', SLURM_NODEID: '1' })).toBe(true);
    expect(isSlurmSpecFor(n2, { SLURMD_NODENAME: 'n01', SLURM_NODEID: '1' })).toBe(false);
    expect(isSlurmSpecFor(n1, {})).toBe(false);
    // srun picked the nodes: the host is a placeholder and only the node id counts.
    const p1 = parseLaunchSpec(JSON.stringify({ ...SPEC, host: 'slurm-node-1', slurmNodeId: 1 }));
    if (p1 instanceof Error) throw p1;
    expect(p1.slurmNodeId).toBe(1);
    expect(isSlurmSpecFor(p1, { SLURMD_NODENAME: 'slurm-node-1', SLURM_NODEID: '0' })).toBe(false);
    expect(isSlurmSpecFor(p1, { SLURMD_NODENAME: 'n07', SLURM_NODEID: '1' })).toBe(true);
    expect(parseLaunchSpec(JSON.stringify({ ...SPEC, slurmNodeId: -1 }))).toBeInstanceOf(Error);
    expect(parseLaunchSpec(JSON.stringify({ ...SPEC, slurmNodeId: 'n01' }))).toBeInstanceOf(Error);
    // srun's host (SLURM_SRUN_COMM_HOST, one address) is tried first, as ssh's client address is.
    expect(candidateAddresses(n1, '198.19.12.1')).toEqual(['198.19.12.1', '10.0.0.1']);
  });
});
