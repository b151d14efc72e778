/**
 * A device request as a promise's outcome, for the collective algorithms'
 * point-to-point views (group-pt2pt.ts, peer-pt2pt.ts): `promiseOf` resolves
 * with `value(r)` once the request is done or rejects with its error; `none`,
 * `bytesOf` and `countOf` are the values a send, a byte receive and a receive
 * into a given buffer resolve with.
 */
import type { DevRequest } from '../device/index.ts';

/**
 * The promise of `r`'s outcome. A request already done (a message that was waiting, an eager
 * send) gets a settled promise without a Promise constructor's executor and resolving functions:
 * a small collective meets that case on about half its receives (coll/allreduce.ts).
 */
export function promiseOf<T>(r: DevRequest, value: (r: DevRequest) => T): Promise<T> {
  if (r.done) return r.error !== null ? Promise.reject(r.error) : Promise.resolve(value(r));
  return new Promise<T>((resolve, reject) => {
    r.onComplete = (d) => (d.error !== null ? reject(d.error) : resolve(value(d)));
  });
}

export const none = (): undefined => undefined;
export const bytesOf = (r: DevRequest): Uint8Array => r.value as Uint8Array;
export const countOf = (r: DevRequest): number => r.count;
