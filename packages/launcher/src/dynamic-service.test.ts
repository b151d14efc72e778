// Unit tests of mpiexec's dynamic-process service: slots, placement, the leaders' swap, ports and names (no processes).
import { describe, expect, it, vi } from 'vitest';
import { couplingTls } from '@tsmpi/core/pmi';
import { DynamicService, expandSlots, universeSize, type DynAnswer, type SpawnedWorld } from './dynamic-service.ts';

function service(universe: number, initial: number, slotHosts = ['localhost'], more: { secure?: boolean; portAddress?: () => string } = {}): { svc: DynamicService; started: SpawnedWorld[] } {
  const started: SpawnedWorld[] = [];
  const svc = new DynamicService({
    ...more,
    universe, initial, slotHosts, wdir: null,
    whyNotHost: (h) => (h === 'localhost' || h === 'here' || h === 'th2' ? null : `host ${h} is not reachable by this job's launcher`),
    resolveProgram: (p) => (p.endsWith('.js') ? `/abs/${p}` : null),
    startWorld: (w) => {
      started.push(w);
      return null;
    },
  });
  return { svc, started };
}

const side = (n: number): Uint8Array => Uint8Array.of(n);
const errorOf = (a: DynAnswer): string | null => ('error' in a ? a.error[0] : null);

