/**
 * Length-prefixed bundles of byte strings, used by the object (variable-size)
 * collectives to move a subtree's worth of values in one message.
 *
 * Layout (little endian):  u32 n | u32 len[0] ... u32 len[n-1] | bytes[0] ... bytes[n-1]
 * decodeFrames returns views into its input (no copy).
 */
import { assert } from '../util/index.ts';

/** Packs parts into one bundle. */
export function encodeFrames(parts: readonly Uint8Array[]): Uint8Array {
  const head = 4 + 4 * parts.length;
  let total = head;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, parts.length, true);
  let at = head;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    view.setUint32(4 + 4 * i, p.length, true);
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Splits a bundle made by encodeFrames; the parts are views into `bundle`. */
export function decodeFrames(bundle: Uint8Array): Uint8Array[] {
  const view = new DataView(bundle.buffer, bundle.byteOffset, bundle.byteLength);
  const n = view.getUint32(0, true);
  let at = 4 + 4 * n;
  const parts: Uint8Array[] = new Array<Uint8Array>(n);
  for (let i = 0; i < n; i++) {
    const len = view.getUint32(4 + 4 * i, true);
    parts[i] = bundle.subarray(at, at + len);
    at += len;
  }
  assert(at === bundle.length, 'frame bundle length matches its header');
  return parts;
}
