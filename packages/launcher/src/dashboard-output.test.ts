import { describe, expect, it } from 'vitest';
import { MAX_TAIL_LINE, MAX_TAIL_LINES, OutputTails } from './dashboard-output.ts';

describe('dashboard output tails', () => {
  it('keeps each rank\'s last lines of both streams, with the unfinished line last', () => {
    const t = new OutputTails();
    t.add(0, 1, Buffer.from('one\ntw'));
    t.add(0, 2, Buffer.from('err\n'));
    t.add(0, 1, Buffer.from('o\nthr'));
    t.add(1, 1, Buffer.from('other rank\n'));
    expect(t.tail(0)).toEqual([{ fd: 1, text: 'one' }, { fd: 2, text: 'err' }, { fd: 1, text: 'two' }, { fd: 1, text: 'thr' }]);
    expect(t.tail(1)).toEqual([{ fd: 1, text: 'other rank' }]);
    expect(t.tail(5)).toEqual([]);
  });

  it('bounds lines and their length', () => {
    const t = new OutputTails();
    t.add(0, 1, Buffer.from(Array.from({ length: MAX_TAIL_LINES + 50 }, (_, i) => `l${i}`).join('\n') + '\n'));
    t.add(0, 1, Buffer.from('x'.repeat(MAX_TAIL_LINE * 3) + '\n'));
    const lines = t.tail(0);
    expect(lines).toHaveLength(MAX_TAIL_LINES);
    expect(lines[0]!.text).toBe('l51');
    expect(lines.at(-1)!.text).toHaveLength(MAX_TAIL_LINE);
  });
});
