// Unit tests of RepeatedStderr: identical stderr of failed ranks shown once, everything else kept.
import { describe, expect, it } from 'vitest';
import { RepeatedStderr } from './repeated-stderr.ts';

const STACK = 'app.ts:3\nthrow new Error("boom")\n^\n\nError: boom\n    at app.ts:3:7\n\nNode.js v20\n';

function setUp(ended: (rank: number) => boolean = () => true): { rs: RepeatedStderr; text: () => string } {
  const chunks: string[] = [];
  const rs = new RepeatedStderr((b) => chunks.push(b.toString('utf8')), ended);
  return { rs, text: () => chunks.join('') };
}

describe('RepeatedStderr', () => {
  it('shows the same stack of four failed ranks once and names the dropped ranks and the shown one', () => {
    const { rs, text } = setUp();
    for (const r of [2, 0, 1, 3]) rs.push(r, Buffer.from(STACK), null);
    expect(text()).toBe(STACK);
    expect([...rs.finish(() => true)]).toEqual([[0, 2], [1, 2], [3, 2]]);
    expect(text()).toBe(STACK);
  });

  it('matches across writes that interleave (a copy running ahead of the shown stream)', () => {
    const { rs, text } = setUp();
    const [head, tail] = [STACK.slice(0, STACK.indexOf('\n\nNode') + 1), STACK.slice(STACK.indexOf('\n\nNode') + 1)];
    rs.push(0, Buffer.from(head), null);
    rs.push(1, Buffer.from(STACK), null);
    rs.push(0, Buffer.from(tail), null);
    expect([...rs.finish(() => true)]).toEqual([[1, 0]]);
    expect(text()).toBe(STACK);
  });

  it('does not compare Node\'s internal frames: copies that differ only there are the same, and a held one goes out whole', () => {
    const { rs, text } = setUp();
    const internal = '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n';
    const withInternal = STACK.replace('    at app.ts:3:7\n', `    at app.ts:3:7\n${internal}`);
    rs.push(0, Buffer.from(STACK), null);
    rs.push(1, Buffer.from(withInternal), null);
    rs.push(2, Buffer.from(withInternal), null);
    expect([...rs.finish((r) => r !== 2)]).toEqual([[1, 0]]);
    expect(text()).toBe(`${STACK}${withInternal}`);
    const other = setUp();
    other.rs.push(0, Buffer.from(withInternal), null);
    other.rs.push(1, Buffer.from(STACK.replace('at app.ts:3:7', 'at app.ts:4:7')), null);
    expect(other.rs.finish(() => true).size, 'a frame of the program\'s that differs still differs').toBe(0);
  });

  it('never drops output that differs: a different line lets the held ones go, in order', () => {
    const { rs, text } = setUp();
    rs.push(0, Buffer.from(STACK), null);
    rs.push(1, Buffer.from('app.ts:3\nthrow new Error("boom")\n'), null);
    expect(text()).toBe(STACK);
    rs.push(1, Buffer.from('other\n'), null);
    expect(text()).toBe(`${STACK}app.ts:3\nthrow new Error("boom")\nother\n`);
    expect(rs.finish(() => true).size).toBe(0);
  });

  it('keeps the copy of a rank that did not fail, and a copy that is only the start of the shown one', () => {
    const { rs, text } = setUp();
    rs.push(0, Buffer.from(STACK), null);
    rs.push(1, Buffer.from(STACK), null);
    rs.push(2, Buffer.from('app.ts:3\n'), null);
    expect(rs.finish((r) => r !== 1).size).toBe(0);
    expect(text()).toBe(`${STACK}${STACK}app.ts:3\n`);
  });

  it('release lets the held lines of a rank that ended well go', () => {
    const { rs, text } = setUp();
    rs.push(0, Buffer.from('warning: x\n'), null);
    rs.push(1, Buffer.from('warning: x\n'), null);
    rs.release(1);
    expect(text()).toBe('warning: x\nwarning: x\n');
  });

  it('compares lines without their prefixes (-l) and writes each with its own', () => {
    const { rs, text } = setUp();
    rs.push(0, Buffer.from(STACK), () => '[0] ');
    rs.push(1, Buffer.from(STACK), () => '[1] ');
    rs.push(2, Buffer.from('other\n'), () => '[2] ');
    expect([...rs.finish(() => true)]).toEqual([[1, 0]]);
    expect(text()).toBe(`${STACK.split('\n').slice(0, -1).map((l) => `[0] ${l}\n`).join('')}[2] other\n`);
  });

  it('lets held lines go after a while when the rank still runs', async () => {
    const { rs, text } = setUp(() => false);
    rs.push(0, Buffer.from('warning: x\n'), null);
    rs.push(1, Buffer.from('warning: x\n'), null);
    expect(text()).toBe('warning: x\n');
    await new Promise((resolve) => setTimeout(resolve, 2300));
    expect(text()).toBe('warning: x\nwarning: x\n');
  });
});
