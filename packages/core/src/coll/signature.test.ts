/** signature.ts and util/coll-tag.ts: the signature bits of every collective call, which calls are one collective, the names and text of a mismatch, and the tag layout. */
import { describe, expect, it } from 'vitest';
import { COLL_SEQ_MASK, collSignature, collTag, tagMatchMask } from '../util/index.ts';
import { callNameOf, kindMismatch, kindOf, rootBitsOf, sameCollective, signatureOf } from './signature.ts';

const TAG_UB = 2 ** 30 - 1;

describe('collective signatures', () => {
  it('tell the collectives apart: kind, object or buffer form, root', () => {
    const pairs: [string, number, string, number][] = [
      ['barrier', -1, 'bcast', 0],
      ['bcast', 0, 'reduce', 0],
      ['allreduce', -1, 'reduce', 0],
      ['Allreduce', -1, 'Reduce', 0],
      ['gather', 0, 'scatter', 0],
      ['Gather', 0, 'Gatherv', 0],
      ['bcast', 0, 'bcast', 1],
      ['Reduce', 0, 'Reduce', 3],
      ['bcast', 0, 'Bcast', 0],
      ['allreduce', -1, 'Allreduce', -1],
      ['ibarrier', -1, 'Ibcast', 0],
      ['ReduceScatter', -1, 'ReduceScatterBlock', -1],
      ['NeighborAlltoall', -1, 'neighborAlltoall', -1],
    ];
    for (const [a, ra, b, rb] of pairs) {
      expect(sameCollective(signatureOf(a, ra), signatureOf(b, rb)), `${a} vs ${b}`).toBe(false);
    }
  });

  it('take the blocking, nonblocking and persistent forms of one collective, and every barrier, as one collective', () => {
    const same: [string, string][] = [
      ['Bcast', 'Ibcast'], ['Bcast', 'BcastInit'], ['Allreduce', 'Iallreduce'], ['AllreduceInit', 'Allreduce'],
      ['barrier', 'ibarrier'], ['barrier', 'Ibarrier'], ['ibarrier', 'BarrierInit'], ['Alltoallw', 'Ialltoallw'],
      ['NeighborAllgatherv', 'IneighborAllgatherv'], ['ReduceScatterBlock', 'IreduceScatterBlock'],
    ];
    for (const [a, b] of same) expect(sameCollective(signatureOf(a, 2), signatureOf(b, 2)), `${a} vs ${b}`).toBe(true);
    // The root is carried mod 8: roots 1 and 9 look alike (documented), 1 and 2 do not.
    expect(sameCollective(signatureOf('bcast', 1), signatureOf('bcast', 9))).toBe(true);
    expect(rootBitsOf(signatureOf('Scatterv', 13))).toBe(5);
    expect(rootBitsOf(signatureOf('allreduce', 3))).toBe(-1);
  });

  it('give every call not named a signature of kind 0, and kind 0 calls are one collective', () => {
    expect(signatureOf('dup')).toBe(0);
    expect(kindOf(signatureOf('Comm.split'))).toBe(0);
    expect(sameCollective(signatureOf('dup'), signatureOf('split'))).toBe(true);
    expect(sameCollective(signatureOf('dup'), signatureOf('barrier'))).toBe(false);
  });

  it('name the call of a signature, with every form that shares it', () => {
    expect(callNameOf(signatureOf('barrier'))).toBe('barrier');
    expect(callNameOf(signatureOf('Ibarrier'))).toBe('Ibarrier or BarrierInit');
    expect(callNameOf(signatureOf('bcast', 5))).toBe('bcast');
    expect(callNameOf(signatureOf('Ireduce', 1))).toBe('Ireduce or ReduceInit');
    expect(callNameOf(signatureOf('NeighborAlltoallw'))).toBe('NeighborAlltoallw');
    expect(callNameOf(0)).toMatch(/not one of the collectives/);
  });

  it('make a mismatch error that names both calls, both ranks and the roots', () => {
    const e = kindMismatch('bcast', 'COMM_WORLD', 1, 0, 0, signatureOf('bcast', 0), signatureOf('barrier'), 2);
    expect(e.errorClass).toBe(16); // MPI_ERR_OTHER, as MPICH's collective checks
    expect(e.call).toBe('bcast');
    expect(e.message).toBe('MPI_ERR_OTHER: bcast: rank 0 of COMM_WORLD called barrier where this rank (1) called bcast (root 0): every rank must make the same collective calls, with the same root, in the same order');
    const roots = kindMismatch('Reduce', 'dup', 0, 0, 1, signatureOf('Reduce', 0), signatureOf('Reduce', 1), 4);
    expect(roots.message).toContain('rank 1 of dup called Reduce (root 1) where this rank (0) called Reduce (root 0)');
    // Past 8 ranks the root is known mod 8 only: the text says it differs without guessing it.
    const big = kindMismatch('bcast', 'COMM_WORLD', 3, 2, 4, signatureOf('bcast', 2), signatureOf('bcast', 5), 16);
    expect(big.message).toContain('rank 4 of COMM_WORLD called bcast with another root than 2 where this rank (3) called bcast (root 2)');
  });
});

describe('collective tag layout (util/coll-tag.ts)', () => {
  it('keeps the sequence in the low 20 bits and the signature above, within 0..TAG_UB', () => {
    const sig = signatureOf('ScattervInit', 7);
    const tag = collTag(0x7fffffff, sig);
    expect(tag).toBeGreaterThanOrEqual(0);
    expect(tag).toBeLessThanOrEqual(TAG_UB);
    expect(tag & COLL_SEQ_MASK).toBe(0x7fffffff & COLL_SEQ_MASK);
    expect(collSignature(tag)).toBe(sig);
    expect(collTag(-1, 1023)).toBe(TAG_UB); // the largest sequence and signature: still a tag the lanes take
    expect(collSignature(collTag(12345, 0))).toBe(0);
  });

  it('masks the signature only on collective contexts (suffix 1)', () => {
    expect(tagMatchMask(1)).toBe(COLL_SEQ_MASK);
    expect(tagMatchMask(4 * 37 + 1)).toBe(COLL_SEQ_MASK);
    for (const suffix of [0, 2, 3]) expect(tagMatchMask(4 * 37 + suffix)).toBe(-1);
  });
});
