#!/usr/bin/env node
// tsmpi-nameserver (src/nameserver-main.ts): publishName / lookupName between
// separately started mpiexec jobs (docs/adr/0046-name-server-between-jobs.md).
// Loaded from the sources or from dist/ as bin/entry.mjs says.
import { importEntry } from './entry.mjs';

const { runNameserver } = await importEntry('nameserver-main');
const status = await runNameserver(process.argv.slice(2));
// Let stderr's last line leave the process before exiting.
await new Promise((resolve) => process.stderr.write('', resolve));
process.exit(status);
