/**
 * Test-only (first-use-flush.ts, preloaded with TSMPI_RANK_NODE_FLAGS='--require=<this file>'):
 * holds this process's `require('msgpackr')` (the object codec's load at first use, ADR 0057) until
 * the file FIRST_USE_FLUSH_MARKER names exists, for 60 s at most; then writes why to stderr and
 * exits 3. Production code knows nothing of it.
 */
'use strict';
const Module = require('node:module');
const fs = require('node:fs');

const marker = process.env.FIRST_USE_FLUSH_MARKER;
if (marker !== undefined && marker !== '') {
  const load = Module._load;
  Module._load = function holdMsgpackr(request, ...rest) {
    if (request === 'msgpackr') {
      const pause = new Int32Array(new SharedArrayBuffer(4));
      const until = Date.now() + 60_000;
      while (!fs.existsSync(marker)) {
        if (Date.now() > until) {
          process.stderr.write('first-use-hold-hook: no marker after 60 s: the peer never got the frame sent before this load\n');
          process.exit(3);
        }
        Atomics.wait(pause, 0, 0, 20);
      }
    }
    return load.call(this, request, ...rest);
  };
}
