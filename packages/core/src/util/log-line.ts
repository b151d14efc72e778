/**
 * The human form of a log record, the default (`--log-format text`): pino
 * writes each record as one JSON line to its destination; this destination
 * rewrites it to one line a person reads at a terminal, before stderr:
 *
 *   tsmpi: rank 1: warn: peer lost (mod=transport, peer=2, code=TSMPI_ERR_PEER_CLOSED)
 *   mpiexec: warn: proxy link: hello does not prove the job key (index=0)
 *
 * `--log-format json` leaves pino's NDJSON as it is, for programs that read
 * the logs. The base fields every record has (time, pid, host) are left out
 * of the line; an error object shows its message. Pure but for the write.
 */
import { writeSync } from 'node:fs';

/** Log formats, the values of the logFormat setting. */
export type LogFormat = 'text' | 'json';

const LEVEL_NAMES: Readonly<Record<number, string>> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
/** Fields every record carries, or that the line shows elsewhere. */
const OMITTED = new Set(['level', 'time', 'pid', 'host', 'hostname', 'rank', 'name', 'msg']);

function valueText(v: unknown): string {
  if (typeof v === 'string') return /^[\w.:/@-]+$/.test(v) ? v : JSON.stringify(v);
  if (v !== null && typeof v === 'object' && typeof (v as { message?: unknown }).message === 'string') return JSON.stringify((v as { message: string }).message);
  return JSON.stringify(v) ?? String(v);
}

/**
 * One NDJSON record as a line for people (with its newline).
 * @param json - one record as pino wrote it; a line that is not a JSON object comes back unchanged
 */
export function formatLogLine(json: string): string {
  let rec: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(json);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return json.endsWith('\n') ? json : `${json}\n`;
    rec = parsed as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const who = typeof rec['name'] === 'string' ? rec['name'] : typeof rec['rank'] === 'number' ? `tsmpi: rank ${rec['rank']}` : 'tsmpi';
  const level = LEVEL_NAMES[rec['level'] as number] ?? String(rec['level']);
  const fields: string[] = [];
  for (const [k, v] of Object.entries(rec)) {
    if (OMITTED.has(k)) continue;
    fields.push(`${k}=${valueText(v)}`);
  }
  const msg = typeof rec['msg'] === 'string' ? rec['msg'] : '';
  return `${who}: ${level}: ${msg}${fields.length === 0 ? '' : ` (${fields.join(', ')})`}\n`;
}

/** A pino destination that writes each record to `fd` as formatLogLine makes it, synchronously (a failing process's last lines are not lost). */
export function textLogDestination(fd = 2): { write(chunk: string): void } {
  return {
    write(chunk: string): void {
      let text = '';
      for (const line of chunk.split('\n')) if (line !== '') text += formatLogLine(line);
      try {
        writeSync(fd, text);
      } catch {
        // stderr closed: nowhere left to log
      }
    },
  };
}
