/**
 * The cause of a failed rank in one phrase, for mpiexec's last line
 * (`... exited with code 1: Error: boom at app.ts:14; aborting the job`):
 * read from the end of the rank's stderr, where Node prints an uncaught
 * exception or rejection as its header line (`Error: boom`,
 * `MPIError: MPI_ERR_RANK: send: ...`) followed by its stack. The place is
 * the first frame in the user's code: frames of Node itself, of
 * node_modules and of tsmpi's own packages are skipped, so a library error
 * points at the call that caused it. A rank that could not be started at
 * all is named by startFailureCause, in the words of a missing program
 * rather than Node's spawn error. Pure: no I/O.
 */
import path from 'node:path';

/** Most characters of the error message kept in the line. */
const MAX_MESSAGE_CHARS = 200;
/**
 * `Error: boom`, `TypeError [ERR_X]: ...`, `MPIError: ...`, `Uncaught Error: ...`, and
 * `Error [MPIError]: ...`: an error that came from a worker thread, where Node rebuilds it as an
 * Error and shows its name in brackets (a code in capitals is shown there too, and dropped).
 */
const HEADER = /^(?:Uncaught )?((?:[A-Z][A-Za-z0-9_$]*)?(?:Error|Exception))(?: \[([A-Za-z0-9_$]+)\])?: (.*)$/;
/**
 * `    at f (/path/file.ts:14:3)`, `    at /path/file.ts:14:3`, `    at async file:///path/x.mjs:1:2`;
 * the last frame of an error with own properties ends in ` {` (Node's inspect).
 */
const FRAME = /^\s+at (?:async )?(?:.*? \()?(?:file:\/\/)?([^()\s]+):(\d+):(\d+)\)?(?: \{)?$/;
/** Frames that are not the user's code. */
const LIBRARY_FRAME = /^node:|\/node_modules\/|\/packages\/(?:core|transport-tcp|launcher)\/(?:src|dist)\/|\/@tsmpi\//;

/**
 * @param stderrTail - the last part of the rank's stderr (whole lines)
 * @param cwd - the rank's working directory: a place inside it is shown relative to it
 * @returns "Error: boom at app.ts:14", "Error: boom" without a user frame, or null when no error was printed
 */
export function failureCause(stderrTail: string, cwd: string): string | null {
  const known = knownCause(stderrTail, cwd);
  if (known !== null) return known;
  const lines = stderrTail.split('\n');
  let header = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (HEADER.test(lines[i]!)) {
      header = i;
      break;
    }
  }
  if (header < 0) return null;
  const m = HEADER.exec(lines[header]!)!;
  const message = m[3]!.length > MAX_MESSAGE_CHARS ? `${m[3]!.slice(0, MAX_MESSAGE_CHARS - 3)}...` : m[3]!;
  const name = m[2] !== undefined && /[a-z]/.test(m[2]) ? m[2] : m[1];
  const what = `${name}: ${message}`;
  for (let i = header + 1; i < lines.length; i++) {
    const f = FRAME.exec(lines[i]!);
    if (f === null) {
      if (/^\s+at /.test(lines[i]!)) continue; // a frame without a place (native, anonymous)
      break;
    }
    const file = f[1]!;
    if (LIBRARY_FRAME.test(file)) continue;
    return `${what} at ${shown(file, cwd)}:${f[2]}`;
  }
  return what;
}

/** `file` relative to `cwd` when inside it, else as given. */
function shown(file: string, cwd: string): string {
  const rel = path.isAbsolute(file) ? path.relative(cwd, file) : file;
  return rel.startsWith('..') || path.isAbsolute(rel) ? file : rel;
}

/**
 * esbuild's error (through tsx) for a .ts program with top-level await in a package that is not
 * an ES module: `/p/app.ts:3:0: ERROR: Top-level await is currently not supported with the "cjs"
 * output format`. Node's own header (`Error: Transform failed with 4 errors:`) says nothing useful.
 */
const CJS_TOP_LEVEL_AWAIT = /^(.+?):(\d+):\d+: ERROR: Top-level await is currently not supported with the "cjs" output format$/m;

/** A cause that the error's own text does not explain, in words that say what to do; null for any other. */
function knownCause(stderrTail: string, cwd: string): string | null {
  const tla = CJS_TOP_LEVEL_AWAIT.exec(stderrTail);
  if (tla !== null) {
    const file = shown(tla[1]!, cwd);
    return `${file}:${tla[2]} uses top-level await, but ${path.basename(file)} runs as CommonJS (its package.json has no "type": "module"): add "type": "module" to the package.json, or name the file .mts`;
  }
  return null;
}

/** Node's spawn errors: `spawn NAME ENOENT`, `spawn NAME EACCES`. */
const SPAWN_ERROR = /^spawn (.+) (ENOENT|EACCES)$/;

/**
 * Why a rank could not be started, in a user's words: `spawn x ENOENT` (Node's message, from this
 * host or a remote proxy) says that the program is missing, as mpiexec says for a missing x.ts.
 * @param message - the start error's message
 * @returns the phrase after "could not be started: "
 */
export function startFailureCause(message: string): string {
  const m = SPAWN_ERROR.exec(message);
  if (m === null) return message;
  if (m[2] === 'EACCES') return `${m[1]} is not executable (chmod +x it, or name its interpreter: mpiexec -n N python3 ${m[1]})`;
  return `program not found: ${m[1]} (not a file in the working directory, nor a command on PATH)`;
}
