import { describe, expect, it } from 'vitest';
import { formatDuration, ProgressBar } from './progress-bar.ts';

function fakeStream(isTTY: boolean, columns?: number) {
  const chunks: string[] = [];
  const stream = { isTTY, ...(columns === undefined ? {} : { columns }), write: (s: string) => chunks.push(s) };
  return { stream, chunks };
}

describe('ProgressBar', () => {
  it('redraws one line in place on a TTY and ends it on finish', () => {
    let now = 0;
    const { stream, chunks } = fakeStream(true, 100);
    const bar = new ProgressBar({ total: 4, label: 'sweep', stream, now: () => now });
    now = 1000;
    bar.tick(1, 'threads=1');
    now = 1050; // within redrawMs: no redraw
    bar.tick();
    now = 2000;
    bar.tick();
    bar.tick(); // throttled: finish() draws 4/4
    bar.finish();
    expect(chunks.every((c) => c === '\n' || c.startsWith('\r'))).toBe(true);
    expect(chunks.at(-1)).toBe('\n');
    expect(chunks[0]).toContain('[########----------------------]  25%  1/4');
    expect(chunks[0]).toContain('eta 3s');
    expect(chunks[0]).toContain('threads=1');
    expect(chunks.at(-2)).toContain('100%  4/4');
    expect(chunks).toHaveLength(4); // 1/4, 3/4, the final 4/4, newline
  });

  it('prints periodic plain lines when not a TTY', () => {
    let now = 0;
    const { stream, chunks } = fakeStream(false);
    const bar = new ProgressBar({ total: 10, label: 'sweep', stream, lineEveryMs: 5000, now: () => now });
    for (let i = 0; i < 10; i++) {
      now += 1000;
      bar.tick(1, `step=${i}`);
    }
    bar.finish();
    expect(chunks).toEqual(['sweep: 5/10 (50%) eta 5s step=4\n', 'sweep: 10/10 (100%) step=9\n', 'sweep: 10/10 (100%) step=9\n']);
    expect(chunks.join('')).not.toContain('\r');
  });

  it('clamps and ignores calls after finish', () => {
    const { stream, chunks } = fakeStream(false);
    const bar = new ProgressBar({ total: 2, stream, now: () => 0 });
    bar.update(5);
    expect(bar.done).toBe(2);
    bar.finish();
    const n = chunks.length;
    bar.tick();
    bar.finish();
    expect(chunks).toHaveLength(n);
  });
});

describe('formatDuration', () => {
  it('rounds to seconds and switches units', () => {
    expect(formatDuration(-5)).toBe('0s');
    expect(formatDuration(42_400)).toBe('42s');
    expect(formatDuration(185_000)).toBe('3m05s');
    expect(formatDuration(3_720_000)).toBe('1h02m');
  });
});
