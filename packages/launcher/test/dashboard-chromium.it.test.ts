/**
 * mpiexec --dashboard's page in a real headless Chromium (issue 41): a job whose ranks hold still in
 * known MPI calls; the page, loaded from the printed URL, renders each rank's call from the live
 * snapshots. Skips, saying so in one line, when no Chromium is installed (.ci/run installs Debian's
 * chromium-headless-shell).
 *
 * testlist: { file: 'dashboard-chromium.it.test.ts', np: [3] }
 */
import { describe, expect, it } from 'vitest';
import { startDashboardJob } from './dashboard-job.ts';
import { findChromium, HeadlessChromium } from './headless-chromium.ts';

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
      // The page draws every snapshot (500 ms); wait until it shows the three ranks where they hold.
      while (Date.now() < deadline) {
        rows = (await browser.evaluate(page, READ_ROWS)) as string[][];
        const byRank = new Map(rows.map((r) => [r[0], r]));
        if (byRank.get('0')?.[1] === 'in MPI' && byRank.get('1')?.[1] === 'computing' && byRank.get('2')?.[1] === 'in MPI') break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(rows).toHaveLength(3);
      expect(rows[0]).toEqual(['0', 'in MPI', 'Recv (comm COMM_WORLD, peer 1, tag 7)  ← waits for rank 1']);
      expect(rows[1]).toEqual(['1', 'computing', 'computing']);
      expect(rows[2]![1]).toBe('in MPI');
      expect(rows[2]![2]).toMatch(/^barrier \(comm COMM_WORLD\)$/);
      const status = (await browser.evaluate(page, `document.getElementById('status').textContent`)) as string;
      expect(status).toMatch(/^3 processes; 2 in an MPI call/);
      // The page loaded nothing but itself (no CDN) and set no cookie.
      expect(await browser.evaluate(page, `performance.getEntriesByType('resource').map((e) => e.name)`)).toEqual([]);
      expect(await browser.evaluate(page, 'document.cookie')).toBe('');
      const end = await job.release();
      expect(end.status).toBe(0);
    } finally {
      job.kill();
      await browser.close();
    }
  }, 180_000);
});
