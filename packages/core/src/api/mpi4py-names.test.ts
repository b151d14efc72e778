/**
 * The mpi4py spellings (mpi4py-names.ts): every alias is the canonical function itself, or reads /
 * writes the canonical property; none is enumerable; docs/API.md lists every one. Pure: no init
 * (the property aliases are checked on plain receivers and on a Status, which needs no runtime).
 * The topology classes' neighborhood spellings are also called in a real job (test/programs/topo-suite.ts).
 * A real job calling them runs in the doc tests (docs/MPI4PY.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as MPI from '../index.ts';
import { MPI4PY_ALIASES } from './mpi4py-names.ts';

const API_DOC = fs.readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../docs/API.md'), 'utf8');
const apiSection = API_DOC.slice(API_DOC.indexOf('## mpi4py spellings'));

const MODULE_ALIASES = [
  ['Init', 'init'], ['Finalize', 'finalize'], ['Is_initialized', 'isInitialized'], ['Is_finalized', 'isFinalized'],
  ['Query_thread', 'queryThread'], ['Wtime', 'wtime'], ['Wtick', 'wtick'], ['Get_processor_name', 'getProcessorName'],
  ['Get_error_string', 'errorString'], ['Attach_buffer', 'attachBuffer'], ['Detach_buffer', 'detachBuffer'],
] as const;

const methodRows = MPI4PY_ALIASES.flatMap((t) => t.methods.map((a) => [`${t.owner} ${a.alias}`, t.on, a.alias, a.canonical] as const));
const propertyRows = MPI4PY_ALIASES.flatMap((t) => t.properties.map((a) => [`${t.owner} ${a.alias}`, t.on, a] as const));

describe('mpi4py spellings', () => {
  it.each(MODULE_ALIASES)('MPI.%s is MPI.%s', (alias, canonical) => {
    expect(MPI[alias]).toBe(MPI[canonical]);
  });

  it.each(methodRows)('%s is the canonical method itself', (_, on, alias, canonical) => {
    const o = on as Record<string, unknown>;
    expect(typeof o[canonical]).toBe('function');
    expect(o[alias]).toBe(o[canonical]);
    expect(Object.getOwnPropertyDescriptor(on, alias)!.enumerable).toBe(false);
  });

  it.each(propertyRows)('%s reads or writes its property', (_, on, a) => {
    const fn = (on as Record<string, (v?: unknown) => unknown>)[a.alias]!;
    expect(fn.name).toBe(a.alias);
    expect(Object.getOwnPropertyDescriptor(on, a.alias)!.enumerable).toBe(false);
    const receiver: Record<string, unknown> = { [a.property]: 'before' };
    if (a.write === true) {
      expect(fn.call(receiver, 'after')).toBeUndefined();
      expect(receiver[a.property]).toBe('after');
    } else {
      expect(fn.call(receiver)).toBe('before');
    }
  });

  it('on an Intercomm, an alias is the Intercomm\'s own method; a point-to-point alias is the inherited one', () => {
    // The stubs (intercomm-stubs.ts) are installed by the first Intercomm made; its constructor needs no runtime.
    const Ctor = MPI.Intercomm as unknown as new (name: string, ctx: number, local: Int32Array, remote: Int32Array, remoteCtx: number) => MPI.Intercomm;
    const ic = new Ctor('ic', 0, Int32Array.of(0), Int32Array.of(1), 0);
    const p = Object.getPrototypeOf(ic) as Record<string, unknown>;
    for (const [alias, canonical] of [['Allreduce_init', 'AllreduceInit'], ['Reduce_scatter', 'ReduceScatter'], ['Gatherv_init', 'GathervInit'], ['Barrier', 'barrier']]) {
      expect(p[alias]).toBe(p[canonical]);
      expect(p[canonical]).not.toBe((MPI.Comm.prototype as unknown as Record<string, unknown>)[canonical]);
    }
    for (const alias of ['Send_init', 'Recv_init', 'Bsend_init', 'Rsend_init', 'Ssend_init', 'Sendrecv_replace', 'Isendrecv_replace', 'Psend_init', 'Precv_init', 'Compare']) {
      expect(p[alias]).toBe((MPI.Comm.prototype as unknown as Record<string, unknown>)[alias]);
    }
  });

  it('CartComm, GraphComm and DistGraphComm answer the neighborhood collectives\' spellings with the TopoComm methods', () => {
    const kinds = ['Allgather', 'Allgatherv', 'Alltoall', 'Alltoallv', 'Alltoallw'];
    const pairs = [['neighbor_allgather', 'neighborAllgather'], ['neighbor_alltoall', 'neighborAlltoall'], ...kinds.flatMap((k) => {
      const m = k.toLowerCase();
      return [[`Neighbor_${m}`, `Neighbor${k}`], [`Ineighbor_${m}`, `Ineighbor${k}`], [`Neighbor_${m}_init`, `Neighbor${k}Init`]];
    })];
    expect(pairs.length).toBe(17);
    for (const cls of [MPI.CartComm, MPI.GraphComm, MPI.DistGraphComm]) {
      const p = cls.prototype as unknown as Record<string, unknown>;
      for (const [alias, canonical] of pairs) {
        expect(typeof p[canonical!], `${cls.name}.${canonical}`).toBe('function');
        expect(p[alias!], `${cls.name}.${alias}`).toBe(p[canonical!]);
      }
    }
    // Not on a plain Comm: MPI has them on topology communicators only.
    expect((MPI.Comm.prototype as unknown as Record<string, unknown>)['Neighbor_alltoall']).toBeUndefined();
  });

  it('a Status answers through both spellings', () => {
    const s = new MPI.Status()._set(3, 7, 16, MPI.SUCCESS, false);
    expect([s.Get_source(), s.Get_tag(), s.Get_error(), s.Is_cancelled()]).toEqual([3, 7, MPI.SUCCESS, false]);
    expect(s.Get_count()).toBe(16);
    expect(s.Get_count(MPI.FLOAT64)).toBe(s.getCount(MPI.FLOAT64));
    s.Set_tag(9);
    expect(s.tag).toBe(9);
    expect(Object.keys(s)).not.toContain('Get_source');
  });

  it('a derived Datatype answers through both spellings', () => {
    const t = MPI.Datatype.contiguous(3, MPI.INT32).Commit();
    expect(t.Get_size()).toBe(12);
    expect(t.Get_size()).toBe(t.size);
  });

  it.each([...MODULE_ALIASES.map(([a]) => `MPI.${a}`), ...MPI4PY_ALIASES.flatMap((t) => [...t.methods, ...t.properties].map((a) => a.alias))])(
    'docs/API.md "mpi4py spellings" lists %s',
    (alias) => {
      expect(apiSection).toMatch(new RegExp(`[\`.]${alias.replace(/^MPI\./, '')}\\(`));
    },
  );
});
