#!/usr/bin/env node
// Placeholder: replaced by the launcher implementation.
console.error('mpiexec: not implemented yet');
process.exit(1);
