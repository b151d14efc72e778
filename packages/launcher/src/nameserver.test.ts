// The name server and mpiexec's link to it over a real TLS WebSocket on loopback (nameserver.ts,
// nameserver-link.ts; docs/adr/0046-name-server-between-jobs.md), no processes: the proofs both ways,
// the table's rules through two links, a link's names gone with it, a made-up secret refused and logged
// while the proven links go on, and errors (never a hang) once the server is gone.
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { NameAnswer } from './name-table.ts';
import { NameServer } from './nameserver.ts';
import { dialNameserver, NameserverClient } from './nameserver-link.ts';

const servers: NameServer[] = [];
const clients: NameserverClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of servers.splice(0)) await s.close();
});

async function started(): Promise<{ server: NameServer; port: number; secret: string; warnings: string[] }> {
  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (l: string) => warnings.push(l) });
  const secret = randomBytes(32).toString('hex');
  const server = new NameServer(secret, log);
  servers.push(server);
  const port = await server.start('127.0.0.1', 0);
  return { server, port, secret, warnings };
}

async function dial(port: number, secret: string, host = '127.0.0.1'): Promise<NameserverClient> {
  const c = await dialNameserver({ host, port, secret }, `127.0.0.1:${port} (test)`);
  if (c instanceof Error) throw c;
  clients.push(c);
  return c;
}

const errorOf = (a: NameAnswer): readonly [string, string] | null => ('error' in a ? a.error : null);

async function until(cond: () => boolean): Promise<void> {
  const giveUp = Date.now() + 10_000; // a deadlock guard, not a timing
  while (!cond()) {
    if (Date.now() > giveUp) throw new Error('condition not met within 10 s');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('tsmpi-nameserver and its link', () => {
  it('two proven links share one table: publish, lookup, the owner-only unpublish; names go with their link', async () => {
    const { server, port, secret } = await started();
    const a = await dial(port, secret);
    const b = await dial(port, secret);
    expect(await a.request('publish', 'ocean', 'port-a')).toEqual({ value: null });
    expect(await b.request('lookup', 'ocean')).toEqual({ value: 'port-a' });
    expect(errorOf(await b.request('publish', 'ocean', 'port-b'))?.[0]).toBe('ERR_SERVICE');
    expect(errorOf(await b.request('unpublish', 'ocean', 'port-a'))?.[0]).toBe('ERR_SERVICE');
    expect(errorOf(await b.request('lookup', 'atmosphere'))?.[0]).toBe('ERR_NAME');
    a.close();
    await until(() => server.nameCount === 0);
    expect(errorOf(await b.request('lookup', 'ocean'))?.[0]).toBe('ERR_NAME');
    expect(await b.request('publish', 'ocean', 'port-b')).toEqual({ value: null });
  });

  it('a made-up secret fails the TLS handshake: refused and logged with the remote address; proven links go on', async () => {
    const { port, secret, warnings } = await started();
    const good = await dial(port, secret);
    expect(await good.request('publish', 'ocean', 'port-a')).toEqual({ value: null });
    const bad = await dialNameserver({ host: '127.0.0.1', port, secret: randomBytes(32).toString('hex') }, 'there');
    expect(bad).toBeInstanceOf(Error);
    expect((bad as Error).message).toMatch(/cannot use the name server at there: the TLS handshake failed/);
    await until(() => warnings.length > 0);
    const refusal = JSON.parse(warnings[0]!) as { msg: string; remote: string; reason: string };
    expect(refusal.msg).toMatch(/^name server connection refused/);
    expect(refusal.remote).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(refusal.reason).toMatch(/TLS handshake failed/);
    expect(await good.request('lookup', 'ocean')).toEqual({ value: 'port-a' });
  });

  it('the secret proven for another address is refused (the proofs bind the address in the file)', async () => {
    const { port, secret, warnings } = await started();
    const c = await dialNameserver({ host: 'localhost', port, secret }, 'there');
    expect(c).toBeInstanceOf(Error);
    expect((c as Error).message).toMatch(/refused the proof of the secret/);
    await until(() => warnings.length > 0);
    expect(warnings.join('')).toMatch(/does not prove the secret/);
  });

  it('a client that sends nothing, or too much, before the proof is refused; a plain request too', async () => {
    const { port, secret, warnings } = await started();
    const { jobTlsClientOptions } = await import('@tsmpi/core/pmi');
    const ws = new WebSocket(`wss://127.0.0.1:${port}/`, { ...(jobTlsClientOptions(secret) as object) });
    await new Promise((r) => ws.once('open', r));
    ws.send(Buffer.alloc(8192, 0x20));
    await new Promise((r) => ws.once('close', r));
    await until(() => warnings.length > 0);
    expect(warnings.join('')).toMatch(/more than 2048 bytes before an accepted hello|message before the proof too large/);
  });

  it('once the server is gone, pending and later requests are errors naming it: lookup ERR_NAME, publish/unpublish ERR_SERVICE', async () => {
    const { server, port, secret } = await started();
    const c = await dial(port, secret);
    expect(await c.request('publish', 'ocean', 'port-a')).toEqual({ value: null });
    await server.close();
    await until(() => c.isGone);
    for (const [op, cls] of [['publish', 'ERR_SERVICE'], ['unpublish', 'ERR_SERVICE'], ['lookup', 'ERR_NAME']] as const) {
      const e = errorOf(await c.request(op, 'ocean', 'port-a'));
      expect(e?.[0]).toBe(cls);
      expect(e?.[1]).toMatch(new RegExp(`the name server at 127\\.0\\.0\\.1:${port} \\(test\\) is gone`));
    }
    const again = await dialNameserver({ host: '127.0.0.1', port, secret }, `127.0.0.1:${port} (test)`);
    expect((again as Error).message).toMatch(/ECONNREFUSED/);
  });
});
