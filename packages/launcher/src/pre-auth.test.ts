// The pre-authentication gate over real loopback sockets: the byte bound, the
// bound on waiting connections (oldest closed first), and authentication lifting both.
import net from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_BYTES, MAX_WAITING, PreAuthGate } from './pre-auth.ts';

const open: net.Socket[] = [];
let server: net.Server | null = null;

afterEach(async () => {
  for (const s of open.splice(0)) s.destroy();
  await new Promise<void>((r) => (server === null ? r() : server.close(() => r())));
  server = null;
});

/** A listening server whose accepted sockets the gate admits (and counts from the start, as after an upgrade). */
async function gated(gate: PreAuthGate): Promise<{ port: number; accepted: net.Socket[] }> {
  const accepted: net.Socket[] = [];
  server = net.createServer((s) => {
    gate.admit(s);
    gate.countBytes(s, Buffer.alloc(0));
    s.on('data', () => undefined); // the reader after the gate, as ws is
    accepted.push(s);
    open.push(s);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, accepted };
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.on('error', () => undefined);
    open.push(s);
  });
}

const closed = (s: net.Socket): Promise<void> => new Promise((r) => (s.destroyed ? r() : s.once('close', () => r())));
const until = async (cond: () => boolean): Promise<void> => {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
};

describe('pre-authentication gate', () => {
  it('closes a connection that sends more than MAX_BYTES before authenticating; an authenticated one may send more', async () => {
    const lines: string[] = [];
    const gate = new PreAuthGate(pino({ level: 'debug' }, { write: (l: string) => lines.push(l) }));
    const { port, accepted } = await gated(gate);
    const stranger = await connect(port);
    const member = await connect(port);
    await until(() => accepted.length === 2);
    gate.authenticated(accepted[1]!);
    stranger.write(Buffer.alloc(MAX_BYTES + 1));
    member.write(Buffer.alloc(MAX_BYTES * 4));
    await closed(accepted[0]!);
    // The byte bound closed it, not the lifetime.
    expect(lines.join('')).toContain(`more than ${MAX_BYTES} bytes before an accepted hello`);
    await new Promise((r) => setTimeout(r, 100));
    expect(accepted[1]!.destroyed).toBe(false);
    expect(gate.waitingCount).toBe(0);
  });

  it('keeps at most MAX_WAITING waiting, closing the oldest first, and logs the remote address', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (l: string) => lines.push(l) });
    const gate = new PreAuthGate(log);
    const { port, accepted } = await gated(gate);
    for (let i = 0; i < MAX_WAITING + 1; i++) await connect(port);
    await until(() => accepted.length === MAX_WAITING + 1);
    await closed(accepted[0]!);
    expect(accepted.slice(1).every((s) => !s.destroyed)).toBe(true);
    expect(gate.waitingCount).toBe(MAX_WAITING);
    expect(lines.join('')).toMatch(/"remote":"127\.0\.0\.1:\d+".*too many connections waiting/);
  });

  it('closes a connection that has not authenticated within LIFETIME_MS', async () => {
    const gate = new PreAuthGate(pino({ level: 'silent' }));
    const { port, accepted } = await gated(gate);
    await connect(port);
    await until(() => accepted.length === 1);
    await closed(accepted[0]!);
    expect(gate.waitingCount).toBe(0);
  }, 20_000);

  it('never bounds below the job size', async () => {
    const gate = new PreAuthGate(pino({ level: 'silent' }), MAX_WAITING + 10);
    const { port, accepted } = await gated(gate);
    for (let i = 0; i < MAX_WAITING + 10; i++) await connect(port);
    await until(() => accepted.length === MAX_WAITING + 10);
    await new Promise((r) => setTimeout(r, 50));
    expect(accepted.every((s) => !s.destroyed)).toBe(true);
  });
});
