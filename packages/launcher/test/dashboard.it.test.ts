/**
 * mpiexec --dashboard end to end (issue 41): a real job whose ranks hold still in known MPI calls;
 * the URL line, the token check of every request and of the WebSocket upgrade, and snapshots that
 * name each rank's call, sampled from the ranks over the wire-up service.
 *
 * testlist: { file: 'dashboard.it.test.ts', np: [3] }
 */
import { get } from 'node:http';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { decodeSnapshot, type Snapshot } from '../src/dashboard-state.ts';
import { startDashboardJob } from './dashboard-job.ts';

function status(url: string): Promise<{ code: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (s: string) => { body += s; }).on('end', () => resolve({ code: res.statusCode!, body, headers: res.headers }));
    }).on('error', reject);
  });
}

/** The upgrade's HTTP status when refused, or 101. */
function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.on('open', () => { ws.close(); resolve(101); });
    ws.on('unexpected-response', (_req, res) => { resolve(res.statusCode!); ws.terminate(); });
    ws.on('error', () => undefined);
  });
}

/** Snapshots from the dashboard until `done` says one is the one awaited. */
function awaitSnapshot(url: string, done: (s: Snapshot) => boolean, timeoutMs = 60_000): Promise<Snapshot> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    let last: Snapshot | null = null;
    const timer = setTimeout(() => { ws.terminate(); reject(new Error(`no such snapshot; last: ${JSON.stringify(last)}`)); }, timeoutMs);
    ws.on('message', (data) => {
      const s = decodeSnapshot(String(data));
      expect(s).not.toBeNull();
      last = s;
      if (done(s!)) { clearTimeout(timer); ws.close(); resolve(s!); }
    });
    ws.on('error', (err) => { clearTimeout(timer); reject(err); });
  });
}

describe('mpiexec --dashboard', () => {
  it('prints its URL, refuses requests without the token, and streams each rank\'s call', async () => {
    const job = await startDashboardJob(3);
    try {
      const { url } = job;
      expect(url.hostname).toBe('127.0.0.1');
      const token = url.searchParams.get('token')!;
      expect(token).toMatch(/^[0-9a-f]{32}$/);
      const base = `http://${url.host}`;
      // Without the token, or with a wrong one: 403 for the page, any path and the upgrade.
      for (const p of ['/', '/?token=', `/?token=${token.slice(0, -1)}`, '/ws', '/favicon.ico']) expect((await status(base + p)).code).toBe(403);
      const wrong = token.replace(/^./, (c) => (c === '0' ? '1' : '0'));
      expect(await upgradeStatus(`ws://${url.host}/ws`)).toBe(403);
      expect(await upgradeStatus(`ws://${url.host}/ws?token=${wrong}`)).toBe(403);
      // With it: the page (no cookie, no referrer), nothing else.
      const page = await status(url.href);
      expect(page.code).toBe(200);
      expect(page.headers['set-cookie']).toBeUndefined();
      expect(page.headers['referrer-policy']).toBe('no-referrer');
      expect(page.body).toContain('<table>');
      expect(page.body).not.toMatch(/(src|href)="?https?:/);
      expect((await status(`${base}/other?token=${token}`)).code).toBe(404);
      // The snapshots name the calls: rank 0 in Recv from 1, rank 1 computing, rank 2 in the barrier (wait
      // for those calls, not the allreduce before: rank 1 may leave it while ranks 0 and 2 are still in it).
      const s = await awaitSnapshot(`ws://${url.host}/ws?token=${token}`, (x) =>
        x.ranks[0]?.threads[0]?.call.startsWith('Recv') === true && x.ranks[1]?.state === 'computing'
        && x.ranks[2]?.threads[0]?.call.startsWith('barrier') === true);
      expect(s.size).toBe(3);
      expect(s.ranks[0]!.threads[0]).toEqual({ thread: 'main', call: 'Recv (comm COMM_WORLD, peer 1, tag 7)', peer: 1 });
      expect(s.ranks[2]!.threads[0]!.call).toMatch(/^barrier \(comm COMM_WORLD\)$/);
      for (const r of s.ranks) {
        expect(r.pid).toBeGreaterThan(0);
        // The allreduce before: every rank sent and received; rank 2 has started its barrier too.
        expect(r.counters!.messagesSent).toBeGreaterThan(0);
        expect(r.counters!.collectives).toBe(r.rank === 2 ? 2 : 1);
      }
      const end = await job.release();
      expect(end.status).toBe(0);
      // The URL is printed once, and nothing else.
      expect(end.stderr.match(/dashboard at/g)).toHaveLength(1);
      expect(end.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      job.kill();
    }
  }, 180_000);

  it('shows a worker thread\'s call as a row of its rank ("start, before MPI.init" until it is in MPI)', async () => {
    const job = await startDashboardJob(3, 'dashboard-threads.ts');
    try {
      const s = await awaitSnapshot(`ws://${job.url.host}/ws?token=${job.url.searchParams.get('token')!}`, (x) => x.ranks[0]?.threads[1]?.call.endsWith('tag 8)') === true && x.ranks[2]?.state === 'in MPI');
      const [main, worker] = s.ranks[0]!.threads;
      expect(main).toEqual({ thread: 'main', call: 'Recv (comm COMM_WORLD, peer 1, tag 7)', peer: 1 });
      expect(worker!.thread).toMatch(/^[1-9]\d*$/);
      expect(worker!.call).toBe('Recv (comm COMM_WORLD, peer 1, tag 8)');
      expect((await job.release()).status).toBe(0);
    } finally {
      job.kill();
    }
  }, 180_000);

  // Issue 41: the matrix counted only the main thread's sockets; a worker's own connections (inline
  // progress) and the channel engines' (progress 'engines') write rows of their own (core's device/peer-bytes.ts).
  it.each([['inline'], ['engines']])('counts a worker thread\'s bytes in the traffic matrix (progress %s)', async (progress) => {
    const job = await startDashboardJob(2, 'dashboard-thread-bytes.ts', ['--progress', progress]);
    try {
      const s = await awaitSnapshot(`ws://${job.url.host}/ws?token=${job.url.searchParams.get('token')!}`,
        (x) => x.ranks[0]?.threads[1]?.call.endsWith('tag 8)') === true && (x.views.matrix?.bytes[0]?.[1] ?? 0) >= 256 * 1024);
      expect(s.views.matrix!.bytes[0]![1]).toBeGreaterThanOrEqual(256 * 1024);
      // Rank 1 sent rank 0 nothing but the job's own traffic (wire-up, the barrier has not run): far less.
      expect(s.views.matrix!.bytes[1]![0]).toBeLessThan(64 * 1024);
      expect((await job.release()).status).toBe(0);
    } finally {
      job.kill();
    }
  }, 180_000);
});
