// PMI-2 frames (pmi2-wire.ts): the commands tsmpi sends, the replies Slurm 22.05 sent in a real run.
import { describe, expect, it } from 'vitest';
import { Pmi2FrameReader, encodePmi2Command, parsePmi2Body } from './pmi2-wire.ts';

describe('encodePmi2Command', () => {
  it('prefixes the body with its length, left-justified in 6 bytes', () => {
    const frame = encodePmi2Command('fullinit', [['pmijobid', '1.0'], ['pmirank', '0'], ['threaded', 'FALSE']]).toString();
    const body = 'cmd=fullinit;pmijobid=1.0;pmirank=0;threaded=FALSE;';
    expect(body.length).toBe(51);
    expect(frame).toBe(`51    ${body}`);
    expect(encodePmi2Command('kvs-fence').toString()).toBe('14    cmd=kvs-fence;');
  });

  it('doubles a ";" in a value (MPICH) and refuses a key with "="', () => {
    expect(encodePmi2Command('abort', [['msg', 'a;b']]).toString()).toBe('19    cmd=abort;msg=a;;b;');
    expect(() => encodePmi2Command('x', [['a=b', 'v']])).toThrow(/key/);
  });
});

describe('parsePmi2Body', () => {
  it('reads the replies Slurm sends', () => {
    const r = parsePmi2Body('cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=2;size=3;appnum=-1;debugged=FALSE;pmiverbose=FALSE;');
    expect(r?.cmd).toBe('fullinit-response');
    expect(r?.fields.get('rank')).toBe('2');
    expect(r?.fields.get('size')).toBe('3');
    expect(parsePmi2Body('cmd=kvs-get-response;rc=0;found=FALSE;')?.fields.get('found')).toBe('FALSE');
    expect(parsePmi2Body('cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,1,2),(1,1,1));')?.fields.get('value')).toBe('(vector,(0,1,2),(1,1,1))');
  });

  it('undoes ";;" and accepts a last pair without ";"', () => {
    expect(parsePmi2Body('cmd=x;msg=a;;b;')?.fields.get('msg')).toBe('a;b');
    expect(parsePmi2Body('cmd=x;k=v')?.fields.get('k')).toBe('v');
  });

  it('returns null when the first key is not cmd or a pair has no key', () => {
    expect(parsePmi2Body('rc=0;cmd=x;')).toBeNull();
    expect(parsePmi2Body('cmd=x;=v;')).toBeNull();
    expect(parsePmi2Body('cmd=x;novalue;')).toBeNull();
    expect(parsePmi2Body('')).toBeNull();
  });
});

describe('Pmi2FrameReader', () => {
  it('splits frames across chunk boundaries', () => {
    const a = encodePmi2Command('kvs-put-response', [['rc', '0']]);
    const b = encodePmi2Command('kvs-fence-response', [['rc', '0']]);
    const all = Buffer.concat([a, b]);
    const r = new Pmi2FrameReader();
    expect(r.push(all.subarray(0, 3))).toEqual([]);
    expect(r.push(all.subarray(3, a.length + 2))).toEqual(['cmd=kvs-put-response;rc=0;']);
    expect(r.push(all.subarray(a.length + 2))).toEqual(['cmd=kvs-fence-response;rc=0;']);
  });

  it('refuses a header that is not a number', () => {
    expect(() => new Pmi2FrameReader().push(Buffer.from('abcdefcmd=x;'))).toThrow(/not a decimal/);
  });
});
