// The PmiClient over a PMI dialect (direct-client.ts): what reaches the launcher's key/value space,
// against a recording dialect (the real ones are exercised by direct-launch-*.it.test.ts).
import { describe, expect, it } from 'vitest';
import { DirectPmiClient, type PmiDialect } from './direct-client.ts';
import type { PmiConnection } from './pmi-connection.ts';

function recordingDialect(maxValueBytes = 1024): PmiDialect & { calls: string[]; space: Map<string, string> } {
  const calls: string[] = [];
  const space = new Map<string, string>();
  return {
    version: 1,
    connection: null as unknown as PmiConnection,
    maxValueBytes,
    calls,
    space,
    put: async (k, v) => { calls.push(`put ${k}=${v}`); space.set(k, v); },
    barrier: async () => { calls.push('barrier'); },
    get: async (k) => { calls.push(`get ${k}`); return space.get(k) ?? null; },
    finalize: async () => { calls.push('finalize'); },
    abort: async (code) => { calls.push(`abort ${code}`); },
  };
}

describe('DirectPmiClient', () => {
  it('puts at the fence, prefixed and wire-safe, then the barrier; get decodes and remembers', async () => {
    const d = recordingDialect();
    const c = new DirectPmiClient(0, 2, d);
    c.put('tcp:0', '127.0.0.1:4000 unix:/tmp/x/t-0-4000');
    expect(d.calls).toEqual([]);
    await c.fence();
    expect(d.calls).toEqual(['put tsmpi.tcp:0=127.0.0.1:4000%20unix:/tmp/x/t-0-4000', 'barrier']);
    expect(await c.get('tcp:0')).toBe('127.0.0.1:4000 unix:/tmp/x/t-0-4000');
    expect(await c.get('tcp:0')).toBe('127.0.0.1:4000 unix:/tmp/x/t-0-4000');
    expect(d.calls.filter((x) => x.startsWith('get'))).toHaveLength(1);
  });

  it('names a missing key, a value tsmpi did not write and a value over the server\'s limit', async () => {
    const d = recordingDialect(16);
    const c = new DirectPmiClient(1, 2, d);
    await expect(c.get('tcp:9')).rejects.toThrow(/pmi.get: no value was put for key "tcp:9"/);
    d.space.set('tsmpi.x', 'a b');
    await expect(c.get('x')).rejects.toThrow(/that tsmpi did not write/);
    c.put('tcp:1', 'x'.repeat(17));
    await expect(c.fence()).rejects.toThrow(/the value of tcp:1 takes 17 bytes, more than the 16 the PMI-1 server stores/);
  });

  it('finalize goes to the launcher; peer-lost has nothing to tell it', async () => {
    const d = recordingDialect();
    const c = new DirectPmiClient(0, 1, d);
    await c.reportPeerLost(1);
    await c.reportFinalized({ messagesSent: 0, messagesReceived: 0, bytesSent: 0, bytesReceived: 0 });
    expect(d.calls).toEqual(['finalize']);
  });
});
