// PMI-1 lines (pmi1-wire.ts): the commands tsmpi sends, the replies Hydra 4.0.2 sent in a real run.
import { describe, expect, it } from 'vitest';
import { PMI1_MAX_LINE, Pmi1LineReader, formatPmi1Command, parsePmi1Line } from './pmi1-wire.ts';

describe('formatPmi1Command', () => {
  it('writes cmd= then the fields, space separated, ending in a newline', () => {
    expect(formatPmi1Command('init', [['pmi_version', '1'], ['pmi_subversion', '1']])).toBe('cmd=init pmi_version=1 pmi_subversion=1\n');
    expect(formatPmi1Command('barrier_in')).toBe('cmd=barrier_in\n');
  });

  it('refuses a value with a space, "=" or a newline, and an over-long line', () => {
    expect(() => formatPmi1Command('put', [['value', 'a b']])).toThrow(/value of value/);
    expect(() => formatPmi1Command('put', [['value', 'a=b']])).toThrow();
    expect(() => formatPmi1Command('put', [['value', 'a\nb']])).toThrow();
    expect(() => formatPmi1Command('put', [['k y', 'v']])).toThrow(/key/);
    expect(() => formatPmi1Command('put', [['value', 'x'.repeat(PMI1_MAX_LINE)]])).toThrow(/exceeds/);
  });
});

describe('parsePmi1Line', () => {
  it('reads the replies Hydra sends', () => {
    const r = parsePmi1Line('cmd=get_result rc=0 msg=success value=(vector,(0,1,4))');
    expect(r?.cmd).toBe('get_result');
    expect(r?.fields.get('rc')).toBe('0');
    expect(r?.fields.get('value')).toBe('(vector,(0,1,4))');
    expect(parsePmi1Line('cmd=barrier_out')).toEqual({ cmd: 'barrier_out', fields: new Map() });
    expect(parsePmi1Line('cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\r')?.fields.get('vallen_max')).toBe('1024');
  });

  it('keeps a value with "=" after the first and continues a value across spaces', () => {
    expect(parsePmi1Line('cmd=x value=a=b')?.fields.get('value')).toBe('a=b');
    expect(parsePmi1Line('cmd=get_result rc=-1 msg=key not found')?.fields.get('msg')).toBe('key not found');
  });

  it('returns null for an empty line, a line not starting with cmd=, an empty key', () => {
    expect(parsePmi1Line('')).toBeNull();
    expect(parsePmi1Line('rc=0 cmd=x')).toBeNull();
    expect(parsePmi1Line('cmd=')).toBeNull();
    expect(parsePmi1Line('cmd=x =v')).toBeNull();
    expect(parsePmi1Line('junk')).toBeNull();
  });
});

describe('Pmi1LineReader', () => {
  it('splits lines across chunk boundaries', () => {
    const r = new Pmi1LineReader();
    expect(r.push('cmd=a\ncmd=')).toEqual(['cmd=a']);
    expect(r.push('b x=1')).toEqual([]);
    expect(r.push('\n')).toEqual(['cmd=b x=1']);
  });

  it('refuses a line longer than its limit', () => {
    expect(() => new Pmi1LineReader(8).push('cmd=toolong')).toThrow(/longer than 8/);
  });
});
