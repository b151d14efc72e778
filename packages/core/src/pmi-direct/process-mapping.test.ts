// PMI_process_mapping (process-mapping.ts): the values Hydra and Slurm gave in real runs, and cyclic layouts.
import { describe, expect, it } from 'vitest';
import { localPlace, parseProcessMapping } from './process-mapping.ts';

describe('parseProcessMapping', () => {
  it('reads block layouts', () => {
    expect(parseProcessMapping('(vector,(0,1,4))', 4)).toEqual([0, 0, 0, 0]);
    expect(parseProcessMapping('(vector,(0,2,2))', 4)).toEqual([0, 0, 1, 1]);
    expect(parseProcessMapping('(vector,(0,1,2),(1,1,1))', 3)).toEqual([0, 0, 1]);
  });

  it('repeats a cyclic layout until every rank is placed', () => {
    expect(parseProcessMapping('(vector,(0,2,1))', 4)).toEqual([0, 1, 0, 1]);
  });

  it('returns null for anything else', () => {
    expect(parseProcessMapping('', 2)).toBeNull();
    expect(parseProcessMapping('(vector)', 2)).toBeNull();
    expect(parseProcessMapping('(vector,(0,0,2))', 2)).toBeNull();
    expect(parseProcessMapping('(vector,(0,1,2))', 0)).toBeNull();
    expect(parseProcessMapping('(list,(0,1,2))', 2)).toBeNull();
  });
});

describe('localPlace', () => {
  it('gives the rank among its node, the node count', () => {
    expect(localPlace([0, 0, 1, 1], 3)).toEqual({ localRank: 1, localSize: 2, nodes: 2 });
    expect(localPlace([0, 1, 0, 1], 2)).toEqual({ localRank: 1, localSize: 2, nodes: 2 });
    expect(localPlace([0, 0, 0], 0)).toEqual({ localRank: 0, localSize: 3, nodes: 1 });
  });
});
