// The endpointReceive decision (endpoint-receive.ts): engine is never second-guessed; thread is
// kept only where docs/adr/0019 lets a reader serve, and every refusal says why.
import { describe, expect, it } from 'vitest';
import { endpointReceivePlan } from './endpoint-receive.ts';

describe('endpointReceivePlan', () => {
  it('leaves the engine path alone, silently, in every mode', () => {
    for (const progress of ['inline', 'threads', 'engines'] as const) {
      for (const n of [1, 2, 8]) expect(endpointReceivePlan('engine', progress, n)).toEqual({ path: 'engine', why: null });
    }
  });

  it('gives a reader to threads and inline progress of a multi-process job', () => {
    expect(endpointReceivePlan('thread', 'threads', 2)).toEqual({ path: 'thread', why: null });
    expect(endpointReceivePlan('thread', 'inline', 3)).toEqual({ path: 'thread', why: null });
  });

  it('keeps the engine path, saying why, with --progress engines or one process', () => {
    const engines = endpointReceivePlan('thread', 'engines', 2);
    expect(engines.path).toBe('engine');
    expect(engines.why).toMatch(/--progress engines/);
    const single = endpointReceivePlan('thread', 'threads', 1);
    expect(single.path).toBe('engine');
    expect(single.why).toMatch(/one process/);
    const hosts = endpointReceivePlan('thread', 'threads', 4, 2);
    expect(hosts.path).toBe('engine');
    expect(hosts.why).toMatch(/several hosts/);
    expect(endpointReceivePlan('thread', 'threads', 4, 4)).toEqual({ path: 'thread', why: null });
  });
});
