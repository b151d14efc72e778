/**
 * The wire-up service and the PMI client together, in one process over real
 * loopback sockets: fence/put/get across 4 clients, key and rank checks,
 * roll-call, and the lost handler when the service goes away.
 *
 * testlist: { file: 'wireup.it.test.ts', np: [4] }
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { connectPmi, type FinalizeReport, type JobEnv, type PmiClient } from '@tsmpi/core/pmi';
import { WireupServer, type WireupEvents } from '@tsmpi/launcher';

const KEY = 'ab'.repeat(32);

interface Recorded {
  joined: number[];
  initialized: number[];
  finalized: [number, FinalizeReport][];
  aborts: [number, number, string][];
  peersLost: [number, number][];
}

function recorder(): { events: WireupEvents; rec: Recorded } {
  const rec: Recorded = { joined: [], initialized: [], finalized: [], aborts: [], peersLost: [] };
  return {
    rec,
    events: {
      onJoined: (r) => rec.joined.push(r),
      onInitialized: (r) => rec.initialized.push(r),
      onFinalized: (r, report) => rec.finalized.push([r, report]),
      onAbort: (r, code, msg) => rec.aborts.push([r, code, msg]),
      onPeerLost: (r, lost) => rec.peersLost.push([r, lost]),
    },
  };
}

let server: WireupServer | null = null;
const clients: PmiClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
  server = null;
});

async function startJob(size: number): Promise<{ url: string; rec: Recorded; env: (rank: number) => JobEnv }> {
  const { events, rec } = recorder();
  server = new WireupServer(size, KEY, pino({ level: 'silent' }), events);
  const url = `ws://127.0.0.1:${await server.start()}`;
  return { url, rec, env: (rank) => ({ rank, size, localRank: rank, localSize: size, pmiUrl: url, jobKey: KEY, listenHost: '127.0.0.1' }) };
}

describe('wire-up service', () => {
  it('fence makes every put visible to every rank; reports reach the job', async () => {
    const { rec, env } = await startJob(4);
    const all = await Promise.all([0, 1, 2, 3].map((r) => connectPmi(env(r))));
    clients.push(...all);
    expect(rec.joined.sort()).toEqual([0, 1, 2, 3]);
    for (const c of all) c.put(`addr-${c.rank}`, `host:${c.rank}`);
    await Promise.all(all.map((c) => c.fence()));
    for (const c of all) {
      for (let r = 0; r < 4; r++) expect(await c.get(`addr-${r}`)).toBe(`host:${r}`);
    }
    await expect(all[0]!.get('missing')).rejects.toThrow(/no value was put for key "missing"/);
    // A second epoch: values put after the first fence become visible after the second.
    all[2]!.put('late', 'yes');
    await Promise.all(all.map((c) => c.fence()));
    expect(await all[3]!.get('late')).toBe('yes');
    for (const c of all) c.reportInitialized();
    await Promise.all(all.map((c) => c.reportFinalized({ messagesSent: c.rank, messagesReceived: 1, bytesSent: 2, bytesReceived: 3 })));
    expect(rec.initialized.sort()).toEqual([0, 1, 2, 3]);
    expect(rec.finalized.map(([r]) => r).sort()).toEqual([0, 1, 2, 3]);
    expect(rec.finalized.find(([r]) => r === 2)![1]).toEqual({ messagesSent: 2, messagesReceived: 1, bytesSent: 2, bytesReceived: 3 });
  });

  it('a fence waits for every rank', async () => {
    const { env } = await startJob(2);
    const [a, b] = await Promise.all([connectPmi(env(0)), connectPmi(env(1))]);
    clients.push(a!, b!);
    let isDone = false;
    const fa = a!.fence().then(() => {
      isDone = true;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(isDone).toBe(false);
    await b!.fence();
    await fa;
    expect(isDone).toBe(true);
    const again = a!.fence();
    await expect(a!.fence()).rejects.toThrow(/already in progress/);
    await Promise.all([again, b!.fence()]);
  }, 10_000);

  it('refuses a wrong key and a taken or out-of-range rank; members are unaffected', async () => {
    const { env, rec } = await startJob(2);
    const good = await connectPmi(env(0));
    clients.push(good);
    await expect(connectPmi({ ...env(1), jobKey: 'cd'.repeat(32) })).rejects.toThrow(/refused the job key/);
    await expect(connectPmi(env(0))).rejects.toThrow(/close code 4003/);
    await expect(connectPmi(env(5))).rejects.toThrow(/close code 4003/);
    const other = await connectPmi(env(1));
    clients.push(other);
    await Promise.all([good.fence(), other.fence()]);
    expect(rec.joined).toEqual([0, 1]);
  });

  it('roll-call collects what each rank is blocked in', async () => {
    const { env } = await startJob(3);
    const all = await Promise.all([0, 1, 2].map((r) => connectPmi(env(r))));
    clients.push(...all);
    all[0]!.setRollCallHandler(() => null);
    all[1]!.setRollCallHandler(() => ({ call: 'send', comm: 'COMM_WORLD', peer: 2, tag: 5 }));
    all[2]!.setRollCallHandler(() => {
      throw new Error('handler bug');
    });
    const answers = await server!.rollCall(1000);
    expect(answers.get(0)).toEqual({ kind: 'notInMpi' });
    expect(answers.get(1)).toEqual({ kind: 'blocked', blockedIn: { call: 'send', comm: 'COMM_WORLD', peer: 2, tag: 5 } });
    expect(answers.get(2)).toEqual({ kind: 'notInMpi' });
  });

  it('abort reaches the job before it resolves', async () => {
    const { env, rec } = await startJob(1);
    const c = await connectPmi(env(0));
    clients.push(c);
    await c.abort(9, 'giving up');
    expect(rec.aborts).toEqual([[0, 9, 'giving up']]);
  });

  it('a peer-loss report reaches the job before it resolves', async () => {
    const { env, rec } = await startJob(3);
    const c = await connectPmi(env(2));
    clients.push(c);
    await c.reportPeerLost(1);
    expect(rec.peersLost).toEqual([[2, 1]]);
  });

  it('calls the lost handler and rejects a pending fence when the service goes away', async () => {
    const { env } = await startJob(2);
    const c = await connectPmi(env(0));
    clients.push(c);
    const lost = new Promise<Error>((resolve) => c.setLostHandler(resolve));
    const fence = c.fence();
    await server!.close();
    server = null;
    await expect(fence).rejects.toThrow(/lost/);
    expect((await lost).message).toMatch(/connection to the launcher's wire-up service lost/);
  });

  it('close() does not call the lost handler and later calls reject', async () => {
    const { env } = await startJob(1);
    const c = await connectPmi(env(0));
    let isLost = false;
    c.setLostHandler(() => {
      isLost = true;
    });
    await c.close();
    await c.close();
    expect(isLost).toBe(false);
    await expect(c.fence()).rejects.toThrow(/closed/);
  });
});
