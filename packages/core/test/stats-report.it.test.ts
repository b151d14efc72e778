// What finalize reports to mpiexec (--report-json's per-rank "messages") counts the whole
// process, as MPI.stats() does: in threads progress the channel engines complete the receives
// and count them in rows of their own, which a report of the main thread's row alone missed.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { program, runJob } from './run-job.ts';

type Totals = { messagesSent: number; messagesReceived: number; bytesSent: number; bytesReceived: number };
const tmp = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-stats-report-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.each(['threads', 'inline'])('finalize reports the process totals (--progress %s)', (progress) => {
  it('the report counts at least what MPI.stats() counted before finalize', async () => {
    const report = path.join(tmp, `report-${progress}.json`);
    const r = await runJob(2, program('stats-report.ts'), { flags: ['--progress', progress, '--report-json', report] });
    if (r.code !== 0) throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    const printed = new Map<number, Totals>();
    for (const m of r.stdout.matchAll(/^stats (\d+) (\{.*\})$/gm)) printed.set(Number(m[1]), JSON.parse(m[2]!) as Totals);
    expect(printed.size).toBe(2);
    expect(printed.get(0)!.messagesReceived, 'rank 0 received the 50 messages').toBeGreaterThanOrEqual(50);
    expect(printed.get(1)!.messagesSent, 'rank 1 sent the 50 messages').toBeGreaterThanOrEqual(50);
    const json = JSON.parse(readFileSync(report, 'utf8')) as { ranks: { rank: number; messages: Totals }[] };
    for (const { rank, messages } of json.ranks) {
      const before = printed.get(rank)!;
      // finalize's barrier adds its own messages after the printed line, never fewer
      for (const k of ['messagesSent', 'messagesReceived', 'bytesSent', 'bytesReceived'] as const) {
        expect(messages[k], `rank ${rank} ${k}: reported ${messages[k]}, MPI.stats() had ${before[k]}`).toBeGreaterThanOrEqual(before[k]);
      }
    }
  });
});
