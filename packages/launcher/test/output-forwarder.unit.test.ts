/** Line splitting of rank output, fed raw byte chunks. */
import { describe, expect, it } from 'vitest';
import { LineForwarder, MAX_LINE_BYTES } from '@tsmpi/launcher';

function collect(prefix: (() => string) | null): { fwd: LineForwarder; writes: string[] } {
  const writes: string[] = [];
  return { fwd: new LineForwarder((b) => writes.push(b.toString('utf8')), prefix), writes };
}

describe('LineForwarder', () => {
  it('holds a partial line until its newline arrives', () => {
    const { fwd, writes } = collect(null);
    fwd.push(Buffer.from('hel'));
    expect(writes).toEqual([]);
    fwd.push(Buffer.from('lo\nwor'));
    expect(writes).toEqual(['hello\n']);
    fwd.push(Buffer.from('ld\n'));
    expect(writes).toEqual(['hello\n', 'world\n']);
  });

  it('prefixes every line, including the completion of a partial one', () => {
    const { fwd, writes } = collect(() => '[3] ');
    fwd.push(Buffer.from('a'));
    fwd.push(Buffer.from('b\nc\nd\ne'));
    expect(writes).toEqual(['[3] ab\n[3] c\n[3] d\n']);
    fwd.flush();
    expect(writes[1]).toBe('[3] e\n');
    fwd.flush();
    expect(writes).toHaveLength(2);
  });

  it('keeps a UTF-8 character split across chunks intact', () => {
    const { fwd, writes } = collect(() => '> ');
    const bytes = Buffer.from('héllo €\n');
    fwd.push(bytes.subarray(0, 2));
    fwd.push(bytes.subarray(2, 7));
    fwd.push(bytes.subarray(7));
    expect(writes.join('')).toBe('> héllo €\n');
  });

  it('handles empty lines and chunks that are only newlines', () => {
    const { fwd, writes } = collect(() => '[0] ');
    fwd.push(Buffer.from('\n\n'));
    expect(writes.join('')).toBe('[0] \n[0] \n');
  });

  it('forwards a runaway line in pieces instead of holding it forever', () => {
    const { fwd, writes } = collect(null);
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    for (let i = 0; i < 4; i++) fwd.push(chunk);
    expect(writes.length).toBe(1);
    expect(writes[0]!.length).toBe(MAX_LINE_BYTES + 1);
  });
});
