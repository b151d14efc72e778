#!/usr/bin/env node
// The per-host proxy of a multi-host job (src/proxy.ts); mpiexec starts it
// on each remote host through ssh and writes its launch spec on stdin. Loaded
// from the sources or from dist/ as bin/entry.mjs says.
import { importEntry } from './entry.mjs';

const { runProxy } = await importEntry('proxy');
await runProxy();
