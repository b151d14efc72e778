import { describe, expect, it } from 'vitest';
import { formatDuration, ProgressBar } from './progress-bar.ts';

function fakeStream(isTTY: boolean, columns?: number) {
  const chunks: string[] = [];
  const stream = { isTTY, ...(columns === undefined ? {} : { columns }), write: (s: string) => chunks.push(s) };
  return { stream, chunks };
}

describe('ProgressBar', () => {
  it('on a TTY, cli-progress redraws one line in place with our text and ends it on finish', () => {
    let now = 0;
    const { stream, chunks } = fakeStream(true, 100);
    const bar = new ProgressBar({ total: 4, label: 'sweep', stream, now: () => now });
    expect(chunks).toEqual([]); // nothing drawn before the first step
    now = 1000;
    bar.tick(1, 'threads=1');
    expect(bar.render()).toContain('[########----------------------]  25%  1/4  eta 3s  threads=1');
    now = 2000;
    bar.tick();
    bar.tick();
    bar.tick();
    bar.finish();
    const out = chunks.join('');
    expect(out).toContain('sweep  [########----------------------]  25%  1/4  eta 3s  threads=1');
    expect(out).toContain('sweep  [##############################] 100%  4/4  threads=1');
    expect(out.endsWith('\n')).toBe(true);
    expect(out.match(/\n/g)).toHaveLength(1); // redraws move the cursor, only finish ends the line
    const n = chunks.length;
    bar.tick();
    bar.finish();
    expect(chunks).toHaveLength(n);
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
