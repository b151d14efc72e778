/**
 * What V8's inlining limit costs a program's own code (no MPI): a particle
 * update whose hot loop calls a mid-size helper (171 bytes of bytecode), timed
 * once warm. docs/PERFORMANCE.md 4.33 runs it with V8's default limit (460
 * bytes) and with --max-inlined-bytecode-size=120, the limit that makes the
 * neighbour rate's first 1,000 iterations cheaper to compile: the helper is then
 * called instead of inlined, and the loop runs more than twice as long.
 *
 *   node --import tsx packages/bench/src/inline-cost.ts [--steps 2000]
 *   node --max-inlined-bytecode-size=120 --import tsx packages/bench/src/inline-cost.ts
 */
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { steps: { type: 'string', default: '2000' }, particles: { type: 'string', default: '10000' } } });
const steps = Number(values.steps);
const particles = Number(values.particles);

/** Plain objects of one shape (class fields would first define each field as undefined, a slower shape). */
interface Vec {
  x: number;
  y: number;
  z: number;
}
const vec = (x: number, y: number, z: number): Vec => ({ x, y, z });

/** p += a v, wrapped into the unit cube; returns |p|^2. Big enough (171 bytes of bytecode) to miss a limit of 120. */
function advance(a: number, p: Vec, v: Vec): number {
  let x = p.x + a * v.x;
  let y = p.y + a * v.y;
  let z = p.z + a * v.z;
  if (x > 1) x -= 1; else if (x < 0) x += 1;
  if (y > 1) y -= 1; else if (y < 0) y += 1;
  if (z > 1) z -= 1; else if (z < 0) z += 1;
  p.x = x;
  p.y = y;
  p.z = z;
  return x * x + y * y + z * z;
}

function step(ps: Vec[], vs: Vec[], dt: number): number {
  let e = 0;
  for (let i = 0; i < ps.length; i++) e += advance(dt, ps[i]!, vs[i]!);
  return e;
}

const ps: Vec[] = [];
const vs: Vec[] = [];
for (let i = 0; i < particles; i++) {
  ps.push(vec(Math.random(), Math.random(), Math.random()));
  vs.push(vec(Math.random() - 0.5, Math.random() - 0.5, Math.random() - 0.5));
}
for (let s = 0; s < 200; s++) step(ps, vs, 0.001); // warm: optimised before the timed steps
let sink = 0;
const t0 = performance.now();
for (let s = 0; s < steps; s++) sink += step(ps, vs, 0.001);
const ms = performance.now() - t0;
console.log(`inline-cost: ${steps} steps of ${particles} particles in ${ms.toFixed(0)} ms (${((ms * 1e6) / (steps * particles)).toFixed(2)} ns per call)${sink > 0 ? '' : ' '}`);
