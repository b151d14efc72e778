/**
 * The wire-up service and the PMI client together, in one process over real
 * loopback sockets: fence/put/get across 4 clients, key and rank checks,
 * roll-call, the lost handler when the service goes away, and the rank's
 * link itself (core's pmi/link.ts, issue 38): TLS under --secure, a
 * WebSocket posing as a rank refused, a pre-hello frame over a hello's bound
 * refused and logged; a rank and an mpiexec of different tsmpi versions
 * (PMI_PROTOCOL_VERSION) refuse each other saying so.
 *
 * testlist: { file: 'wireup.it.test.ts', np: [4] }
 */
import net from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import {
  LINK_REQUEST, LINK_UPGRADE, LINK_VERSION_HEADER, MAX_HELLO_BYTES, PMI_PROTOCOL_VERSION, connectPmi, encodeMessageFrame, encodeServerMessage,
  type FinalizeReport, type JobEnv, type PmiClient,
} from '@tsmpi/core/pmi';
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

async function startJob(size: number, options: { readonly secure?: boolean; readonly log?: string[] } = {}): Promise<{ url: string; port: number; rec: Recorded; env: (rank: number) => JobEnv }> {
  const { events, rec } = recorder();
  const lines = options.log;
  const log = lines === undefined
    ? pino({ level: 'silent' })
    : pino({ level: 'debug' }, new Writable({ write: (chunk: Buffer, _enc, done) => { lines.push(chunk.toString()); done(); } }));
  server = new WireupServer(size, KEY, log, events, { secure: options.secure === true });
  const port = await server.start();
  const url = `${options.secure === true ? 'tls' : 'tcp'}://127.0.0.1:${port}`;
  return { url, port, rec, env: (rank) => ({ rank, size, localRank: rank, localSize: size, pmiUrl: url, jobKey: KEY, listenHost: '127.0.0.1' }) };
}

/** The service's refusals among its NDJSON log lines. */
function refusals(lines: readonly string[]): Record<string, string>[] {
  return lines.map((l) => JSON.parse(l) as Record<string, string>).filter((r) => String(r['msg']).startsWith('wire-up connection refused'));
}

