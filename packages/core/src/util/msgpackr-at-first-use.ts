/**
 * msgpackr, loaded by the object codec's first message rather than by `import '@tsmpi/core'`
 * (issue 38): a program that never sends an object (a hello, a program of numeric buffers) never
 * loads it, nor its optional native string extractor and the child_process that one loads to find
 * its libc (together about 2.3 MB of an idle rank's resident memory). The codec encodes and decodes
 * synchronously, so the first use loads msgpackr synchronously too: its CommonJS build, through
 * require (an ESM import is asynchronous). That is a separate instance from the ESM build that
 * other modules may import (the launcher, --trace's trace-format.ts): the codec's extensions
 * (object-codec.ts) live in this one only, which no other user of msgpackr shares. Before the load,
 * this thread's transports write the frames they hold (first-use-load.ts): a send that completed just
 * before does not wait for it.
 */
import { createRequire } from 'node:module';
import { loadAtFirstUse } from './first-use-load.ts';

type Msgpackr = typeof import('msgpackr');

let loaded: Msgpackr | undefined;

/** The msgpackr module, loaded at the first call. */
export function msgpackr(): Msgpackr {
  return (loaded ??= loadAtFirstUse(() => createRequire(import.meta.url)('msgpackr') as Msgpackr));
}
