/**
 * The lean small allreduce (docs/adr/0022-small-collectives-lean.md): the state a
 * communicator keeps so that a repeated small Allreduce or Iallreduce starts allreduce.ts's
 * algorithm without building anything per call.
 *
 * The API layer (api/coll-comm.ts) checks the arguments and resolves the op once per array kind;
 * this file owns what the call does after that: it takes the communicator's collective sequence
 * number straight from its shared cell (Atomics, so every thread of the process that calls on
 * the communicator draws from one counter, as Pt2ptComm._collSeq does) and runs allreduce.ts's
 * short path on byte views of the caller's arrays through a point-to-point view made once. The result is the
 * same call the general path makes (same tag and signature, same algorithm, same errors), minus its objects:
 * it enters allreduce.ts's short path (shortAllreduce) directly, without allreduce()'s async
 * frame. The byte views of the previous call's arrays are kept for the next call on the same
 * arrays (a loop of Allreduce calls on the same vectors makes no views), but only for arrays
 * whose whole buffer is at most LEAN_ALLREDUCE_MAX_BYTES: keeping a view keeps its buffer alive
 * until the next call, which for a small vector cut from a large buffer could be the whole buffer.
 *
 * State: one LeanAllreduce per communicator wrapper and thread, made on its first lean call; the
 * byte views of its previous call's arrays.
 */
import { collTag } from '../util/index.ts';
import { shortAllreduce } from './allreduce.ts';
import type { ByteOp, CollPt2pt } from './pt2pt.ts';
import { DEFAULT_COLL_TUNING } from './select.ts';
import { signatureOf } from './signature.ts';

/** The signatures the tags of Allreduce and Iallreduce carry (signature.ts), as the general path's _collStart gives them. */
const ALLREDUCE = signatureOf('Allreduce');
const IALLREDUCE = signatureOf('Iallreduce');

/** The lean path takes vectors up to this many bytes: the short messages of the selection (select.ts). */
export const LEAN_ALLREDUCE_MAX_BYTES = DEFAULT_COLL_TUNING.allreduceShortBytes;

/** A communicator's state for the lean small allreduce. */
export class LeanAllreduce {
  readonly blocking: CollPt2pt;
  readonly nonblocking: CollPt2pt;
  readonly seqCells: Int32Array;
  readonly seqIndex: number;
  /** The previous call's recv array and its byte view, kept while the array's buffer is small (see above); null: none. */
  #recv: ArrayBufferView | null = null;
  #recvBytes: Uint8Array = NO_BYTES;
  /** The same for the previous call's send array. */
  #send: ArrayBufferView | null = null;
  #sendBytes: Uint8Array = NO_BYTES;

  /**
   * @param blocking the collective context's point-to-point for Allreduce (its errors name the call)
   * @param nonblocking the same for Iallreduce
   * @param seqCells where the communicator's collective sequence number lives
   * @param seqIndex its index in seqCells
   */
  constructor(blocking: CollPt2pt, nonblocking: CollPt2pt, seqCells: Int32Array, seqIndex: number) {
    this.blocking = blocking;
    this.nonblocking = nonblocking;
    this.seqCells = seqCells;
    this.seqIndex = seqIndex;
  }

  /**
   * Starts one allreduce of `bytes` bytes: `send` (null: IN_PLACE) and `recv` are plain typed
   * arrays of that many bytes, already checked, and `op` is the op on their element type.
   */
  start(isBlocking: boolean, send: ArrayBufferView | null, recv: ArrayBufferView, bytes: number, op: ByteOp): Promise<void> {
    const cells = this.seqCells;
    const seq = Atomics.load(cells, this.seqIndex);
    Atomics.store(cells, this.seqIndex, (seq + 1) | 0);
    // A kept view is the same array's bytes while its length is still `bytes` (an array's buffer and offset never change).
    let recvBytes = this.#recvBytes;
    if (recv !== this.#recv || recvBytes.length !== bytes) {
      recvBytes = new Uint8Array(recv.buffer, recv.byteOffset, bytes);
      const keep = recv.buffer.byteLength <= LEAN_ALLREDUCE_MAX_BYTES;
      this.#recv = keep ? recv : null;
      this.#recvBytes = keep ? recvBytes : NO_BYTES;
    }
    let sendBytes: Uint8Array | null = null;
    if (send !== null) {
      sendBytes = this.#sendBytes;
      if (send !== this.#send || sendBytes.length !== bytes) {
        sendBytes = new Uint8Array(send.buffer, send.byteOffset, bytes);
        const keep = send.buffer.byteLength <= LEAN_ALLREDUCE_MAX_BYTES;
        this.#send = keep ? send : null;
        this.#sendBytes = keep ? sendBytes : NO_BYTES;
      }
    }
    return isBlocking
      ? shortAllreduce(this.blocking, collTag(seq, ALLREDUCE), sendBytes, recvBytes, op)
      : shortAllreduce(this.nonblocking, collTag(seq, IALLREDUCE), sendBytes, recvBytes, op);
  }
}

/** No kept view. */
const NO_BYTES = new Uint8Array(0);