describe('DynamicService spawn', () => {
  it('gives the next free process numbers and answers once the children\'s leader joined', async () => {
    const { svc, started } = service(8, 2);
    const answer = svc.handle(0, 'spawn', { commands: [{ command: 'child.js', args: ['a'], maxprocs: 2 }], side: side(1) });
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ first: 2, size: 2, commands: [{ program: '/abs/child.js', args: ['a'], hosts: ['localhost', 'localhost'] }] });
    expect(svc.freeSlots).toBe(4);
    // Only the world's first process is its leader.
    expect(errorOf(await svc.handle(3, 'spawnJoin', { spawn: started[0]!.spawnId, side: side(2) }))).toBe('ERR_ARG');
    const join = await svc.handle(2, 'spawnJoin', { spawn: started[0]!.spawnId, side: side(2) });
    expect(join).toEqual({ value: { side: side(1) } });
    expect(await answer).toEqual({ value: { first: 2, size: 2, side: side(2) } });
  });

  it('refuses more processes than free slots with ERR_SPAWN naming them, and bad maxprocs', async () => {
    const { svc, started } = service(4, 2);
    const more = await svc.handle(0, 'spawn', { commands: [{ command: 'c.js', args: [], maxprocs: 3 }], side: side(1) });
    expect(more).toEqual({ error: ['ERR_SPAWN', expect.stringMatching(/maxprocs 3 is more than the job's free slots: 2 of UNIVERSE_SIZE 4/)] });
    expect(errorOf(await svc.handle(0, 'spawn', { commands: [{ command: 'c.js', args: [], maxprocs: 0 }], side: side(1) }))).toBe('ERR_SPAWN');
    expect(errorOf(await svc.handle(0, 'spawn', { commands: [{ command: 'missing', args: [], maxprocs: 1 }], side: side(1) }))).toBe('ERR_SPAWN');
    expect(await svc.handle(0, 'spawn', { commands: [{ command: 'c.js', args: [], maxprocs: 1, host: 'elsewhere' }], side: side(1) }))
      .toEqual({ error: ['ERR_SPAWN', 'host elsewhere is not reachable by this job\'s launcher'] });
    expect(started).toHaveLength(0);
    expect(svc.freeSlots).toBe(2);
  });

  it('two spawns from different processes at once: each its own numbers and its own leader, answered in any order', async () => {
    const { svc, started } = service(8, 2);
    const a = svc.handle(0, 'spawn', { commands: [{ command: 'a.js', args: [], maxprocs: 1 }], side: side(10) });
    const b = svc.handle(1, 'spawn', { commands: [{ command: 'b.js', args: [], maxprocs: 2 }], side: side(11) });
    expect(started.map((w) => [w.first, w.size])).toEqual([[2, 1], [3, 2]]);
    // The later world's leader joins first; each gets its own parent's side.
    expect(await svc.handle(3, 'spawnJoin', { spawn: started[1]!.spawnId, side: side(21) })).toEqual({ value: { side: side(11) } });
    expect(await b).toEqual({ value: { first: 3, size: 2, side: side(21) } });
    expect(await svc.handle(2, 'spawnJoin', { spawn: started[0]!.spawnId, side: side(20) })).toEqual({ value: { side: side(10) } });
    expect(await a).toEqual({ value: { first: 2, size: 1, side: side(20) } });
  });

  it('a world the job cannot start gives its numbers back (the next spawn gets them)', async () => {
    let refuse = true;
    const started: SpawnedWorld[] = [];
    const svc = new DynamicService({
      universe: 6, initial: 2, slotHosts: ['localhost'], wdir: null, whyNotHost: () => null, resolveProgram: (p) => `/abs/${p}`,
      startWorld: (w) => {
        if (refuse) return new Error('the job is ending');
        started.push(w);
        return null;
      },
    });
    expect(await svc.handle(0, 'spawn', { commands: [{ command: 'a.js', args: [], maxprocs: 2 }], side: side(1) })).toEqual({ error: ['ERR_SPAWN', 'the job is ending'] });
    expect(svc.freeSlots).toBe(4);
    refuse = false;
    void svc.handle(0, 'spawn', { commands: [{ command: 'a.js', args: [], maxprocs: 2 }], side: side(1) });
    expect(started.map((w) => w.first)).toEqual([2]);
  });

  it('places spawnMultiple\'s commands in order on the slots after the processes already started', () => {
    const { svc, started } = service(6, 2, ['localhost', 'localhost', 'here', 'here', 'here', 'localhost']);
    void svc.handle(0, 'spawn', { commands: [{ command: 'a.js', args: [], maxprocs: 1 }, { command: 'b.js', args: [], maxprocs: 2, host: 'here' }], side: side(1) });
    expect(started[0]!.commands.map((c) => c.hosts)).toEqual([['here'], ['here', 'here']]);
  });

  it('places children on the job\'s other hosts by slot, and on the host that info host names', () => {
    const { svc, started } = service(6, 2, ['localhost', 'localhost', 'th2', 'th2', 'th2', 'th2']);
    void svc.handle(0, 'spawn', { commands: [{ command: 'a.js', args: [], maxprocs: 2 }], side: side(1) });
    void svc.handle(0, 'spawn', { commands: [{ command: 'a.js', args: [], maxprocs: 1, host: 'localhost' }], side: side(1) });
    expect(started.map((w) => [w.first, w.commands[0]!.hosts])).toEqual([[2, ['th2', 'th2']], [4, ['localhost']]]);
  });
});

describe('DynamicService ports and names', () => {
  it('pairs an accept with a connect at one port, in either order; a closed or made-up port is ERR_PORT', async () => {
    const { svc } = service(2, 2);
    const port = ((await svc.handle(0, 'openPort', {})) as { value: string }).value;
    expect(port).toMatch(/^tsmpi-port:[0-9a-f]{16}:[0-9a-f]{32}$/);
    const acc = svc.handle(0, 'accept', { port, side: side(1) });
    expect(await svc.handle(1, 'connect', { port, side: side(2) })).toEqual({ value: { side: side(1) } });
    expect(await acc).toEqual({ value: { side: side(2) } });
    const con = svc.handle(1, 'connect', { port, side: side(4) });
    expect(await svc.handle(0, 'accept', { port, side: side(3) })).toEqual({ value: { side: side(4) } });
    expect(await con).toEqual({ value: { side: side(3) } });
    expect(errorOf(await svc.handle(0, 'connect', { port: 'tsmpi-port:00', side: side(1) }))).toBe('ERR_PORT');
    const waiting = svc.handle(0, 'accept', { port, side: side(1) });
    expect(await svc.handle(0, 'closePort', { port })).toEqual({ value: null });
    expect(errorOf(await waiting)).toBe('ERR_PORT');
    expect(errorOf(await svc.handle(0, 'closePort', { port }))).toBe('ERR_PORT');
  });

  // mpiexec --secure (docs/adr/0043, "--secure"): its ports say so, the wire-up service finds an open port's TLS key by
  // the identity a hash of its secret names, and a job with --secure and one without refuse each other's ports, saying why.
  it('--secure: tsmpi-tls-port names, a TLS key per open port until it closes, mixed jobs refused without the secret in the text', async () => {
    const secure = service(4, 2, ['localhost'], { secure: true, portAddress: () => '127.0.0.1:9' }).svc;
    const plain = service(4, 2, ['localhost'], { portAddress: () => '127.0.0.1:9' }).svc;
    const tlsPort = ((await secure.handle(0, 'openPort', {})) as { value: string }).value;
    expect(tlsPort).toMatch(/^tsmpi-tls-port:[0-9a-f]{16}@127\.0\.0\.1:9:[0-9a-f]{32}$/);
    const { identity, psk } = couplingTls('port', tlsPort.slice(-32));
    expect(secure.portPsk(identity)?.equals(psk)).toBe(true);
    expect(secure.portPsk(couplingTls('port', '0'.repeat(32)).identity)).toBe(null);
    expect(plain.portPsk(identity)).toBe(null);
    const plainPort = ((await plain.handle(0, 'openPort', {})) as { value: string }).value;
    const toSecure = await plain.handle(0, 'connect', { port: tlsPort, side: side(1) });
    expect(toSecure).toEqual({ error: ['ERR_PORT', expect.stringMatching(/runs with --secure and this one does not/) as string] });
    const toPlain = await secure.handle(0, 'connect', { port: plainPort, side: side(1) });
    expect(toPlain).toEqual({ error: ['ERR_PORT', expect.stringMatching(/this job runs with --secure and the port's job does not/) as string] });
    for (const [answer, port] of [[toSecure, tlsPort], [toPlain, plainPort]] as const) {
      const text = (answer as { error: [string, string] }).error[1];
      expect(text).toContain(port.slice(0, -33));
      expect(text).not.toContain(port.slice(-32));
    }
    expect(await secure.handle(0, 'closePort', { port: tlsPort })).toEqual({ value: null });
    expect(secure.portPsk(identity)).toBe(null);
  });

  // A port without an address (this test's services: docs/adr/0043-connect-two-jobs.md) is not coupled to:
  // another job's says so, and a guessed secret is just unknown. Coupling itself: job-coupling.test.ts.
  it('tells a port of another job from a closed one; a wrong secret with this job\'s tag is not open', async () => {
    const a = service(2, 2).svc;
    const b = service(2, 2).svc;
    const portA = ((await a.handle(0, 'openPort', {})) as { value: string }).value;
    const fromB = await b.handle(0, 'connect', { port: portA, side: side(1) });
    expect(fromB).toEqual({ error: ['ERR_PORT', expect.stringMatching(/was opened by another mpiexec job/) as string] });
    const guessed = `${portA.slice(0, -32)}${'0'.repeat(32)}`;
    expect(await a.handle(0, 'connect', { port: guessed, side: side(1) })).toEqual({ error: ['ERR_PORT', expect.stringMatching(/is not an open port of this job/) as string] });
    const acc = a.handle(0, 'accept', { port: portA, side: side(1) });
    expect(await a.handle(1, 'connect', { port: portA, side: side(2) })).toEqual({ value: { side: side(1) } });
    expect(await acc).toEqual({ value: { side: side(2) } });
  });

  // As MPICH's MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT: a connect at an open port with no accept gives up after its timeout.
  it('refuses a connect with no accept after its timeout (ERR_PORT), and a bad timeout (ERR_INFO_VALUE)', async () => {
    vi.useFakeTimers();
    try {
      const { svc } = service(2, 2);
      const port = ((await svc.handle(0, 'openPort', {})) as { value: string }).value;
      let answer: DynAnswer | null = null;
      void svc.handle(1, 'connect', { port, side: side(2), timeout: 5 }).then((a) => { answer = a; });
      await vi.advanceTimersByTimeAsync(4_900);
      expect(answer).toBeNull();
      await vi.advanceTimersByTimeAsync(200);
      expect(answer).toEqual({ error: ['ERR_PORT', expect.stringMatching(/^no accept at port "tsmpi-port:[0-9a-f]{16}:\(secret\)" within 5 s/) as string] });
      // The timed-out connect is gone: the next accept waits for a new connect instead of pairing with it.
      const acc = svc.handle(0, 'accept', { port, side: side(1) });
      expect(await svc.handle(1, 'connect', { port, side: side(3) })).toEqual({ value: { side: side(1) } });
      expect(await acc).toEqual({ value: { side: side(3) } });
      for (const t of [0, -1, 'x', 1e9]) expect(errorOf(await svc.handle(1, 'connect', { port, side: side(2), timeout: t }))).toBe('ERR_INFO_VALUE');
    } finally {
      vi.useRealTimers();
    }
  });

  it('publishes, looks up and unpublishes names; an unknown service is ERR_NAME', async () => {
    const { svc } = service(2, 2);
    expect(await svc.handle(0, 'publish', { service: 'ocean', port: 'p1' })).toEqual({ value: null });
    expect(errorOf(await svc.handle(0, 'publish', { service: 'ocean', port: 'p2' }))).toBe('ERR_SERVICE');
    expect(await svc.handle(1, 'lookup', { service: 'ocean' })).toEqual({ value: 'p1' });
    expect(errorOf(await svc.handle(0, 'unpublish', { service: 'ocean', port: 'p2' }))).toBe('ERR_SERVICE');
    expect(await svc.handle(0, 'unpublish', { service: 'ocean', port: 'p1' })).toEqual({ value: null });
    expect(errorOf(await svc.handle(1, 'lookup', { service: 'ocean' }))).toBe('ERR_NAME');
  });
});

describe('universeSize and expandSlots', () => {
  it('counts the host list\'s slots, never fewer than -n; TSMPI_UNIVERSE overrides', () => {
    expect(universeSize(2, null, null, {})).toBe(2);
    expect(universeSize(2, [{ host: 'a', slots: 4 }, { host: 'b', slots: null }], null, {})).toBe(5);
    expect(universeSize(4, [{ host: 'a', slots: 1 }], null, {})).toBe(4);
    expect(universeSize(2, [{ host: 'a', slots: 1 }, { host: 'b', slots: 1 }], 3, {})).toBe(6);
    expect(universeSize(2, null, null, { TSMPI_UNIVERSE: '8' })).toBe(8);
    expect(universeSize(2, null, null, { TSMPI_UNIVERSE: '1' })).toBeInstanceOf(Error);
    expect(expandSlots([{ host: 'a', slots: 2 }, { host: 'b', slots: null }], null)).toEqual(['a', 'a', 'b']);
  });
});
