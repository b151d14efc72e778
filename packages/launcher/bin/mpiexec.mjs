#!/usr/bin/env node
// mpiexec (also tsmpiexec): the launcher's CLI (src/cli.ts), from the sources
// or from dist/ as bin/entry.mjs says.
import { importEntry } from './entry.mjs';

await importEntry('cli');
