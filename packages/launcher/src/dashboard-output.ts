/**
 * mpiexec --dashboard's output tail: the last lines each rank wrote on stdout
 * and stderr, as mpiexec forwards them (job.ts hands every chunk here, only
 * under --dashboard), for the page's pane of a selected rank. Bounded: at most
 * MAX_TAIL_LINES lines per rank, each cut to MAX_TAIL_LINE characters, and a
 * partial line of at most that much waiting for its newline.
 */

export const MAX_TAIL_LINES = 100;
export const MAX_TAIL_LINE = 300;

export interface TailLine {
  /** 1: stdout, 2: stderr */
  readonly fd: 1 | 2;
  readonly text: string;
}

function cutLine(s: string): string {
  return s.length <= MAX_TAIL_LINE ? s : `${s.slice(0, MAX_TAIL_LINE - 1)}…`;
}

export class OutputTails {
  readonly #lines = new Map<number, TailLine[]>();
  /** per rank and stream, the text after the last newline */
  readonly #partial = new Map<string, string>();

  /** A chunk of rank `rank`'s stream `fd`. */
  add(rank: number, fd: 1 | 2, data: Buffer): void {
    const key = `${rank}:${fd}`;
    const parts = ((this.#partial.get(key) ?? '') + data.toString('utf8')).split('\n');
    const rest = parts.pop()!;
    this.#partial.set(key, rest.slice(-MAX_TAIL_LINE));
    if (parts.length === 0) return;
    const lines = this.#lines.get(rank) ?? [];
    for (const p of parts.slice(-MAX_TAIL_LINES)) lines.push({ fd, text: cutLine(p) });
    if (lines.length > MAX_TAIL_LINES) lines.splice(0, lines.length - MAX_TAIL_LINES);
    this.#lines.set(rank, lines);
  }

  /** Rank `rank`'s last lines, oldest first, then its unfinished lines. */
  tail(rank: number): TailLine[] {
    const out = [...(this.#lines.get(rank) ?? [])];
    for (const fd of [1, 2] as const) {
      const p = this.#partial.get(`${rank}:${fd}`);
      if (p !== undefined && p !== '') out.push({ fd, text: cutLine(p) });
    }
    return out.slice(-MAX_TAIL_LINES);
  }
}
