/**
 * Reduction operations. Predefined ops carry the engine's op code; user ops
 * (Op.create) carry their function.
 */
import { ERR_OP, mpiError } from '../util/index.ts';

export type UserFunction = (invec: any, inoutvec: any, datatype: unknown) => void;

export class Op {
  readonly name: string;
  readonly _code: number;
  readonly _commute: boolean;
  readonly _fn: UserFunction | null;
  _freed = false;

  /** @internal */
  constructor(name: string, code: number, commute: boolean, fn: UserFunction | null) {
    this.name = name;
    this._code = code;
    this._commute = commute;
    this._fn = fn;
  }

  /**
   * A user op: fn(invec, inoutvec, datatype) must set inoutvec[i] = invec[i] op inoutvec[i].
   * @example const maxAbs = MPI.Op.create((a, b) => { for (let i = 0; i < a.length; i++) b[i] = Math.max(Math.abs(a[i]), Math.abs(b[i])); });
   */
  static create(fn: UserFunction, commute = true): Op {
    if (typeof fn !== 'function') throw mpiError(ERR_OP, 'Op.create', `fn is ${typeof fn}: expected a function (invec, inoutvec, datatype) => void`);
    return new Op('user', 0, commute, fn);
  }

  free(): void {
    if (this._fn === null) throw mpiError(ERR_OP, 'Op.free', `${this.name} is predefined and cannot be freed`);
    this._freed = true;
  }

  toString(): string {
    return `Op(${this.name})`;
  }
}

// Codes follow the datatype engine's op table.
export const SUM = new Op('SUM', 1, true, null);
export const PROD = new Op('PROD', 2, true, null);
export const MIN = new Op('MIN', 3, true, null);
export const MAX = new Op('MAX', 4, true, null);
export const LAND = new Op('LAND', 5, true, null);
export const LOR = new Op('LOR', 6, true, null);
export const LXOR = new Op('LXOR', 7, true, null);
export const BAND = new Op('BAND', 8, true, null);
export const BOR = new Op('BOR', 9, true, null);
export const BXOR = new Op('BXOR', 10, true, null);
export const MINLOC = new Op('MINLOC', 11, true, null);
export const MAXLOC = new Op('MAXLOC', 12, true, null);
