// Unit tests of the name server's table (name-table.ts, docs/adr/0046-name-server-between-jobs.md point 4):
// publish twice, lookup of an unknown name, unpublish only by the publishing link, names gone with their link, bounds.
import { describe, expect, it } from 'vitest';
import { MAX_NAME_CHARS, MAX_NAMES_PER_LINK, NameTable, type NameAnswer } from './name-table.ts';

const errorClass = (a: NameAnswer): string | null => ('error' in a ? a.error[0] : null);

describe('NameTable', () => {
  it('a published name is found by every link; a name nobody published is ERR_NAME', () => {
    const t = new NameTable();
    expect(t.publish(1, 'ocean', 'port-a')).toEqual({ value: null });
    expect(t.lookup('ocean')).toEqual({ value: 'port-a' });
    const unknown = t.lookup('atmosphere');
    expect(errorClass(unknown)).toBe('ERR_NAME');
    expect('error' in unknown && unknown.error[1]).toMatch(/"atmosphere"/);
  });

  it('publishing a name already published is ERR_SERVICE, by the same link or another: never an overwrite', () => {
    const t = new NameTable();
    t.publish(1, 'ocean', 'port-a');
    expect(errorClass(t.publish(1, 'ocean', 'port-a'))).toBe('ERR_SERVICE');
    expect(errorClass(t.publish(2, 'ocean', 'port-b'))).toBe('ERR_SERVICE');
    expect(t.lookup('ocean')).toEqual({ value: 'port-a' });
  });

  it('only the publishing link may unpublish, and only with the port it published', () => {
    const t = new NameTable();
    t.publish(1, 'ocean', 'port-a');
    const other = t.unpublish(2, 'ocean', 'port-a');
    expect(errorClass(other)).toBe('ERR_SERVICE');
    expect('error' in other && other.error[1]).toMatch(/another job/);
    expect(errorClass(t.unpublish(1, 'ocean', 'port-b'))).toBe('ERR_SERVICE');
    expect(t.lookup('ocean')).toEqual({ value: 'port-a' });
    expect(t.unpublish(1, 'ocean', 'port-a')).toEqual({ value: null });
    expect(errorClass(t.lookup('ocean'))).toBe('ERR_NAME');
    expect(errorClass(t.unpublish(1, 'ocean', 'port-a'))).toBe('ERR_SERVICE');
    // Once withdrawn, another link may take the name.
    expect(t.publish(2, 'ocean', 'port-b')).toEqual({ value: null });
  });

  it("a link's names go when it closes; other links' stay", () => {
    const t = new NameTable();
    t.publish(1, 'ocean', 'port-a');
    t.publish(1, 'ice', 'port-a');
    t.publish(2, 'atmosphere', 'port-b');
    expect(t.dropLink(1)).toBe(2);
    expect(errorClass(t.lookup('ocean'))).toBe('ERR_NAME');
    expect(errorClass(t.lookup('ice'))).toBe('ERR_NAME');
    expect(t.lookup('atmosphere')).toEqual({ value: 'port-b' });
    expect(t.size).toBe(1);
    expect(t.dropLink(1)).toBe(0);
    expect(t.publish(3, 'ocean', 'port-c')).toEqual({ value: null });
  });

  it('refuses malformed and oversized names and ports, and more than MAX_NAMES_PER_LINK names per link', () => {
    const t = new NameTable();
    const long = 'x'.repeat(MAX_NAME_CHARS + 1);
    expect(errorClass(t.publish(1, '', 'p'))).toBe('ERR_SERVICE');
    expect(errorClass(t.publish(1, long, 'p'))).toBe('ERR_SERVICE');
    expect(errorClass(t.publish(1, 42, 'p'))).toBe('ERR_SERVICE');
    expect(errorClass(t.publish(1, 'ok', long))).toBe('ERR_PORT');
    expect(errorClass(t.publish(1, 'ok', null))).toBe('ERR_PORT');
    expect(errorClass(t.lookup(long))).toBe('ERR_NAME');
    expect(errorClass(t.unpublish(1, undefined, 'p'))).toBe('ERR_SERVICE');
    expect(t.size).toBe(0);
    for (let i = 0; i < MAX_NAMES_PER_LINK; i++) expect(t.publish(1, `n${i}`, 'p')).toEqual({ value: null });
    const over = t.publish(1, 'one-more', 'p');
    expect(errorClass(over)).toBe('ERR_SERVICE');
    expect('error' in over && over.error[1]).toMatch(new RegExp(String(MAX_NAMES_PER_LINK)));
    expect(t.publish(2, 'one-more', 'p')).toEqual({ value: null });
  });
});
