import { describe, expect, it } from 'vitest';
import { ERR_OP, MPIError } from '../util/index.ts';
import { checkOpArg } from './op.ts';

function opError(op: unknown): MPIError {
  try {
    checkOpArg(op, 'allreduce');
  } catch (e) {
    return e as MPIError;
  }
  throw new Error('checkOpArg accepted a value that is not an Op');
}

describe('checkOpArg', () => {
  it('says what the argument is instead of an Op, in words (never "undefined undefined")', () => {
    for (const [op, text] of [
      [undefined, 'op is missing (undefined); there is no default op'],
      [null, 'op is null'],
      ['sum', 'op is the string "sum"'],
      [7, 'op is the number 7'],
      [{}, 'op is an object'],
      [[1], 'op is an array'],
      [function add(): void {}, 'op is a function (add); wrap it with MPI.Op.create'],
    ] as const) {
      const e = opError(op);
      expect(e.errorClass).toBe(ERR_OP);
      expect(e.call).toBe('allreduce');
      expect(e.message).toContain(text);
      expect(e.message).toContain('expected an MPI.Op such as MPI.SUM');
      expect(e.message).not.toContain('undefined undefined');
    }
  });
});
