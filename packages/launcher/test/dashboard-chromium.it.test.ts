/**
 * mpiexec --dashboard's page in a real headless Chromium (issue 41): a job whose ranks hold still in
 * known MPI calls; the page, loaded from the printed URL, renders each rank's call from the live
 * snapshots; and a job with a wait-for cycle, whose page shows who waits for whom, the collective
 * some ranks have not reached, the traffic matrix and a rank's output (its screenshot is
 * docs/dashboard.png, rewritten when TSMPI_UPDATE_DOCS_PICTURE=1). Skips, saying so in one line, when no Chromium is installed (.ci/run installs Debian's
 * chromium-headless-shell).
 *
 * testlist: { file: 'dashboard-chromium.it.test.ts', np: [3] }
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDashboardJob } from './dashboard-job.ts';
import { findChromium, HeadlessChromium } from './headless-chromium.ts';
import { REPO_ROOT } from './run-mpiexec.ts';

const chromium = findChromium();
const why = chromium === null ? 'no Chromium on PATH (apt-get install chromium-headless-shell)' : null;
if (why !== null) console.warn(`dashboard-chromium.it.test.ts: skipped: ${why}`);

/** Each rank row's cells as the page renders them: [rank, state, call]. */
const READ_ROWS = `[...document.querySelectorAll('#ranks tr[data-rank]')].map((tr) =>
  [tr.getAttribute('data-rank'), tr.getAttribute('data-state'), tr.querySelector('.call').textContent])`;

describe.skipIf(why !== null)(`mpiexec --dashboard in headless Chromium${why === null ? '' : ` (skipped: ${why})`}`, () => {
  it('renders each rank\'s current call', async () => {
    const job = await startDashboardJob(3);
    const browser = HeadlessChromium.launch(chromium!);
    try {
      const page = await browser.open(job.url.href);
      let rows: string[][] = [];
      const deadline = Date.now() + 60_000;
      // The page draws every snapshot (500 ms); wait until it shows the three ranks where they hold (not
      // the allreduce before: rank 1 may leave it while ranks 0 and 2 are still in it).
      while (Date.now() < deadline) {
        rows = (await browser.evaluate(page, READ_ROWS)) as string[][];
        const byRank = new Map(rows.map((r) => [r[0], r]));
        if (byRank.get('0')?.[2]?.startsWith('Recv') === true && byRank.get('1')?.[1] === 'computing'
          && byRank.get('2')?.[2]?.startsWith('barrier') === true) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(rows).toHaveLength(3);
      expect(rows[0]).toEqual(['0', 'in MPI', 'Recv (comm COMM_WORLD, peer 1, tag 7)  ← waits for rank 1']);
      expect(rows[1]).toEqual(['1', 'computing', 'computing']);
      expect(rows[2]![1]).toBe('in MPI');
      expect(rows[2]![2]).toMatch(/^barrier \(comm COMM_WORLD\)$/);
      const status = (await browser.evaluate(page, `document.getElementById('status').textContent`)) as string;
      expect(status).toMatch(/^3 processes; 2 in an MPI call/);
      // The page loaded nothing but itself and its output tails from the same server (no CDN), and set no cookie.
      const loaded = (await browser.evaluate(page, `performance.getEntriesByType('resource').map((e) => e.name)`)) as string[];
      for (const u of loaded) expect(u.startsWith(`${job.url.origin}/tail?rank=`)).toBe(true);
      expect(await browser.evaluate(page, 'document.cookie')).toBe('');
      const end = await job.release();
      expect(end.status).toBe(0);
    } finally {
      job.kill();
      await browser.close();
    }
  }, 180_000);

  it('shows who waits for whom in a deadlock, the collective not all ranks reached, the traffic and a rank\'s output', async () => {
    const job = await startDashboardJob(4, 'dashboard-cycle.ts');
    const browser = HeadlessChromium.launch(chromium!);
    try {
      const page = await browser.open(job.url.href);
      const read = async (): Promise<Record<string, unknown>> => (await browser.evaluate(page, `({
        cycles: [...document.querySelectorAll('#waits .cycle')].map((d) => [d.getAttribute('data-cycle'), d.textContent]),
        waits: [...document.querySelectorAll('#waits div[data-from]')].map((d) => d.textContent),
        collectives: [...document.querySelectorAll('#collectives tr[data-comm]')].map((tr) => [...tr.children].map((td) => td.textContent)),
        ring: [0, 1, 2, 3].map((r) => document.querySelector('#matrix td[data-from="' + r + '"][data-to="' + ((r + 1) % 4) + '"]')?.textContent ?? null),
        channels: document.querySelectorAll('#channels tr[data-channel]').length,
        tail: document.getElementById('tail-lines').textContent,
      })`)) as Record<string, unknown>;
      let v: Record<string, unknown> = {};
      const deadline = Date.now() + 90_000;
      while (Date.now() < deadline) {
        v = await read().catch(() => ({ cycles: [], collectives: [], tail: '' })); // before the page has loaded
        // Rank 3 may still be in the allreduce before its barrier when the cycle is complete: wait for the barrier.
        const inBarrier = (v['collectives'] as string[][]).some((c) => c[1] === 'barrier');
        if ((v['cycles'] as unknown[]).length > 0 && inBarrier && String(v['tail']).includes('step 2')) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(v['cycles']).toEqual([['0,1,2', 'deadlock: rank 0 → rank 1 → rank 2 → rank 0 (each waits for the next)']]);
      expect(v['waits']).toEqual(['rank 0 waits for rank 1 in Recv', 'rank 1 waits for rank 2 in Recv', 'rank 2 waits for rank 0 in Recv']);
      expect(v['collectives']).toEqual([['COMM_WORLD', 'barrier', '3', '0, 1, 2']]);
      // Each rank's ring message (4 KiB and more) shows in its row of the matrix.
      for (const cellText of v['ring'] as (string | null)[]) expect(cellText).toMatch(/^(\d{4,}|\d+(\.\d)?k)$/); // the page writes 4241, or 12.3k from 10^4 on
      expect(v['channels']).toBeGreaterThan(0);
      expect(v['tail']).toBe('rank 0: step 0\nrank 0: step 1\nrank 0: step 2\n');
      // A click on rank 3's row shows its output, stderr included.
      await browser.evaluate(page, `document.querySelector('#ranks tr[data-rank="3"]').click()`);
      let tail = '';
      for (let i = 0; i < 80 && !tail.includes('barrier'); i++) {
        await new Promise((r) => setTimeout(r, 250));
        tail = (await browser.evaluate(page, `document.getElementById('tail-lines').textContent`)) as string;
      }
      expect(tail).toBe('rank 3: step 0\nrank 3: step 1\nrank 3: step 2\nrank 3: waiting in the barrier\n');
      expect(await browser.evaluate(page, `document.querySelector('#tail-lines .err').textContent`)).toBe('rank 3: waiting in the barrier\n');
      await browser.evaluate(page, `document.querySelector('#ranks tr[data-rank="0"]').click()`);
      await new Promise((r) => setTimeout(r, 1500));
      const png = await browser.screenshot(page);
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
      expect(png.length).toBeGreaterThan(10_000);
      if (process.env['TSMPI_UPDATE_DOCS_PICTURE'] === '1') writeFileSync(path.join(REPO_ROOT, 'docs', 'dashboard.png'), png);
      // The deadlock never ends by itself: SIGTERM ends the job (143).
      expect((await job.terminate()).status).toBe(143);
    } finally {
      job.kill();
      await browser.close();
    }
  }, 240_000);
});
