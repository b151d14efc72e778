/**
 * The PMI-2 wire format, as Slurm's `srun --mpi=pmi2` serves it through
 * PMI_FD: each command is a 6-byte ASCII decimal length (space padded, "%-6d"),
 * then that many bytes of `cmd=NAME;key=value;...;`. A ";" inside a key or
 * value is written ";;". Pure functions; the client (pmi2-client.ts) owns the
 * socket.
 *
 * Reference: MPICH's src/pmi/pmi2 (pmi2_api.c PMIi_WriteSimpleCommand,
 * PMIi_ReadCommand, parse_keyvals) and Slurm's src/plugins/mpi/pmi2
 * (client.c, pmi2.c: fullinit, job-getid, info-getjobattr, kvs-put,
 * kvs-fence, kvs-get, finalize, abort and their "-response" replies).
 */

/** Bytes of the length header. */
export const PMI2_HEADER_BYTES = 6;
/** Largest command body this client sends or accepts (the header holds at most 6 digits). */
export const PMI2_MAX_BODY = 999_999;

/** One command or response: its cmd and its other fields, in order. */
export interface Pmi2Command {
  readonly cmd: string;
  readonly fields: ReadonlyMap<string, string>;
}

const escape = (s: string): string => s.replaceAll(';', ';;');

/**
 * The framed bytes of `cmd=NAME;k=v;...;`.
 * @throws Error when a key is empty or holds "=", or the body exceeds PMI2_MAX_BODY
 */
export function encodePmi2Command(cmd: string, fields: readonly (readonly [string, string])[] = []): Buffer {
  for (const [k] of [['cmd'], ...fields] as const) {
    if (k === '' || k.includes('=')) throw new Error(`PMI-2 key ${JSON.stringify(k)} is empty or holds "="`);
  }
  const body = Buffer.from([['cmd', cmd] as const, ...fields].map(([k, v]) => `${escape(k)}=${escape(v)};`).join(''), 'utf8');
  if (body.length > PMI2_MAX_BODY) throw new Error(`PMI-2 command of ${body.length} bytes exceeds ${PMI2_MAX_BODY}`);
  return Buffer.concat([Buffer.from(String(body.length).padEnd(PMI2_HEADER_BYTES, ' '), 'latin1'), body]);
}

/**
 * Parses one command body (without its header).
 * @returns null when a pair has no "=" or an empty key, or the first key is not cmd
 */
export function parsePmi2Body(body: string): Pmi2Command | null {
  const pairs: [string, string][] = [];
  let i = 0;
  while (i < body.length) {
    let pair = '';
    for (;;) {
      if (i >= body.length) break; // a last pair without its ";" is accepted
      const ch = body[i]!;
      if (ch === ';') {
        if (body[i + 1] === ';') {
          pair += ';';
          i += 2;
          continue;
        }
        i++;
        break;
      }
      pair += ch;
      i++;
    }
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) return null;
    pairs.push([pair.slice(0, eq), pair.slice(eq + 1)]);
  }
  if (pairs.length === 0 || pairs[0]![0] !== 'cmd') return null;
  const fields = new Map<string, string>();
  for (const [k, v] of pairs.slice(1)) if (!fields.has(k)) fields.set(k, v);
  return { cmd: pairs[0]![1], fields };
}

/** Splits a byte stream into framed commands: push() what arrived, take the complete bodies. */
export class Pmi2FrameReader {
  #buffered: Buffer = Buffer.alloc(0);

  /** @throws Error on a header that is not a decimal length of at most PMI2_MAX_BODY */
  push(chunk: Buffer): string[] {
    this.#buffered = this.#buffered.length === 0 ? chunk : Buffer.concat([this.#buffered, chunk]);
    const bodies: string[] = [];
    while (this.#buffered.length >= PMI2_HEADER_BYTES) {
      const header = this.#buffered.subarray(0, PMI2_HEADER_BYTES).toString('latin1').trim();
      if (!/^\d{1,6}$/.test(header)) throw new Error(`a PMI-2 length header ${JSON.stringify(header)} that is not a decimal number`);
      const length = Number(header);
      if (this.#buffered.length < PMI2_HEADER_BYTES + length) break;
      bodies.push(this.#buffered.subarray(PMI2_HEADER_BYTES, PMI2_HEADER_BYTES + length).toString('utf8'));
      this.#buffered = this.#buffered.subarray(PMI2_HEADER_BYTES + length);
    }
    return bodies;
  }
}
