/**
 * Test helper: a real headless Chromium (Debian's chromium-headless-shell or chromium), driven over
 * the DevTools protocol on a pipe (--remote-debugging-pipe: fd 3 in, fd 4 out, one JSON message per
 * NUL-terminated frame), so that no debugging port is opened. A small client, not puppeteer: its
 * browser download is not reachable here, and the Debian package is what users have.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';

const NAMES = ['chromium-headless-shell', 'chromium', 'chromium-browser', 'google-chrome'];

/** The first Chromium binary on PATH, or null. */
export function findChromium(): string | null {
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    for (const n of NAMES) {
      const f = path.join(dir, n);
      if (dir !== '' && existsSync(f)) return f;
    }
  }
  return null;
}

export class HeadlessChromium {
  readonly #child: ChildProcess;
  readonly #profile: string;
  readonly #in: Writable;
  #nextId = 1;
  readonly #pending = new Map<number, { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  #buffer = '';

  private constructor(child: ChildProcess, profile: string) {
    this.#child = child;
    this.#profile = profile;
    this.#in = child.stdio[3] as Writable;
    (child.stdio[4] as Readable).setEncoding('utf8').on('data', (s: string) => this.#onData(s));
    child.on('exit', () => {
      for (const p of this.#pending.values()) p.reject(new Error('Chromium exited'));
      this.#pending.clear();
    });
  }

  /** Starts Chromium headless with a fresh profile. */
  static launch(binary: string): HeadlessChromium {
    const profile = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-chromium-'));
    const child = spawn(binary, [
      '--headless', '--remote-debugging-pipe', `--user-data-dir=${profile}`, '--no-first-run', '--disable-gpu',
      // As root (CI containers) Chromium refuses to start sandboxed.
      ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
      '--window-size=1400,600', 'about:blank',
    ], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
    child.stderr!.resume();
    return new HeadlessChromium(child, profile);
  }

  #onData(s: string): void {
    this.#buffer += s;
    let nul: number;
    while ((nul = this.#buffer.indexOf('\0')) >= 0) {
      const frame = this.#buffer.slice(0, nul);
      this.#buffer = this.#buffer.slice(nul + 1);
      const m = JSON.parse(frame) as { id?: number; result?: Record<string, unknown>; error?: { message: string } };
      if (m.id === undefined) continue; // events
      const p = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      if (m.error !== undefined) p?.reject(new Error(m.error.message));
      else p?.resolve(m.result ?? {});
    }
  }

  /** One DevTools command (on a page's session when sessionId is given). */
  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#in.write(`${JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) })}\0`);
    });
  }

  /** Opens `url` in a new tab; resolves to its session id. */
  async open(url: string): Promise<string> {
    const { targetId } = await this.send('Target.createTarget', { url }) as { targetId: string };
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true }) as { sessionId: string };
    return sessionId;
  }

  /** Evaluates `expression` in the page; its value (JSON-able). */
  async evaluate(sessionId: string, expression: string): Promise<unknown> {
    const r = await this.send('Runtime.evaluate', { expression, returnByValue: true }, sessionId) as { result: { value?: unknown }; exceptionDetails?: { text: string } };
    if (r.exceptionDetails !== undefined) throw new Error(`page script failed: ${r.exceptionDetails.text}`);
    return r.result.value;
  }

  /** A PNG of the whole page (its full height, at the window's width). */
  async screenshot(sessionId: string): Promise<Buffer> {
    const { data } = await this.send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true }, sessionId) as { data: string };
    return Buffer.from(data, 'base64');
  }

  /** Ends Chromium and removes its profile. */
  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => {
      if (this.#child.exitCode !== null || this.#child.signalCode !== null) resolve();
      else this.#child.once('exit', () => resolve());
    });
    this.send('Browser.close').catch(() => undefined);
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
    rmSync(this.#profile, { recursive: true, force: true });
  }
}
