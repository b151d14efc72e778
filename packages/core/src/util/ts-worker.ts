/**
 * Worker threads on TypeScript files. On Node 20 a worker's entry module is
 * not loaded through the loader hooks the process was started with (tsx via
 * --import), so a `.ts` worker fails with ERR_UNKNOWN_FILE_EXTENSION. For a
 * TypeScript file this returns the arguments of a Worker that starts from a
 * small JavaScript bootstrap: it registers tsx in the new thread, then
 * imports the file. Other files start as usual.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { WorkerOptions } from 'node:worker_threads';

const TS_FILE = /\.(ts|mts|cts|tsx)$/;

function tsxApiUrl(): string | null {
  try {
    return import.meta.resolve('tsx/esm/api');
  } catch {
    return null;
  }
}

/** [file-or-code, options] for `new Worker(...)` that runs `file`, TypeScript included. */
export function workerArgs(file: string | URL, options: WorkerOptions = {}): [string | URL, WorkerOptions] {
  const url = file instanceof URL ? file : file.startsWith('file:') ? new URL(file) : pathToFileURL(path.resolve(file));
  const tsx = TS_FILE.test(url.pathname) ? tsxApiUrl() : null;
  if (tsx === null) return [file, options];
  const code =
    `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(url.href)}); })` +
    `.catch((e) => { process.nextTick(() => { throw e; }); });`;
  return [code, { ...options, eval: true }];
}
