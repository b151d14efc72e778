/**
 * MPI.reduceLocal (API.md "All collectives, in every form"; MPI 4.0 section
 * 6.9.7, MPI_Reduce_local): `inoutbuf = inbuf op inoutbuf` element-wise on
 * the calling process, with the ops and (op, datatype) rules of the
 * reductions; no communication. A user op sees the same arguments as in a
 * collective (`invec`, `inoutvec`, the datatype).
 */
import { ERR_BUFFER, ERR_COUNT, mpiError } from '../util/index.ts';
import { packedOf, resolveBuf, unpackArea, type BufSpec } from './buffer.ts';
import { byteOpOf, type Op } from './op.ts';

/**
 * Combines inbuf into inoutbuf: `inoutbuf[i] = inbuf[i] op inoutbuf[i]`. Both hold the same number of
 * bytes of items; the result takes inoutbuf's layout.
 * @throws MPIError(ERR_OP) when op is not an Op, is freed or is not defined on the datatype;
 *   ERR_COUNT when the buffers differ in size; ERR_BUFFER, ERR_TYPE for a bad buffer.
 * @example MPI.reduceLocal(partial, total, MPI.SUM); // total[i] += partial[i]
 */
export function reduceLocal(inbuf: BufSpec, inoutbuf: BufSpec, op: Op): void {
  const call = 'reduceLocal';
  const inb = resolveBuf(inbuf, call, 'inbuf');
  const inout = resolveBuf(inoutbuf, call, 'inoutbuf');
  if (inb.packedBytes !== inout.packedBytes) {
    throw mpiError(ERR_COUNT, call, `inbuf holds ${inb.count} ${inb.datatype.name} (${inb.packedBytes} bytes) but inoutbuf holds ${inout.count} ${inout.datatype.name} (${inout.packedBytes} bytes): they must match`);
  }
  const bop = byteOpOf(op, inout.datatype, inout.packedBytes, call);
  if (inout.packedBytes % bop.itemBytes !== 0) {
    throw mpiError(ERR_COUNT, call, `inoutbuf's ${inout.packedBytes} bytes split an item of ${bop.itemBytes} bytes`);
  }
  if (inout.packedBytes === 0) return;
  const inBytes = packedOf(inb);
  // recvAreaOf would be a fresh (zeroed) buffer for a non-contiguous layout: the current contents are the operand.
  const acc = inout.contiguous ?? packedOf(inout);
  if (acc.buffer === inBytes.buffer && overlaps(acc, inBytes)) {
    throw mpiError(ERR_BUFFER, call, 'inbuf and inoutbuf overlap: MPI requires distinct buffers');
  }
  bop.combine(inBytes, acc);
  if (inout.contiguous === null) unpackArea(inout, acc);
}

function overlaps(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength;
}