/** A raw connection to the service: writes `bytes` once connected; resolves with what came back once it closed (or after 5 s). */
function rawExchange(port: number, bytes: Buffer): Promise<{ received: Buffer; isClosed: boolean }> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(bytes));
    const got: Buffer[] = [];
    s.on('data', (b: Buffer) => got.push(b));
    s.on('error', () => undefined);
    const timer = setTimeout(() => { s.destroy(); resolve({ received: Buffer.concat(got), isClosed: false }); }, 5_000);
    s.on('close', () => { clearTimeout(timer); resolve({ received: Buffer.concat(got), isClosed: true }); });
  });
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

  it('a close makes an MPIError only for a request still waiting: none at a finalize, the pending get rejected', async () => {
    const { env } = await startJob(2);
    const idle = await connectPmi(env(0));
    const busy = await connectPmi(env(1));
    // An MPIError captures its stack (util/user-stack.ts captureSite, `above` = MPIError) when made.
    const capture = Error.captureStackTrace;
    let made = 0;
    Error.captureStackTrace = (target: object, above?: Function): void => {
      if (above?.name === 'MPIError') made++;
      capture(target, above);
    };
    try {
      await idle.close();
      expect(made).toBe(0);
      const fence = busy.fence(); // rank 0 never joins it: still waiting at the close
      const rejected = expect(fence).rejects.toMatchObject({ call: 'pmi.fence', message: expect.stringMatching(/the wire-up connection was closed/) });
      await busy.close();
      await rejected;
      expect(made).toBeGreaterThan(0);
    } finally {
      Error.captureStackTrace = capture;
    }
  });

  it('under --secure, ranks join over TLS keyed by the job; a plain link gets no challenge', async () => {
    const { env, port } = await startJob(2, { secure: true });
    const [a, b] = await Promise.all([connectPmi(env(0)), connectPmi(env(1))]);
    clients.push(a!, b!);
    a!.put('k', 'v');
    await Promise.all([a!.fence(), b!.fence()]);
    expect(await b!.get('k')).toBe('v');
    await expect(connectPmi({ ...env(1), pmiUrl: `tcp://127.0.0.1:${port}` })).rejects.toMatchObject({ call: 'pmi.connect' });
    const plain = await rawExchange(port, Buffer.from(LINK_REQUEST));
    expect(plain.isClosed).toBe(true);
    expect(plain.received.toString('latin1')).not.toContain('challenge');
  });

  it('a WebSocket posing as a rank is refused at its upgrade: ranks join over their link only', async () => {
    const lines: string[] = [];
    const { port } = await startJob(1, { log: lines });
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { perMessageDeflate: false });
    let messages = 0;
    ws.on('message', () => messages++);
    const failed = await new Promise<boolean>((resolve) => {
      ws.on('error', () => resolve(true));
      ws.on('open', () => resolve(false));
    });
    expect(failed).toBe(true);
    expect(messages).toBe(0);
    expect(refusals(lines).map((r) => r['reason'])).toEqual(["not a rank's link, nor a WebSocket on the proxies' or ports' path"]);
  });

  it('a frame before the hello larger than a hello is refused from its header, logged with the remote address', async () => {
    const lines: string[] = [];
    const { port, rec } = await startJob(1, { log: lines });
    const header = Buffer.alloc(5);
    header.writeUInt32BE(16 * 1024 * 1024, 0);
    const r = await rawExchange(port, Buffer.concat([Buffer.from(LINK_REQUEST), header, Buffer.alloc(MAX_HELLO_BYTES + 1)]));
    expect(r.isClosed).toBe(true);
    // The service answered the upgrade and challenged, and nothing more.
    expect(r.received.toString('latin1')).toMatch(/^HTTP\/1\.1 101 /);
    expect(r.received.toString('latin1')).not.toContain('welcome');
    const [refusal, ...others] = refusals(lines);
    expect(others).toEqual([]);
    expect(refusal!['remote']).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(refusal!['error']).toMatch(/frame of 16777216 bytes/);
    expect(rec.joined).toEqual([]);
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

describe('a rank and an mpiexec of different tsmpi versions', () => {
  const V = PMI_PROTOCOL_VERSION;
  const MISMATCH = (theirs: number): RegExp => new RegExp(`^MPI_ERR_OTHER: pmi\\.connect: mpiexec and the rank are from different tsmpi versions: wire-up protocol ${theirs} vs ${V} `);

  it('the service answers a link of another version with its own version, no challenge, and logs the refusal', async () => {
    const lines: string[] = [];
    const { port, rec } = await startJob(1, { log: lines });
    const newer = LINK_REQUEST.replace(`${LINK_VERSION_HEADER}: ${V}`, `${LINK_VERSION_HEADER}: ${V + 1}`);
    expect(newer).not.toBe(LINK_REQUEST);
    const r = await rawExchange(port, Buffer.from(newer));
    expect(r.isClosed).toBe(true);
    const text = r.received.toString('latin1');
    expect(text).toMatch(/^HTTP\/1\.1 426 /);
    expect(text).toContain(`\r\n${LINK_VERSION_HEADER}: ${V}\r\n`);
    expect(text.endsWith('\r\n\r\n')).toBe(true); // the head only: no frame, no challenge
    expect(refusals(lines).map((l) => l['reason'])).toEqual([`a rank link of another tsmpi version: wire-up protocol ${V + 1}, this mpiexec's ${V}`]);
    expect(rec.joined).toEqual([]);
  });

  /** A stand-in for an mpiexec of version `v`: answers a link's opening with `answer(v)` and keeps the socket open. */
  async function otherService(answer: string | Buffer): Promise<{ port: number; close: () => void }> {
    const sockets: net.Socket[] = [];
    const srv = net.createServer((s) => {
      sockets.push(s);
      s.on('error', () => undefined);
      s.once('data', () => s.write(answer));
    });
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    return { port: (srv.address() as net.AddressInfo).port, close: () => { for (const s of sockets) s.destroy(); srv.close(); } };
  }
  const envAt = (pmiUrl: string): JobEnv => ({ rank: 0, size: 1, localRank: 0, localSize: 1, pmiUrl, jobKey: KEY, listenHost: '127.0.0.1' });

  it('a rank refused at the opening by a newer mpiexec says both versions', async () => {
    const other = await otherService(`HTTP/1.1 426 Upgrade Required\r\nConnection: close\r\nUpgrade: ${LINK_UPGRADE}\r\n${LINK_VERSION_HEADER}: ${V + 1}\r\n\r\n`);
    try {
      await expect(connectPmi(envAt(`tcp://127.0.0.1:${other.port}`))).rejects.toThrow(MISMATCH(V + 1));
    } finally {
      other.close();
    }
  });

  it('a rank challenged in another version (the opening passed) says both versions', async () => {
    const challenge = encodeMessageFrame(encodeServerMessage({ t: 'challenge', v: V + 1, nonce: Buffer.alloc(32, 7) }));
    const other = await otherService(Buffer.concat([Buffer.from(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${LINK_UPGRADE}\r\n${LINK_VERSION_HEADER}: ${V}\r\n\r\n`), challenge]));
    try {
      await expect(connectPmi(envAt(`tcp://127.0.0.1:${other.port}`))).rejects.toThrow(MISMATCH(V + 1));
    } finally {
      other.close();
    }
  });

  it('a rank given an older mpiexec\'s ws:// address (protocol 2, WebSocket ranks) says both versions', async () => {
    await expect(connectPmi(envAt('ws://127.0.0.1:1'))).rejects.toThrow(MISMATCH(2));
  });
});
