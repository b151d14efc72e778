// Unit tests of coupling two jobs at a port (docs/adr/0043-connect-two-jobs.md): two DynamicServices,
// the accepting one behind a real WebSocket server on loopback (the port link, port-link.ts), no processes.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { DynamicService, type DynAnswer, type SpawnedWorld } from './dynamic-service.ts';
import { PORT_PATH } from './port-link.ts';

/** core's side bytes: Int32 [context id, endpoints...]. */
const side = (ctx: number, ...endpoints: number[]): Uint8Array => new Uint8Array(Int32Array.of(ctx, ...endpoints).buffer);
const words = (bytes: Uint8Array): number[] => Array.from(new Int32Array(Uint8Array.from(bytes).buffer));

/** What a job's mpiexec told its processes (wire-up peerFailed): [to, failed, why]. */
type Told = [number, number, string][];

function job(name: string, portAddress: string | null, universe = 4): { svc: DynamicService; store: Map<string, string>; told: Told; started: SpawnedWorld[] } {
  const store = new Map([['tcp:0', `${name}-0:1000`], ['tcp:1', `${name}-1:1000`]]);
  const told: Told = [];
  const started: SpawnedWorld[] = [];
  const svc = new DynamicService({
    universe, initial: 2, slotHosts: ['localhost'], wdir: null,
    whyNotHost: () => null, resolveProgram: (p) => `/abs/${p}`,
    startWorld: (w) => {
      started.push(w);
      return null;
    },
    portAddress: () => portAddress,
    store: { get: (k) => store.get(k), put: (k, v) => store.set(k, v) },
    tellPeerFailed: (to, failed, why) => told.push([to, failed, why]),
  });
  return { svc, store, told, started };
}

let server: WebSocketServer | null = null;
afterEach(() => {
  server?.close();
  server = null;
});

/** Job A behind a port-link server; resolves to A and its address. */
async function acceptingJob(universe = 4): Promise<ReturnType<typeof job> & { refusals: string[] }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  server = wss;
  await new Promise((r) => wss.once('listening', r));
  const a = job('a', `127.0.0.1:${(wss.address() as AddressInfo).port}`, universe);
  const refusals: string[] = [];
  wss.on('connection', (ws, req) => {
    expect(req.url).toBe(PORT_PATH);
    a.svc.acceptLink({
      ws, remote: 'test', localAddress: '127.0.0.1', authenticated: () => undefined,
      refuse: (_code, reason) => {
        refusals.push(reason);
        ws.close();
      },
    });
  });
  return { ...a, refusals };
}

const valueOf = (x: DynAnswer): Record<string, unknown> => {
  if ('error' in x) throw new Error(x.error.join(': '));
  return x.value as Record<string, unknown>;
};

/** A (accepting) and B coupled at a port, both groups confirmed: A's processes 0, 1 are B's 2, 3 and the reverse. */
async function coupledJobs(universe = 4): Promise<{ a: Awaited<ReturnType<typeof acceptingJob>>; b: ReturnType<typeof job>; port: string }> {
  const a = await acceptingJob(universe);
  const b = job('b', null, universe);
  const port = (valueOf(await a.svc.handle(0, 'openPort', {})) as unknown as string);
  const accepted = a.svc.handle(0, 'accept', { port, side: side(5, 0, 1), j: 1 });
  const connected = valueOf(await b.svc.handle(0, 'connect', { port, side: side(9, 0, 1), j: 1 }));
  const acc = valueOf(await accepted);
  const both = await Promise.all([
    a.svc.handle(0, 'coupled', { coupling: acc['coupling'], ok: true }),
    b.svc.handle(0, 'coupled', { coupling: connected['coupling'], ok: true }),
  ]);
  expect(both).toEqual([{ value: null }, { value: null }]);
  return { a, b, port: port.slice(0, -33) };
}

