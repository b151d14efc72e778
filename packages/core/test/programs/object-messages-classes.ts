// The classes object-messages.ts and its worker send: each thread that sends or receives one registers it.
import * as MPI from '@tsmpi/core';

export class Point {
  x: number;
  y: number;
  constructor(x: number, y: number) {
    this.x = x;
    this.y = y;
  }
  norm(): number {
    return Math.hypot(this.x, this.y);
  }
}

/** Registered by rank 0 only: rank 1 must fail the receive, naming it. */
export class OnlyOnRankZero {
  v = 1;
}

export function registerClasses(): void {
  MPI.registerClass(Point, { name: 'test.Point' });
}

/** The value every path carries: the types the rules keep, a shared reference, a cycle, a registered instance. */
export function sample(rank: number): Record<string, unknown> {
  const shared = { tag: 'shared' };
  const cyclic: Record<string, unknown> = { name: 'loop' };
  cyclic.self = cyclic;
  return {
    from: rank,
    map: new Map<unknown, unknown>([['a', 1], [2, new Set(['x'])]]),
    set: new Set([1, 2, 3]),
    when: new Date(Date.UTC(2026, 10, 28, 12, 0, 0, 250)),
    big: 2n ** 100n + BigInt(rank),
    bytes: new Float32Array([1.5, rank]),
    cyclic,
    point: new Point(3, 4),
    one: shared,
    two: shared,
    err: new RangeError('out of range', { cause: rank }),
  };
}

/** Throws unless `v` is sample(rank) as the structured-clone rules deliver it. */
export function checkSample(v: unknown, rank: number, where: string): void {
  const fail = (what: string): never => {
    throw new Error(`object-messages: ${where}: ${what}`);
  };
  const m = v as ReturnType<typeof sample> & Record<string, any>;
  if (m.from !== rank) fail(`from is ${String(m.from)}, expected ${rank}`);
  if (!(m.map instanceof Map) || m.map.get('a') !== 1 || !(m.map.get(2) instanceof Set) || !m.map.get(2).has('x')) fail('the Map did not survive');
  if (!(m.set instanceof Set) || [...m.set].join() !== '1,2,3') fail('the Set did not survive');
  if (!(m.when instanceof Date) || m.when.getTime() !== Date.UTC(2026, 10, 28, 12, 0, 0, 250)) fail('the Date did not survive');
  if (m.big !== 2n ** 100n + BigInt(rank)) fail(`the BigInt is ${String(m.big)}`);
  if (!(m.bytes instanceof Float32Array) || m.bytes[0] !== 1.5 || m.bytes[1] !== rank) fail('the Float32Array did not survive');
  if (m.cyclic.self !== m.cyclic || m.cyclic.name !== 'loop') fail('the cycle did not survive');
  if (!(m.point instanceof Point) || m.point.norm() !== 5) fail('the registered Point did not arrive as a Point');
  if (m.one !== m.two || m.one.tag !== 'shared') fail('the shared reference arrived as two objects');
  if (!(m.err instanceof RangeError) || m.err.message !== 'out of range' || m.err.cause !== rank) fail('the RangeError did not survive');
}
