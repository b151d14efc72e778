/**
 * The decode stage: one reusable buffer per thread that a received object message is copied into
 * for msgpackr to decode from, instead of the message's own bytes.
 *
 * Why: msgpackr's unpack caches a DataView on its source (`source.dataView = new DataView(...)`),
 * which pays only for a source that is used again. A message's bytes are a fresh view each time (of
 * a socket read, or of shared memory), so every object message received paid a DataView and a new
 * property (a new hidden class and property store) on its view, and a Buffer's or shared memory's
 * bytes also a Uint8Array view or a copy (privateView below). That garbage, ~300 bytes a
 * message, is what fills the young generation of a job of small object messages between its
 * scavenges. Copying the few bytes of a small message into the stage costs less, and the stage's
 * DataView is made once.
 *
 * The stage holds messages of up to STAGE_BYTES; a larger one is decoded from its own bytes (the
 * copy would cost more than the DataView saves). A decode that starts while another runs (a
 * registered class's reviver that decodes) does not use the stage: the outer decode still reads it.
 * msgpackr decodes with copyBuffers, so no decoded value aliases the stage.
 */
import type { Packr } from 'msgpackr';

/** The largest message decoded through the stage. */
export const STAGE_BYTES = 16 * 1024;

let stage: Uint8Array | null = null;
/** Whether a decode from the stage is running on this thread. */
let busy = false;
/** msgpackr's unpack options (start, end), reused: the stage is longer than the message. */
const range = { start: 0, end: 0 };

/**
 * The value `packr` decodes from a received message's `bytes`, from offset `start`: from a copy in the
 * stage when the message fits and no decode from the stage is running, else from the bytes themselves
 * as msgpackr may read them (privateView).
 * @throws what packr.unpack throws
 */
export function unpackMessage(packr: Packr, bytes: Uint8Array, start: number): unknown {
  if (busy || bytes.length === 0 || bytes.length > STAGE_BYTES) return packr.unpack(privateView(bytes), start === 0 ? undefined : { start });
  const s = (stage ??= new Uint8Array(STAGE_BYTES));
  s.set(bytes);
  range.start = start;
  range.end = bytes.length;
  busy = true;
  try {
    return packr.unpack(s, range);
  } finally {
    busy = false;
  }
}

/**
 * `bytes` as msgpackr may decode them: a Buffer's as a plain Uint8Array (its slices would be
 * Buffers, and a binary must arrive as a Uint8Array, as structuredClone gives), shared memory's
 * as a private copy (msgpackr's native string extraction refuses shared memory).
 */
function privateView(bytes: Uint8Array): Uint8Array {
  if (bytes.buffer instanceof SharedArrayBuffer) return new Uint8Array(bytes);
  return Buffer.isBuffer(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) : bytes;
}
