/**
 * The PMI-1 ("simple PMI") wire format, as MPICH's Hydra and Flux serve it to
 * a process through PMI_FD (or PMI_PORT): one command per line, `cmd=NAME`
 * then `key=value` fields separated by single spaces, ended by "\n". Pure
 * functions; the client (pmi1-client.ts) owns the socket.
 *
 * Reference: MPICH's src/pmi/simple (simple_pmi.c, simple_pmiutil.c: lines
 * of at most 1024 bytes, PMIU_parse_keyvals) and Hydra's pmi_v1 handlers
 * (src/pm/hydra: cmd=init, get_maxes, get_appnum, get_my_kvsname, put,
 * barrier_in, get, finalize, abort and their replies response_to_init, maxes,
 * appnum, my_kvsname, put_result, barrier_out, get_result, finalize_ack).
 *
 * Neither a key nor a value may hold a space, "=" or a newline on this wire:
 * values are made safe by kvs-value.ts before they get here, and
 * formatPmi1Command refuses anything else rather than corrupt the stream.
 */

/** Longest line a PMI-1 server accepts (MPICH's PMIU_MAXLINE). */
export const PMI1_MAX_LINE = 1024;

/** One parsed line: its command and its other fields, in order. */
export interface Pmi1Line {
  readonly cmd: string;
  readonly fields: ReadonlyMap<string, string>;
}

const WIRE_TOKEN = /^[^\s=]*$/;

/**
 * `cmd=NAME k=v ...\n`.
 * @throws Error when a name, key or value holds a space, "=" or a control character, or the line exceeds PMI1_MAX_LINE
 */
export function formatPmi1Command(cmd: string, fields: readonly (readonly [string, string])[] = []): string {
  const parts = [`cmd=${cmd}`];
  if (cmd === '' || !WIRE_TOKEN.test(cmd)) throw new Error(`PMI-1 command name ${JSON.stringify(cmd)} is not a wire token`);
  for (const [k, v] of fields) {
    if (k === '' || !WIRE_TOKEN.test(k)) throw new Error(`PMI-1 key ${JSON.stringify(k)} is not a wire token`);
    if (!WIRE_TOKEN.test(v)) throw new Error(`PMI-1 value of ${k} holds a space, "=" or a control character`);
    parts.push(`${k}=${v}`);
  }
  const line = `${parts.join(' ')}\n`;
  if (line.length > PMI1_MAX_LINE) throw new Error(`PMI-1 line of ${line.length} bytes exceeds ${PMI1_MAX_LINE}`);
  return line;
}

/**
 * Parses one line (without its "\n"; a trailing "\r" is dropped). The first field must be
 * `cmd=NAME`. A token without "=" continues the previous field's value (a server's `msg=` may
 * hold spaces), as MPICH's parser does; a repeated key keeps its first value.
 * @returns null when the line is empty, does not start with cmd=NAME, or has an empty key
 */
export function parsePmi1Line(line: string): Pmi1Line | null {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  const tokens = text.split(' ').filter((t) => t !== '');
  if (tokens.length === 0) return null;
  let cmd: string | null = null;
  const fields = new Map<string, string>();
  let lastKey: string | null = null;
  for (const token of tokens) {
    const eq = token.indexOf('=');
    if (eq < 0) {
      if (lastKey === null) return null;
      if (lastKey === 'cmd') cmd = `${cmd} ${token}`;
      else fields.set(lastKey, `${fields.get(lastKey)} ${token}`);
      continue;
    }
    if (eq === 0) return null;
    const key = token.slice(0, eq);
    const value = token.slice(eq + 1);
    if (cmd === null) {
      if (key !== 'cmd' || value === '') return null;
      cmd = value;
      lastKey = 'cmd';
      continue;
    }
    if (key === 'cmd' || fields.has(key)) {
      lastKey = null;
      continue;
    }
    fields.set(key, value);
    lastKey = key;
  }
  return cmd === null ? null : { cmd, fields };
}

/**
 * Splits a byte stream into lines: push() what arrived, take the complete lines it returns.
 * A line longer than `maxLine` (without its "\n") is an error: a PMI-1 server never sends one.
 */
export class Pmi1LineReader {
  #partial = '';
  readonly #maxLine: number;

  constructor(maxLine = 64 * 1024) {
    this.#maxLine = maxLine;
  }

  /** @throws Error when a line grows beyond maxLine */
  push(chunk: string): string[] {
    const text = this.#partial + chunk;
    const lines = text.split('\n');
    this.#partial = lines.pop()!;
    if (this.#partial.length > this.#maxLine || lines.some((l) => l.length > this.#maxLine)) {
      throw new Error(`a PMI-1 line longer than ${this.#maxLine} bytes`);
    }
    return lines;
  }
}
