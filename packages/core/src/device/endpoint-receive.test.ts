// The endpointReceive decision (endpoint-receive.ts): auto resolves by the endpoint count; engine is never second-guessed; thread is
// kept only where docs/adr/0019 lets a reader serve, and every refusal says why.
import { describe, expect, it } from 'vitest';
import { endpointReceivePlan, resolveEndpointReceive } from './endpoint-receive.ts';

describe('resolveEndpointReceive', () => {
  it('takes auto (the default) for thread with two or more endpoints per process, engine with one (docs/adr/0021)', () => {
    expect(resolveEndpointReceive('auto', 1)).toBe('engine');
    expect(resolveEndpointReceive('auto', 2)).toBe('thread');
    expect(resolveEndpointReceive('auto', 8)).toBe('thread');
  });

  it('never second-guesses engine or thread', () => {
    for (const j of [1, 2, 8]) {
      expect(resolveEndpointReceive('engine', j)).toBe('engine');
      expect(resolveEndpointReceive('thread', j)).toBe('thread');
    }
  });
});

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
