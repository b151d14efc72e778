/**
 * Line-by-line forwarding of rank output. Each rank stream gets a
 * LineForwarder that buffers a partial line until its newline arrives, so
 * that two processes' text never shares one line of mpiexec's output; each
 * chunk's complete lines go out in one write. An OutputSink wraps mpiexec's
 * stdout or stderr and pauses every source stream while it is congested
 * (backpressure instead of unbounded buffering).
 *
 * Works on bytes (a UTF-8 character split across chunks stays intact).
 */
import type { Writable } from 'node:stream';

const NEWLINE = 0x0a;
/**
 * A line longer than this is forwarded in pieces. 4 MiB is far beyond any
 * real log line and bounds the memory a runaway writer can hold in mpiexec.
 */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;
const NEWLINE_BUF = Buffer.from('\n');

/** Splits one stream into lines and writes each with an optional prefix. */
export class LineForwarder {
  readonly #write: (chunk: Buffer) => void;
  readonly #prefix: (() => string) | null;
  #partial: Buffer[] = [];
  #partialBytes = 0;

  /**
   * @param write - receives whole lines (one call per pushed chunk)
   * @param prefix - called per line batch ("[2] ", "[1.234] "); null for none
   */
  constructor(write: (chunk: Buffer) => void, prefix: (() => string) | null) {
    this.#write = write;
    this.#prefix = prefix;
  }

  /** Feeds a chunk of the stream. */
  push(chunk: Buffer): void {
    let nl = chunk.indexOf(NEWLINE);
    if (nl < 0) {
      this.#partial.push(chunk);
      this.#partialBytes += chunk.length;
      if (this.#partialBytes >= MAX_LINE_BYTES) this.flush();
      return;
    }
    const prefix = this.#prefix === null ? null : Buffer.from(this.#prefix());
    const parts: Buffer[] = [];
    let start = 0;
    if (prefix === null) {
      // No prefix: the complete-lines part of the chunk goes out as it is.
      const last = chunk.lastIndexOf(NEWLINE);
      parts.push(...this.#partial, chunk.subarray(0, last + 1));
      start = last + 1;
    } else {
      while (nl >= 0) {
        parts.push(prefix);
        if (start === 0 && this.#partial.length > 0) parts.push(...this.#partial);
        parts.push(chunk.subarray(start, nl + 1));
        start = nl + 1;
        nl = chunk.indexOf(NEWLINE, start);
      }
    }
    this.#partial = [];
    this.#partialBytes = 0;
    if (start < chunk.length) {
      this.#partial.push(chunk.subarray(start));
      this.#partialBytes = chunk.length - start;
    }
    this.#write(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
  }

  /** Writes a buffered partial line, ending it with a newline (at stream end). */
  flush(): void {
    if (this.#partialBytes === 0) return;
    const parts: Buffer[] = this.#prefix === null ? [] : [Buffer.from(this.#prefix())];
    parts.push(...this.#partial, NEWLINE_BUF);
    this.#partial = [];
    this.#partialBytes = 0;
    this.#write(Buffer.concat(parts));
  }
}

/** What a sink can pause: a rank's pipe, or a remote host's link (remote-host.ts). */
export interface PausableSource {
  pause(): unknown;
  resume(): unknown;
}

/** mpiexec's stdout or stderr, shared by all ranks' forwarders. */
export class OutputSink {
  readonly #out: Writable;
  readonly #sources = new Set<PausableSource>();
  #isCongested = false;
  #isBroken = false;

  constructor(out: Writable) {
    this.#out = out;
    // A reader that went away (EPIPE) must not crash the launcher; output is dropped from then on.
    out.on('error', () => {
      this.#isBroken = true;
      this.#resume();
    });
  }

  /** Writes; pauses every source while the destination is congested. */
  write(chunk: Buffer | string): void {
    if (this.#isBroken) return;
    const ok = this.#out.write(chunk);
    if (!ok && !this.#isCongested) {
      this.#isCongested = true;
      for (const s of this.#sources) s.pause();
      this.#out.once('drain', () => this.#resume());
    }
  }

  /** Registers a stream to pause under backpressure. */
  addSource(s: PausableSource): void {
    this.#sources.add(s);
    if (this.#isCongested) s.pause();
  }

  removeSource(s: PausableSource): void {
    this.#sources.delete(s);
  }

  #resume(): void {
    if (!this.#isCongested) return;
    this.#isCongested = false;
    for (const s of this.#sources) s.resume();
  }
}
