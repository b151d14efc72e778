/**
 * sched_yield(2) for JavaScript: gives this thread's core to another runnable
 * thread, if there is one, and returns at once otherwise.
 *
 * Node has no binding for it, but its WASI implementation (uvwasi) implements
 * WASI's `sched_yield` with the system call, and a WASI instance's imports are
 * plain functions callable from JavaScript once the instance is initialized. So
 * a 20-byte WebAssembly module that exports the memory WASI insists on is
 * enough; nothing is compiled at install time. The module has no functions and
 * no imports on purpose: V8 compiles a wrapper (with its optimizing compiler)
 * for each import and export function at instantiation, which touched ~3.3 MB
 * of the node binary's pages and heap in every rank (issue 38, idle memory);
 * `sched_yield` is called as WASI's JavaScript import function, not from wasm.
 */
import { createRequire } from 'node:module';

type WasiModule = typeof import('node:wasi');
/** The part of the WebAssembly global used here (the project's TypeScript libs leave it out). */
const wasm = (globalThis as unknown as {
  WebAssembly: { Module: new (bytes: Uint8Array) => object; Instance: new (module: object, imports: object) => object };
}).WebAssembly;

/** A module with one page of memory, exported as `memory` (what WASI's initialize() requires), and nothing else. */
function yieldModuleBytes(): Uint8Array {
  const name = (s: string): number[] => [s.length, ...Array.from(s, (c) => c.charCodeAt(0))];
  const section = (id: number, body: number[]): number[] => [id, body.length, ...body];
  const MEMORY_KIND = 0x02;
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(5, [1, 0x00, 1]), // memory: one, no maximum, one page
    ...section(7, [1, ...name('memory'), MEMORY_KIND, 0]),
  ]);
}

/**
 * Loads node:wasi without its one-time ExperimentalWarning: tsmpi's use of it
 * (one system call, no files) does not depend on what is experimental there.
 */
function loadWasi(): WasiModule {
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (text.includes('WASI')) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return createRequire(import.meta.url)('node:wasi') as WasiModule;
  } finally {
    process.emitWarning = emitWarning;
  }
}

let cached: (() => number) | null | undefined;

/**
 * This thread's sched_yield, or null where it can't be had (a Node without
 * WASI); the function returns WASI's errno, 0 on success.
 */
export function schedYield(): (() => number) | null {
  if (cached !== undefined) return cached;
  try {
    const { WASI } = loadWasi();
    const wasi = new WASI({ version: 'preview1' });
    const instance = new wasm.Instance(new wasm.Module(yieldModuleBytes()), wasi.getImportObject());
    wasi.initialize(instance);
    const fn = (wasi.wasiImport as Record<string, unknown>)['sched_yield'];
    cached = typeof fn === 'function' ? (fn as () => number) : null;
  } catch {
    cached = null;
  }
  return cached;
}
