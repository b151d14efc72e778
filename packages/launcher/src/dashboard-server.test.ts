import { request } from 'node:http';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { DashboardServer, MAX_VIEWERS } from './dashboard-server.ts';
import { newDashboardToken } from './dashboard-token.ts';

const servers: DashboardServer[] = [];
afterEach(async () => { for (const s of servers.splice(0)) await s.close(); });

async function serve(): Promise<{ server: DashboardServer; port: number; token: string }> {
  const token = newDashboardToken();
  const server = new DashboardServer(token, pino({ level: 'silent' }));
  servers.push(server);
  return { server, port: await server.start('127.0.0.1', 0), token };
}

function http(port: number, path: string, method = 'GET'): Promise<{ code: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (s: string) => { body += s; }).on('end', () => resolve({ code: res.statusCode!, body, headers: res.headers }));
    });
    req.on('error', reject).end();
  });
}

/** The upgrade's status; once open, the messages as they come (from the first: it may arrive with the handshake). */
function upgrade(port: number, path: string, origin?: string): Promise<{ code: number; ws: WebSocket | null; got: string[] }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, origin === undefined ? {} : { origin });
    const got: string[] = [];
    ws.on('message', (d) => got.push(String(d)));
    ws.on('open', () => resolve({ code: 101, ws, got }));
    ws.on('unexpected-response', (_req, res) => { resolve({ code: res.statusCode!, ws: null, got }); ws.terminate(); });
    ws.on('error', () => undefined);
  });
}

describe('dashboard server', () => {
  it('serves a rank\'s output tail as JSON only with the token, and refuses a bad rank', async () => {
    const token = newDashboardToken();
    const server = new DashboardServer(token, pino({ level: 'silent' }), (rank) => [{ fd: 1, text: `line of ${rank}` }]);
    servers.push(server);
    const port = await server.start('127.0.0.1', 0);
    expect((await http(port, '/tail?rank=2')).code).toBe(403);
    const ok = await http(port, `/tail?rank=2&token=${token}`);
    expect(ok.code).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(ok.body)).toEqual({ rank: 2, lines: [{ fd: 1, text: 'line of 2' }] });
    for (const bad of ['-1', 'x', '', '1e3']) expect((await http(port, `/tail?rank=${bad}&token=${token}`)).code).toBe(400);
    // Without a tail source the path does not exist.
    const { port: p2, token: t2 } = await serve();
    expect((await http(p2, `/tail?rank=0&token=${t2}`)).code).toBe(404);
  });

  it('serves the page only with the token, nothing else, and never a cookie', async () => {
    const { port, token } = await serve();
    expect((await http(port, '/')).code).toBe(403);
    expect((await http(port, `/?token=${token}x`)).code).toBe(403);
    const ok = await http(port, `/?token=${token}`);
    expect(ok.code).toBe(200);
    expect(ok.headers['set-cookie']).toBeUndefined();
    expect(ok.headers['cache-control']).toBe('no-store');
    expect(String(ok.headers['content-security-policy'])).toContain("default-src 'none'");
    expect(ok.body).not.toContain(token);
    expect((await http(port, `/x?token=${token}`)).code).toBe(404);
    expect((await http(port, `/?token=${token}`, 'POST')).code).toBe(405);
  });

  it('upgrades only /ws with the token and this server\'s own origin; viewers get the last snapshot and later ones', async () => {
    const { server, port, token } = await serve();
    expect((await upgrade(port, '/ws')).code).toBe(403);
    expect((await upgrade(port, `/other?token=${token}`)).code).toBe(404);
    expect((await upgrade(port, `/ws?token=${token}`, 'http://evil.example')).code).toBe(403);
    server.broadcast('first');
    const { code, ws, got } = await upgrade(port, `/ws?token=${token}`, `http://127.0.0.1:${port}`);
    expect(code).toBe(101);
    while (got.length < 1) await new Promise((r) => setTimeout(r, 20));
    server.broadcast('second');
    while (got.length < 2) await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual(['first', 'second']);
    expect(server.viewers).toBe(1);
    ws!.close();
  });

  it('admits at most MAX_VIEWERS viewers', async () => {
    const { port, token } = await serve();
    const open: WebSocket[] = [];
    for (let i = 0; i < MAX_VIEWERS; i++) open.push((await upgrade(port, `/ws?token=${token}`)).ws!);
    expect((await upgrade(port, `/ws?token=${token}`)).code).toBe(503);
    for (const ws of open) ws.close();
  });
});
