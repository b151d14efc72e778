/**
 * The stack an MPIError shows starts in the user's code (issue 39): the
 * frames of tsmpi's own packages above the first frame of the program are
 * dropped, so `MPIError: MPI_ERR_RANK: send: ...` is followed by
 * `at main (app.ts:14:9)`, not by util/errors.ts and the argument checks.
 * The rest of the stack is kept as V8 wrote it (a user callback that a
 * library frame called still shows that frame); a stack with no frame
 * outside tsmpi (an error raised in the progress engine) is kept whole.
 *
 * Costs: a stack is captured when an error is made, as for any Error, and
 * formatted (source maps applied: .ts lines under tsx or
 * --enable-source-maps) only when something reads `stack`. Nothing runs on a
 * call that does not fail.
 *
 * An error made where no user frame is on the stack (a message that arrived
 * and failed a request) gets its user's frames from the call that awaited
 * it: callSite() captures the stack at the call's own await, whose async
 * frames (V8's zero-cost async stack traces) name the user's function and
 * line. Only the error path does this.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Frames kept beyond Error.stackTraceLimit while capturing, so that the
 * library's own frames (a check, the call, a collective's stages: up to ~8)
 * do not push the user's frame out of a 10-frame stack.
 */
const LIBRARY_DEPTH = 16;

/** The folder holding tsmpi's packages: packages/ in the repository, node_modules/@tsmpi/ once installed. */
const PACKAGES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** The code of tsmpi's packages (their sources and their build; not their tests and test programs). */
const OWN_PATHS = ['core', 'transport-tcp', 'launcher'].flatMap((p) => ['src', 'dist'].map((d) => path.join(PACKAGES_DIR, p, d) + path.sep));

/** A V8 frame line: `    at f (place)` or `    at place`. */
const FRAME = /^\s+at (?:.*? \((.*)\)|(.*))$/;

/** A holder for a captured stack (V8 formats it on first read). */
export interface StackSite {
  stack?: string;
}

/**
 * Captures the current stack into a fresh holder, `above` and the frames above it left out.
 * @param above - the function whose call is the holder's top frame (excluded)
 */
export function captureSite(above: Function): StackSite {
  const site: StackSite = {};
  const limit = Error.stackTraceLimit;
  if (typeof limit === 'number') Error.stackTraceLimit = limit + LIBRARY_DEPTH;
  try {
    Error.captureStackTrace(site, above);
  } finally {
    Error.stackTraceLimit = limit;
  }
  return site;
}

/** True for a frame's place (path or file URL, with line and column) that is in tsmpi's packages, in Node itself, or has no file. */
export function isLibraryPlace(place: string): boolean {
  if (place.startsWith('node:') || place === 'native' || place === '<anonymous>' || !/:\d+:\d+$/.test(place)) return true;
  let file = place;
  if (file.startsWith('file://')) {
    try {
      file = fileURLToPath(file.replace(/:\d+:\d+$/, ''));
    } catch {
      return false;
    }
  }
  return OWN_PATHS.some((p) => file.startsWith(p));
}

/**
 * The frames of a formatted stack from its first user frame on, at most `limit` of them.
 * @param stack - a V8 stack (header line or lines, then `    at ...` lines)
 * @returns the frame lines, or null when no frame is the user's
 */
export function userFrames(stack: string, limit: number): string[] | null {
  const lines = stack.split('\n');
  let i = lines.findIndex((l) => FRAME.test(l));
  if (i < 0) return null;
  for (; i < lines.length; i++) {
    const m = FRAME.exec(lines[i]!);
    if (m === null) return null;
    if (!isLibraryPlace(m[1] ?? m[2]!)) return lines.slice(i, i + limit);
  }
  return null;
}

/**
 * The stack shown for an error: `header`, then its frames from the user's first one on, taken
 * from the site where it was made, else from the call site that awaited it, else the made site whole.
 */
export function userStack(header: string, made: StackSite, callSite: StackSite | undefined): string {
  const limit = typeof Error.stackTraceLimit === 'number' ? Error.stackTraceLimit : 10;
  const madeStack = made.stack ?? '';
  const frames = userFrames(madeStack, limit) ?? (callSite === undefined ? null : userFrames(callSite.stack ?? '', limit));
  if (frames !== null) return [header, ...frames].join('\n');
  const all = madeStack.split('\n').filter((l) => FRAME.test(l)).slice(0, limit);
  return [header, ...all].join('\n');
}
