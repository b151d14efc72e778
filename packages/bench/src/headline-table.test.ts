import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CompareResult } from './compare-chart.ts';
import { heldAcrossRuns, ISSUE_15_TARGETS, markdownAcrossTable, markdownTable, readRounds, targetRows, type Target } from './headline-table.ts';
import { median } from './stats.ts';

function doc(results: { impl: string; metric: string; median: number }[]): CompareResult {
  return { bench: 'msgrate', date: '2026-11-26T20:00:00Z', host: 'vm', cores: 2, unit: 'x', results };
}

const rate: Target = { step: 'msgrate', metric: 'msgrate@1000', versus: 'openmpi', higherIsBetter: true, bound: 1.0, label: 'rate' };
const time: Target = { step: 'pingpong', metric: '0-byte@1000', versus: 'node', higherIsBetter: false, bound: 1.3, label: 'time' };

describe('headline-table', () => {
  it('takes medians of odd and even counts', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('counts the rounds a rate target held on their own ratio, apart from the ratio of the medians', () => {
    const rounds = new Map([['msgrate', [
      doc([{ impl: 'tsmpi', metric: 'msgrate@1000', median: 0.30 }, { impl: 'openmpi', metric: 'msgrate@1000', median: 0.20 }]),
      doc([{ impl: 'tsmpi', metric: 'msgrate@1000', median: 0.19 }, { impl: 'openmpi', metric: 'msgrate@1000', median: 0.21 }]),
      doc([{ impl: 'tsmpi', metric: 'msgrate@1000', median: 0.25 }, { impl: 'openmpi', metric: 'msgrate@1000', median: 0.24 }]),
    ]]]);
    const [row] = targetRows(rounds, [rate]);
    expect(row).toMatchObject({ ours: 0.25, theirs: 0.21, rounds: 3, heldIn: 2 });
    expect(row!.ratio).toBeCloseTo(0.25 / 0.21);
  });

  it('holds a time target when tsmpi is at most the bound times the other, and skips rounds missing either side', () => {
    const rounds = new Map([['pingpong', [
      doc([{ impl: 'tsmpi', metric: '0-byte@1000', median: 13 }, { impl: 'node', metric: '0-byte@1000', median: 10 }]),
      doc([{ impl: 'tsmpi', metric: '0-byte@1000', median: 14 }, { impl: 'node', metric: '0-byte@1000', median: 10 }]),
      doc([{ impl: 'tsmpi', metric: '0-byte@1000', median: 9 }]),
    ]]]);
    const [row] = targetRows(rounds, [time]);
    expect(row).toMatchObject({ ours: 13.5, theirs: 10, rounds: 2, heldIn: 1 });
    const table = markdownTable([row!]);
    expect(table).toContain('| time | 13.50 | plain Node 10.00 | 1.35x | <= 1.3x | **no** | 1 of 2 |');
  });

  it("holds the ping-pong against both of plain Node's floors, each from its own implementation's figure", () => {
    const rounds = new Map([['pingpong', [
      doc([{ impl: 'tsmpi', metric: '0-byte@1000', median: 12 }, { impl: 'node', metric: '0-byte@1000', median: 40 }, { impl: 'node-poll', metric: '0-byte@1000', median: 8 }]),
    ]]]);
    const rows = targetRows(rounds, ISSUE_15_TARGETS.filter((t) => t.step === 'pingpong'));
    expect(rows.map((r) => [r.target.versus, r.ratio, r.heldIn])).toEqual([['node', 0.3, 1], ['node-poll', 1.5, 0]]);
    expect(markdownTable(rows)).toContain('| polling Node 8.00 | 1.50x | <= 1.3x | **no** | 0 of 1 |');
  });

  it('says "not measured" for a target whose step has no rounds', () => {
    const [row] = targetRows(new Map(), [rate]);
    expect(row!.rounds).toBe(0);
    expect(markdownTable([row!])).toContain('not measured');
  });

  it('reads STEP-ROUND.json files in round order and ignores other files', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'headline-'));
    try {
      for (const [name, value] of [['msgrate-10', 0.3], ['msgrate-2', 0.2]] as const) {
        fs.writeFileSync(path.join(dir, `${name}.json`), JSON.stringify(doc([{ impl: 'tsmpi', metric: 'msgrate@1000', median: value }])));
      }
      fs.writeFileSync(path.join(dir, 'msgrate-2.log'), 'not json');
      const rounds = readRounds(dir);
      expect([...rounds.keys()]).toEqual(['msgrate']);
      expect(rounds.get('msgrate')!.map((r) => r.results[0]!.median)).toEqual([0.2, 0.3]);
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  });

  it('holds a target across runs only when at least two runs measured it and every one met it', () => {
    const run = (ours: number, theirs: number | null) => targetRows(new Map([['msgrate', [
      doc([{ impl: 'tsmpi', metric: 'msgrate@1000', median: ours }, ...(theirs === null ? [] : [{ impl: 'openmpi', metric: 'msgrate@1000', median: theirs }])]),
    ]]]), [rate]);
    expect(heldAcrossRuns([run(0.3, 0.2), run(0.25, 0.2)])[0]).toMatchObject({ measuredIn: 2, metIn: 2, holds: true });
    expect(heldAcrossRuns([run(0.3, 0.2), run(0.15, 0.2)])[0]).toMatchObject({ measuredIn: 2, metIn: 1, holds: false });
    // one run alone, or a second run that did not measure it, is not enough
    expect(heldAcrossRuns([run(0.3, 0.2)])[0]).toMatchObject({ measuredIn: 1, metIn: 1, holds: false });
    expect(heldAcrossRuns([run(0.3, 0.2), run(0.3, null)])[0]).toMatchObject({ measuredIn: 1, metIn: 1, holds: false });
    const table = markdownAcrossTable(heldAcrossRuns([run(0.3, 0.2), run(0.15, 0.2)]));
    expect(table).toContain('| rate | >= 1.0x | 1 of 2 runs | **no** |');
  });
});
