/**
 * The cause of a failed rank in one phrase, for mpiexec's last line
 * (`... exited with code 1: Error: boom at app.ts:14; aborting the job`):
 * read from the end of the rank's stderr, where Node prints an uncaught
 * exception or rejection as its header line (`Error: boom`,
 * `MPIError: MPI_ERR_RANK: send: ...`) followed by its stack. The place is
 * the first frame in the user's code: frames of Node itself, of
 * node_modules and of tsmpi's own packages are skipped, so a library error
 * points at the call that caused it. Pure: no I/O.
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
const FRAME = /^\s+at (?:.*? \()?(?:file:\/\/)?([^()\s]+):(\d+):(\d+)\)?(?: \{)?$/;
/** Frames that are not the user's code. */
const LIBRARY_FRAME = /^node:|\/node_modules\/|\/packages\/(?:core|transport-tcp|launcher)\/(?:src|dist)\/|\/@tsmpi\//;

/**
 * @param stderrTail - the last part of the rank's stderr (whole lines)
 * @param cwd - the rank's working directory: a place inside it is shown relative to it
 * @returns "Error: boom at app.ts:14", "Error: boom" without a user frame, or null when no error was printed
 */
export function failureCause(stderrTail: string, cwd: string): string | null {
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
    const rel = path.isAbsolute(file) ? path.relative(cwd, file) : file;
    const shown = rel.startsWith('..') || path.isAbsolute(rel) ? file : rel;
    return `${what} at ${shown}:${f[2]}`;
  }
  return what;
}
