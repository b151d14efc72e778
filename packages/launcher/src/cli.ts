/**
 * The mpiexec entry point (bin/mpiexec.mjs imports it after registering the
 * source condition and tsx). Exits with the job's status.
 */
import { main } from './main.ts';

const status = await main(process.argv.slice(2));
process.exit(status);
