/**
 * Property-based fuzzing of mpiexec's argument parser and host-list parsers
 * (launcher/src/options.ts parseArgs, process-map.ts parseHostList and
 * parseHostfile; issue 17). argv is built from mpiexec's own flags, values
 * that are almost right (negative, zero, huge, fractional, empty, NaN,
 * `--flag=value` forms, `--`, `-`) and arbitrary strings. parseArgs must never
 * throw and must yield run, help, version, or an error whose message is one
 * non-empty line; a run's options must be in their documented ranges. The
 * host parsers must return a list of valid entries or an Error, never throw.
 *
 * Runs: TSMPI_FUZZ_RUNS (default 300 per property); TSMPI_FUZZ_SEED replays a
 * failure (fast-check prints the seed and path when a property fails).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { knownFlags, parseArgs, parseHostList, parseHostfile, type HostSlots } from '@tsmpi/launcher';

const RUNS = Number(process.env['TSMPI_FUZZ_RUNS'] ?? '') || 300;
const SEED = process.env['TSMPI_FUZZ_SEED'] === undefined ? undefined : Number(process.env['TSMPI_FUZZ_SEED']);
const params = (): fc.Parameters<unknown> => (SEED === undefined ? { numRuns: RUNS } : { numRuns: RUNS, seed: SEED });

const flags = knownFlags();
const flagArb = fc.constantFrom(...flags, '--', '-', '-h', '--help', '--version', '-V', '--nope', '-np', '---n', '--=');
const valueArb = fc.oneof(
  fc.constantFrom('0', '1', '2', '-1', '65536', '65537', '1e3', '0x10', '1.5', '-0', '', ' ', 'NaN', 'Infinity', '9'.repeat(400), 'A=1', '=', 'fork', 'ssh', 'slurm', 'threads', 'inline', 'debug', 'h1:2,h2', 'h1:0', '[::1]:2', '/nonexistent/hostfile', '/', '.'),
  fc.integer({ min: -5, max: 70000 }).map(String),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
);
const argArb = fc.oneof(
  { arbitrary: flagArb, weight: 4 },
  { arbitrary: valueArb, weight: 4 },
  { arbitrary: fc.tuple(flagArb, valueArb).map(([f, v]) => `${f}=${v}`), weight: 2 },
);
const argvArb = fc.array(argArb, { maxLength: 12 });

function checkHosts(r: readonly HostSlots[] | Error): void {
  if (r instanceof Error) {
    expect(r.message.length).toBeGreaterThan(0);
    return;
  }
  expect(r.length).toBeGreaterThan(0);
  for (const h of r) {
    expect(h.host.length).toBeGreaterThan(0);
    if (h.slots !== null) expect(Number.isInteger(h.slots) && h.slots >= 1 && h.slots <= 65536, `slots ${h.slots}`).toBe(true);
  }
}

describe('mpiexec argument parser under fuzzing (fast-check)', () => {
  it('random argv: never throws; run, help, version, or a one-line error', () => {
    fc.assert(
      fc.property(argvArb, (argv) => {
        const r = parseArgs(argv);
        expect(['run', 'help', 'version', 'error']).toContain(r.kind);
        if (r.kind === 'error') {
          expect(r.message.trim().length).toBeGreaterThan(0);
          // A value echoed back may hold a newline of its own; the message adds none.
          const echoed = argv.filter((a) => a.includes('\n')).length;
          if (echoed === 0) expect(r.message, 'one line').not.toContain('\n');
        }
        if (r.kind === 'run') {
          const o = r.options;
          expect(Number.isInteger(o.np) && o.np >= 1 && o.np <= 65536, `np ${o.np}`).toBe(true);
          if (o.ppn !== null) expect(Number.isInteger(o.ppn) && o.ppn >= 1, `ppn ${o.ppn}`).toBe(true);
          if (o.timeoutSec !== null) expect(Number.isFinite(o.timeoutSec) && o.timeoutSec > 0, `timeout ${o.timeoutSec}`).toBe(true);
          expect(['fork', 'ssh', 'slurm']).toContain(o.launcher);
          for (const v of o.settings.values()) if (typeof v === 'number') expect(Number.isFinite(v), `setting ${v}`).toBe(true);
          // The program is the first non-option argument (or the one after --) and the rest is its own.
          expect(argv.slice(argv.length - o.args.length)).toEqual(o.args);
          expect(argv[argv.length - o.args.length - 1]).toBe(o.program);
        }
      }),
      params(),
    );
  });

  it('random host lists and hostfiles: a list of valid entries or an Error, never a throw', () => {
    const entry = fc.oneof(
      fc.constantFrom('h1', 'h1:4', 'h1:0', 'h1:-1', 'h1 slots=3', 'h1 slots=0', '[::1]', '[::1]:2', 'a b c', ':', '#c', 'h1:99999999999999999999999'),
      fc.string({ maxLength: 15 }),
    );
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 8 }), fc.constantFrom(',', '\n', '\r\n'), (parts, sep) => {
        const text = parts.join(sep);
        checkHosts(parseHostList(text));
        checkHosts(parseHostfile(text, 'hosts.txt'));
      }),
      params(),
    );
  });

  // Found by the property above (seed 665713838, counterexample "h1:99999999999999999999999"):
  // a slot count beyond 2^53 was accepted as 1e23.
  it('a slot count beyond what -n accepts is refused with a message', () => {
    expect(parseHostList('h1:99999999999999999999999')).toBeInstanceOf(Error);
    expect(parseHostfile('h1 slots=99999999999999999999999', 'hosts.txt')).toBeInstanceOf(Error);
  });
});
