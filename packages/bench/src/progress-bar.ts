/**
 * A progress bar for long benchmark sweeps.
 *
 * On a TTY, cli-progress draws it: one line redrawn in place, at most every
 * `redrawMs`, with our text (label, bar, percentage, counts, ETA, note):
 *
 * ```
 * sweep  [##########----------]  50%  10/20  eta 42s  threads=4 channels=2
 * ```
 *
 * Anywhere else (CI logs, `| tee`, mpiexec output forwarding) carriage
 * returns would pile up, so it degrades to one plain line every `lineEveryMs`
 * (and one at the end):
 *
 * ```
 * sweep: 10/20 (50%) eta 42s threads=4 channels=2
 * ```
 *
 * That plain mode stays ours (ADR 0009): cli-progress's own non-TTY mode
 * repeats its line on a timer whether or not a step finished, while a sweep's
 * log wants a line per lineEveryMs of progress. Output goes to stderr by
 * default so that stdout stays machine-readable. The clock (ETA, plain-line
 * spacing) is injectable for tests.
 */
import { SingleBar } from 'cli-progress';

/** The part of a writable stream the bar uses (process.stderr fits). */
export interface ProgressStream {
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** Options of {@link ProgressBar}. */
export interface ProgressBarOptions {
  /** Number of steps in the sweep. */
  readonly total: number;
  /** Text in front of the bar; default 'progress'. */
  readonly label?: string;
  /** Where to draw; default process.stderr. */
  readonly stream?: ProgressStream;
  /** TTY: minimum time between redraws; default 100 ms. */
  readonly redrawMs?: number;
  /** Not a TTY: minimum time between lines; default 5000 ms. */
  readonly lineEveryMs?: number;
  /** Monotonic clock in milliseconds; default performance.now. */
  readonly now?: () => number;
}

/** Width of the bar itself when the terminal width is unknown. */
const DEFAULT_BAR_WIDTH = 30;

/**
 * A progress bar over `total` steps.
 *
 * @example
 * const bar = new ProgressBar({ total: configs.length, label: 'sweep' });
 * for (const c of configs) { await run(c); bar.tick(1, `threads=${c.threads}`); }
 * bar.finish();
 */
export class ProgressBar {
  readonly #total: number;
  readonly #label: string;
  readonly #stream: ProgressStream;
  readonly #isTTY: boolean;
  readonly #redrawMs: number;
  readonly #lineEveryMs: number;
  readonly #now: () => number;
  readonly #startMs: number;
  #done = 0;
  #note = '';
  #lastDrawMs = Number.NEGATIVE_INFINITY;
  #isFinished = false;
  /** The TTY renderer; null when the stream is not a TTY. */
  readonly #tty: SingleBar | null;

  /**
   * @param opts - total steps; label ('progress'), stream (stderr), redrawMs (100), lineEveryMs (5000), now (performance.now)
   */
  constructor(opts: ProgressBarOptions) {
    this.#total = Math.max(0, opts.total);
    this.#label = opts.label ?? 'progress';
    this.#stream = opts.stream ?? process.stderr;
    this.#isTTY = this.#stream.isTTY === true;
    this.#redrawMs = opts.redrawMs ?? 100;
    this.#lineEveryMs = opts.lineEveryMs ?? 5000;
    this.#now = opts.now ?? (() => performance.now());
    this.#startMs = this.#now();
    // Non-TTY: the first line comes after lineEveryMs, not at once.
    if (!this.#isTTY) this.#lastDrawMs = this.#startMs;
    this.#tty = this.#isTTY
      ? new SingleBar({
        stream: this.#stream as NodeJS.WritableStream,
        format: () => this.render(),
        fps: 1000 / Math.max(1, this.#redrawMs),
        hideCursor: false,
        linewrap: false,
        clearOnComplete: false,
        stopOnComplete: false,
        // Redraw on update() too, not only on cli-progress's timer (which runs from the first update to finish()).
        synchronousUpdate: true,
        forceRedraw: false,
        gracefulExit: false,
      })
      : null;
  }

  /** Steps completed so far. */
  get done(): number {
    return this.#done;
  }

  /**
   * Advances by `steps` and redraws if enough time has passed.
   *
   * @param steps - steps just completed; default 1
   * @param note - short text shown after the bar (e.g. the configuration just measured)
   */
  tick(steps = 1, note?: string): void {
    this.update(this.#done + steps, note);
  }

  /**
   * Sets the number of completed steps (clamped to [0, total]) and redraws if
   * enough time has passed.
   *
   * @param done - steps completed
   * @param note - short text shown after the bar; unchanged when omitted
   */
  update(done: number, note?: string): void {
    if (this.#isFinished) return;
    this.#done = Math.min(this.#total, Math.max(0, done));
    if (note !== undefined) this.#note = note;
    if (this.#tty !== null) {
      if (!this.#tty.isActive) this.#tty.start(this.#total, 0);
      this.#tty.update(this.#done);
      return;
    }
    const now = this.#now();
    const interval = this.#isTTY ? this.#redrawMs : this.#lineEveryMs;
    if (now - this.#lastDrawMs >= interval) this.#draw(now);
  }

  /** Draws the final state and ends the line; later calls do nothing. On a TTY, call it: it also stops the redraw timer. */
  finish(): void {
    if (this.#isFinished) return;
    this.#isFinished = true;
    if (this.#tty !== null) {
      if (!this.#tty.isActive) this.#tty.start(this.#total, this.#done);
      this.#tty.stop(); // draws the final state and ends the line
      return;
    }
    this.#draw(this.#now());
  }

  /** The text of the current state (no control characters); exposed for tests and logs. */
  render(nowMs: number = this.#now()): string {
    const pct = this.#total === 0 ? 100 : Math.floor((100 * this.#done) / this.#total);
    const eta = this.#etaText(nowMs);
    const note = this.#note === '' ? '' : `  ${this.#note}`;
    if (!this.#isTTY) {
      return `${this.#label}: ${this.#done}/${this.#total} (${pct}%)${eta === '' ? '' : ` ${eta}`}${note.replace(/^ +/, ' ')}`;
    }
    const width = this.#barWidth();
    const filled = this.#total === 0 ? width : Math.round((width * this.#done) / this.#total);
    const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
    return `${this.#label}  [${bar}] ${String(pct).padStart(3)}%  ${this.#done}/${this.#total}${eta === '' ? '' : `  ${eta}`}${note}`;
  }

  #draw(now: number): void {
    this.#lastDrawMs = now;
    this.#stream.write(`${this.render(now)}\n`);
  }

  #etaText(nowMs: number): string {
    if (this.#done === 0 || this.#done >= this.#total) return '';
    const elapsedMs = nowMs - this.#startMs;
    const remainingMs = (elapsedMs / this.#done) * (this.#total - this.#done);
    return `eta ${formatDuration(remainingMs)}`;
  }

  #barWidth(): number {
    const columns = this.#stream.columns;
    if (columns === undefined || columns <= 0) return DEFAULT_BAR_WIDTH;
    // Leave room for the label, percentage, counts and ETA.
    return Math.max(10, Math.min(DEFAULT_BAR_WIDTH, columns - this.#label.length - 40));
  }
}

/**
 * A short human duration: 42s, 3m05s, 1h02m.
 *
 * @param ms - milliseconds (negative counts as 0)
 * @returns the duration, rounded to seconds
 * @example
 * formatDuration(185_000); // '3m05s'
 */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
