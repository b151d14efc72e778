/**
 * Command-line flags shared by the benchmarks (msgrate.ts, pingpong.ts) and
 * mirrored by the C references in ../reference: --iterations N, --warmup N,
 * --window N, --size BYTES, --json FILE, --help.
 *
 * Parsing is pure (argv in, a result object out) and never exits the process,
 * so the entry points decide what to print and on which rank.
 */
import { parseArgs } from 'node:util';

/** The flags after parsing, with defaults filled in. */
export interface BenchFlags {
  /** Timed iterations (--iterations). */
  readonly iterations: number;
  /** Untimed warm-up iterations (--warmup). */
  readonly warmup: number;
  /** Messages posted each way per iteration (--window); msgrate only. */
  readonly window: number;
  /** Message sizes in bytes (--size, repeatable); pingpong measures each in turn. */
  readonly sizesBytes: readonly number[];
  /** File to append one JSON record per line to (--json), or null. */
  readonly jsonFile: string | null;
}

/** Defaults of one benchmark; the flags override them. */
export interface BenchDefaults {
  readonly iterations: number;
  readonly warmup: number;
  readonly window: number;
  readonly sizesBytes: readonly number[];
}

/** Outcome of {@link parseBenchArgs}. */
export type BenchArgsResult =
  | { readonly kind: 'run'; readonly flags: BenchFlags }
  | { readonly kind: 'help' }
  | { readonly kind: 'error'; readonly message: string };

/** Lower bound of each integer flag: a run needs at least one iteration and one message per window. */
const INT_FLAGS = [
  { name: 'iterations', min: 1 },
  { name: 'warmup', min: 0 },
  { name: 'window', min: 1 },
] as const;

/**
 * Parses benchmark flags.
 *
 * @param argv - the arguments after the program name (process.argv.slice(2))
 * @param defaults - this benchmark's defaults
 * @returns `run` with the flags, `help` for --help/-h, or `error` with a one-line message
 * @example
 * parseBenchArgs(['--iterations', '100'], { iterations: 10_000, warmup: 10, window: 12, sizesBytes: [0] });
 */
export function parseBenchArgs(argv: readonly string[], defaults: BenchDefaults): BenchArgsResult {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        iterations: { type: 'string' },
        warmup: { type: 'string' },
        window: { type: 'string' },
        size: { type: 'string', multiple: true },
        json: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    return { kind: 'error', message: (err as Error).message };
  }
  if (values['help'] === true) return { kind: 'help' };

  const ints: Record<string, number> = {};
  for (const { name, min } of INT_FLAGS) {
    const raw = values[name];
    if (typeof raw !== 'string') {
      ints[name] = defaults[name];
      continue;
    }
    const n = parseInteger(raw);
    if (n === null || n < min) return { kind: 'error', message: `--${name}: expected an integer >= ${min}, got '${raw}'` };
    ints[name] = n;
  }

  let sizesBytes = defaults.sizesBytes;
  const rawSizes = values['size'];
  if (Array.isArray(rawSizes) && rawSizes.length > 0) {
    const parsed: number[] = [];
    for (const raw of rawSizes) {
      for (const part of raw.split(',')) {
        const n = parseInteger(part);
        if (n === null) return { kind: 'error', message: `--size: expected a byte count >= 0, got '${part}'` };
        parsed.push(n);
      }
    }
    sizesBytes = parsed;
  }

  const json = values['json'];
  return {
    kind: 'run',
    flags: {
      iterations: ints['iterations'] ?? defaults.iterations,
      warmup: ints['warmup'] ?? defaults.warmup,
      window: ints['window'] ?? defaults.window,
      sizesBytes,
      jsonFile: typeof json === 'string' && json !== '' ? json : null,
    },
  };
}

/** A non-negative decimal integer (underscores allowed: 10_000), or null. */
function parseInteger(raw: string): number | null {
  const text = raw.trim().replaceAll('_', '');
  if (!/^\d+$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/** Outcome of {@link takeFlag}: the flag's value (undefined when absent) and argv without it. */
export interface TakenFlag {
  readonly value: string | undefined;
  readonly rest: string[];
}

/**
 * Takes a benchmark's own flag `--NAME VALUE` or `--NAME=VALUE` out of argv, so that the rest
 * goes to {@link parseBenchArgs}, which knows only the common flags (the TypeScript side of
 * reference/bench-args.h's bench_take_flag).
 *
 * @param argv - the arguments (not modified)
 * @param name - the flag's name without the dashes
 * @returns its value (the last one when given twice) and the other arguments in their order
 * @example
 * takeFlag(['--dir', '/var/tmp', '--iterations', '3'], 'dir'); // { value: '/var/tmp', rest: ['--iterations', '3'] }
 */
export function takeFlag(argv: readonly string[], name: string): TakenFlag {
  let value: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === `--${name}` && i + 1 < argv.length) value = argv[++i];
    else if (a.startsWith(`--${name}=`)) value = a.slice(name.length + 3);
    else rest.push(a);
  }
  return { value, rest };
}
