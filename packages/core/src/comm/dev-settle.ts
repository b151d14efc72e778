/**
 * A device request as a promise's outcome, for the collective algorithms'
 * point-to-point views (group-pt2pt.ts, peer-pt2pt.ts): `settle` resolves
 * with `value(r)` once the request is done (at once if it already is) or
 * rejects with its error; `none`, `bytesOf` and `countOf` are the values a
 * send, a byte receive and a receive into a given buffer resolve with.
 */
import type { DevRequest } from '../device/index.ts';

export function settle(r: DevRequest, resolve: (v: any) => void, reject: (e: unknown) => void, value: (r: DevRequest) => unknown): void {
  if (r.done) {
    if (r.error !== null) reject(r.error);
    else resolve(value(r));
    return;
  }
  r.onComplete = (d) => (d.error !== null ? reject(d.error) : resolve(value(d)));
}

export const none = (): undefined => undefined;
export const bytesOf = (r: DevRequest): Uint8Array => r.value as Uint8Array;
export const countOf = (r: DevRequest): number => r.count;