/** Resolves once `cond` holds (the link's messages cross a real socket); a deadlock guard of 10 s, not a timing. */
async function until(cond: () => boolean): Promise<void> {
  for (const giveUp = Date.now() + 10_000; !cond(); await new Promise((r) => setTimeout(r, 5))) {
    if (Date.now() > giveUp) throw new Error('condition not reached in 10 s');
  }
}

describe('coupling two jobs at a port', () => {
  it('a wrong secret is refused; the right one couples: numbers, renumbered sides, addresses and the pair key in both stores', async () => {
    const a = await acceptingJob();
    const b = job('b', null);
    const port = (valueOf(await a.svc.handle(0, 'openPort', {})) as unknown as string);
    expect(port).toMatch(/^tsmpi-port:[0-9a-f]{16}@127\.0\.0\.1:\d+:[0-9a-f]{32}$/);
    const wrong = `${port.slice(0, -32)}${port.endsWith('0') ? port.slice(-32, -1) + '1' : port.slice(-32, -1) + '0'}`;
    const refused = await b.svc.handle(0, 'connect', { port: wrong, side: side(9, 0, 1), j: 1 });
    expect(refused).toEqual({ error: ['ERR_PORT', expect.stringMatching(/refused the port/) as string] });
    expect(a.refusals).toEqual([expect.stringMatching(/proof matches no open port/) as string]);

    const accepted = a.svc.handle(0, 'accept', { port, side: side(5, 0, 1), j: 1 });
    const connected = valueOf(await b.svc.handle(0, 'connect', { port, side: side(9, 0, 1), j: 1 }));
    const acc = valueOf(await accepted);
    // Each side names the other group by numbers of its own universe (2 and 3: after its 2 processes).
    expect(words(acc['side'] as Uint8Array)).toEqual([9, 2, 3]);
    expect(words(connected['side'] as Uint8Array)).toEqual([5, 2, 3]);
    expect(a.svc.freeSlots).toBe(0);
    expect(b.svc.freeSlots).toBe(0);
    expect(a.store.get('tcp:2')).toBe('b-0:1000');
    expect(b.store.get('tcp:3')).toBe('a-1:1000');
    const pairA = JSON.parse(a.store.get('pair:2')!) as { key: string; as: Record<string, number> };
    const pairB = JSON.parse(b.store.get('pair:3')!) as { key: string; as: Record<string, number> };
    expect(pairA.key).toMatch(/^[0-9a-f]{64}$/);
    expect(pairB.key).toBe(pairA.key);
    expect(pairA.as).toEqual({ 0: 2, 1: 3 });
    // Each names the other job's process by its number there (a lost peer's error says it).
    expect((JSON.parse(a.store.get('pair:2')!) as { is: number }).is).toBe(0);
    expect((JSON.parse(b.store.get('pair:3')!) as { is: number }).is).toBe(1);
    // mpiexec's own lines name the other job's processes by their numbers there, and the port without its secret.
    const publicPort = port.slice(0, -33);
    expect(a.svc.coupledPeer(3)).toBe(`process 3 (process 1 of the job coupled at port ${publicPort})`);
    expect(b.svc.coupledPeer(2)).toBe(`process 2 (process 0 of the job coupled at port ${publicPort})`);
    expect(a.svc.coupledPeer(1)).toBeNull();
    expect(a.svc.couplingLines()).toEqual([`processes 2, 3 are another job's (coupled at port ${publicPort}; their 0, 1 there): its mpiexec's roll-call lists them`]);
    expect(a.svc.couplingLines().join('')).not.toContain(port.slice(-32));
    expect(pairB.as).toEqual({ 0: 2, 1: 3 });
    // Both groups took the coupling.
    const [ca, cb] = await Promise.all([
      a.svc.handle(0, 'coupled', { coupling: acc['coupling'], ok: true }),
      b.svc.handle(0, 'coupled', { coupling: connected['coupling'], ok: true }),
    ]);
    expect([ca, cb]).toEqual([{ value: null }, { value: null }]);
    // A spawn now needs a free slot like any other: none is left, and the refusal counts the coupled job's numbers.
    expect(await a.svc.handle(0, 'spawn', { commands: [{ command: 'c.js', args: [], maxprocs: 1 }], side: side(1) }))
      .toEqual({ error: ['ERR_SPAWN', expect.stringMatching(/more than the job's free slots: 0 of UNIVERSE_SIZE 4 \(2 processes started so far, 2 numbers given to coupled jobs' processes;/) as string] });
  });

  it('spawn after a coupling takes the job\'s next numbers (couplings take theirs from the top of the universe)', async () => {
    const { a, b } = await coupledJobs(7);
    // The other job's processes are numbers 5 and 6 in each job (the top of UNIVERSE_SIZE 7).
    expect(a.store.get('tcp:5')).toBe('b-0:1000');
    expect(b.store.get('tcp:6')).toBe('a-1:1000');
    const spawned = a.svc.handle(0, 'spawn', { commands: [{ command: 'c.js', args: [], maxprocs: 2 }], side: side(1) });
    expect(a.started.map((w) => [w.first, w.size])).toEqual([[2, 2]]);
    expect(await a.svc.handle(2, 'spawnJoin', { spawn: a.started[0]!.spawnId, side: side(2) })).toEqual({ value: { side: side(1) } });
    expect(await spawned).toEqual({ value: { first: 2, size: 2, side: side(2) } });
    // What is left: A's one number between its children (2, 3) and B's processes (5, 6); B's three.
    expect(a.svc.freeSlots).toBe(1);
    expect(b.svc.freeSlots).toBe(3);
  });

  it('after coupling, a failed process of one job is failed in every process of the other job\'s group, named by both numbers', async () => {
    const { a, b, port } = await coupledJobs();
    b.svc.processEnded(1, 'it exited with code 1 before MPI.finalize');
    await until(() => a.told.length === 2);
    const why = `process 3 (process 1 of the job coupled at port ${port}) failed: it exited with code 1 before MPI.finalize (as its job's mpiexec says)`;
    expect(a.told).toEqual([[0, 3, why], [1, 3, why]]);
    // Told once; a process that finalized is no failure, not even when its mpiexec's link closes afterwards.
    b.svc.processEnded(1, 'it was ended by SIGTERM');
    b.svc.processEnded(0, null);
    b.svc.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(a.told).toHaveLength(2);
    expect(b.told).toEqual([]);
  });

  it('the link\'s end fails the other group\'s processes that did not finalize; after a disconnect nothing passes either way', async () => {
    const first = await coupledJobs();
    first.a.svc.processEnded(0, null);
    first.a.svc.close();
    await until(() => first.b.told.length === 2);
    expect(first.b.told.map(([to, failed]) => [to, failed])).toEqual([[0, 3], [1, 3]]);
    expect(first.b.told[0]![2]).toMatch(/^process 3 \(process 1 of the job coupled at port .*\) is gone: its job's mpiexec ended without saying it finalized/);
    server?.close();

    const { a, b } = await coupledJobs();
    // The other job's processes only, or the decoupled request is refused.
    expect(await a.svc.handle(0, 'decoupled', { processes: [1] })).toEqual({ error: ['ERR_ARG', expect.stringMatching(/decoupled/) as string] });
    expect(await a.svc.handle(0, 'decoupled', { processes: [2, 3] })).toEqual({ value: null });
    expect(await b.svc.handle(0, 'decoupled', { processes: [2, 3] })).toEqual({ value: null });
    b.svc.processEnded(1, 'it exited with code 1 before MPI.finalize');
    a.svc.processEnded(1, 'it exited with code 1 before MPI.finalize');
    b.svc.close();
    await new Promise((r) => setTimeout(r, 200));
    expect(a.told).toEqual([]);
    expect(b.told).toEqual([]);
  });

  it('refuses both sides when the accepting job has no free slots, or the jobs differ in endpoints per process', async () => {
    const a = await acceptingJob();
    const b = job('b', null);
    const port = (valueOf(await a.svc.handle(0, 'openPort', {})) as unknown as string);
    const acc = a.svc.handle(0, 'accept', { port, side: side(5, 0, 1), j: 1 });
    const con = await b.svc.handle(0, 'connect', { port, side: side(9, 0, 1, 2, 3), j: 2 });
    expect(con).toEqual({ error: ['ERR_PORT', expect.stringMatching(/endpoints per process/) as string] });
    expect(await acc).toEqual({ error: ['ERR_PORT', expect.stringMatching(/endpoints per process/) as string] });
    expect(a.svc.freeSlots).toBe(2);
  });

  it('a job under channel engines offers each engine\'s address; the other job (inline) stores them per channel', async () => {
    const a = await acceptingJob();
    const b = job('b', null);
    // B runs 2 channel engines per process: core's init put tcp:P:C, no tcp:P.
    b.store.clear();
    for (const p of [0, 1]) for (const c of [0, 1]) b.store.set(`tcp:${p}:${c}`, `b-${p}-e${c}:1000`);
    const port = (valueOf(await a.svc.handle(0, 'openPort', {})) as unknown as string);
    const accepted = a.svc.handle(0, 'accept', { port, side: side(5, 0, 1), j: 1, channels: 2 });
    const connected = valueOf(await b.svc.handle(0, 'connect', { port, side: side(9, 0, 1), j: 1, engines: true, channels: 2 }));
    valueOf(await accepted);
    // A (inline) dials B's process 1 (A's 3) on channel c at its engine c (core: ForeignPeer.channelAddresses) ...
    expect(a.store.get('tcp:3')).toBe('b-1-e0:1000');
    expect((JSON.parse(a.store.get('pair:3')!) as { channels: string[] }).channels).toEqual(['b-1-e0:1000', 'b-1-e1:1000']);
    expect(a.store.get('tcp:3:1')).toBe('b-1-e1:1000');
    // ... and B's engines dial A's one listener on every channel.
    expect(b.store.get('tcp:2:0')).toBe('a-0:1000');
    expect(b.store.get('tcp:2:1')).toBe('a-0:1000');
    expect((JSON.parse(b.store.get('pair:2')!) as { channels?: string[] }).channels).toBeUndefined();
    expect(connected['coupling']).toEqual(expect.any(Number));
  });

  it('refuses both sides when the jobs run different channel counts (a frame\'s channel is its sender\'s choice)', async () => {
    const a = await acceptingJob();
    const b = job('b', null);
    const port = (valueOf(await a.svc.handle(0, 'openPort', {})) as unknown as string);
    const acc = a.svc.handle(0, 'accept', { port, side: side(5, 0, 1), j: 1, channels: 2 });
    const con = await b.svc.handle(0, 'connect', { port, side: side(9, 0, 1), j: 1, channels: 4 });
    expect(con).toEqual({ error: ['ERR_PORT', expect.stringMatching(/run 2 and 4 channels per process pair \(--channels\)/) as string] });
    expect(await acc).toEqual({ error: ['ERR_PORT', expect.stringMatching(/channels per process pair/) as string] });
    expect(a.svc.freeSlots).toBe(2);
  });

  it('a connect with no accept at another job\'s port gives up after its timeout (ERR_PORT)', async () => {
    const a = await acceptingJob();
    const b = job('b', null);
    const port = (valueOf(await a.svc.handle(0, 'openPort', {})) as unknown as string);
    expect(await b.svc.handle(0, 'connect', { port, side: side(9, 0), j: 1, timeout: 0.5 }))
      .toEqual({ error: ['ERR_PORT', expect.stringMatching(/no accept at port .* within 0.5 s/) as string] });
  });
});
