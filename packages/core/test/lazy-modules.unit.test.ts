// What `import '@tsmpi/core'` loads (issue 38, idle rank memory): the parts a program reaches
// only through a call (File's implementation on the first File.open, the trace recorder with
// --trace, the wire-up clients and the transport at init, msgpackr at the first object message,
// node:tls at the first secure connection) stay out of a program that only
// imports the library. Checked on the real module graph: a child Node records every module
// its loader resolves (modules-loaded.ts), then imports the package by name as a program would.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { modulesLoadedBy } from './modules-loaded.ts';

const CORE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = pathToFileURL(path.join(CORE, 'src')).href;

/** Loaded only by a call: files of core's src/, and folders (ending in /). */
const LAZY = [
  'api/file-access.ts', 'api/file-collective.ts', 'api/file-open.ts', 'api/file-shared-pointer.ts',
  'api/trace-recorder.ts', 'api/trace-threads.ts', 'pmi/', 'pmi-direct/',
  'api/win-origin.ts', 'api/win-passive.ts', // with the first window's creation
  'transport/kit.ts', 'transport/loopback.ts', 'transport/conformance.ts', // test code: never, by any call
];
/**
 * Packages a program that only imports core must not load: the wire-up client's WebSocket, the transport,
 * and msgpackr (the object codec's, loaded by its first message: util/msgpackr-at-first-use.ts).
 */
const LAZY_PACKAGES = ['/ws/', '/transport-tcp/', '/msgpackr/', '/msgpackr-extract/'];
/** Node built-ins a program that only imports core must not load: TLS is for --secure jobs (util/job-tls.ts). */
const LAZY_BUILTINS = ['node:tls', 'node:child_process'];

let loaded: string[] = [];

beforeAll(() => {
  loaded = modulesLoadedBy(CORE, '@tsmpi/core');
}, 90_000);

describe('importing @tsmpi/core (issue 38)', () => {
  it('records the module graph (the hook sees core\'s own modules)', () => {
    expect(loaded).toContain(`${SRC}/index.ts`);
    expect(loaded).toContain(`${SRC}/api/lifecycle.ts`);
    expect(loaded).toContain(`${SRC}/api/file.ts`); // the File class itself is public at import
    expect(loaded).toContain('node:worker_threads'); // and built-ins: the hook sees them
  });

  it('does not load what only a call reaches', () => {
    const core = loaded.filter((u) => u.startsWith(`${SRC}/`)).map((u) => u.slice(SRC.length + 1));
    expect(core.filter((f) => LAZY.some((l) => (l.endsWith('/') ? f.startsWith(l) : f === l)))).toEqual([]);
    expect(loaded.filter((u) => LAZY_PACKAGES.some((p) => u.includes(p)))).toEqual([]);
    expect(loaded.filter((u) => LAZY_BUILTINS.includes(u))).toEqual([]);
  });
});
