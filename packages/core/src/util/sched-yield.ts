/**
 * sched_yield(2) for JavaScript: gives this thread's core to another runnable
 * thread, if there is one, and returns at once otherwise.
 *
 * Node has no binding for it, but its WASI implementation (uvwasi) implements
 * WASI's `sched_yield` with the system call, and a WASI instance's imports are
 * plain functions callable from JavaScript once the instance is initialized. So
 * a 100-byte WebAssembly module that imports `sched_yield` and exports the
 * memory WASI insists on is enough; nothing is compiled at install time.
 */
import { createRequire } from 'node:module';

type WasiModule = typeof import('node:wasi');
/** The part of the WebAssembly global used here (the project's TypeScript libs leave it out). */
const wasm = (globalThis as unknown as {
  WebAssembly: { Module: new (bytes: Uint8Array) => object; Instance: new (module: object, imports: object) => object };
}).WebAssembly;

/** A module with one import (wasi_snapshot_preview1.sched_yield), an empty `_initialize`, and one page of memory. */
function yieldModuleBytes(): Uint8Array {
  const name = (s: string): number[] => [s.length, ...Array.from(s, (c) => c.charCodeAt(0))];
  const section = (id: number, body: number[]): number[] => [id, body.length, ...body];
  const I32 = 0x7f;
  const FUNC_TYPE = 0x60;
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    // types: 0 = () -> i32 (sched_yield's errno), 1 = () -> ()
    ...section(1, [2, FUNC_TYPE, 0, 1, I32, FUNC_TYPE, 0, 0]),
    ...section(2, [1, ...name('wasi_snapshot_preview1'), ...name('sched_yield'), 0x00, 0]),
    ...section(3, [1, 1]),
    ...section(5, [1, 0x00, 1]),
    ...section(7, [2, ...name('memory'), 0x02, 0, ...name('_initialize'), 0x00, 1]),
    ...section(10, [1, 2, 0, 0x0b]),
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
