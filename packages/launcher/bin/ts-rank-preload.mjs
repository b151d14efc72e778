// The first module of a TypeScript rank (rank-command.ts), run before tsx
// registers its hooks. On Node 20 any registered module hook runs on a
// thread of its own and every module load of the process crosses to it:
// loading @tsmpi/core's ~180 built modules then costs ~3x the CPU of a plain
// load (even through a hook that does nothing), ~0.5 s per rank on a loaded
// 2-core machine. So when the program's @tsmpi/core is built JavaScript (an
// installed package: its exports have no source condition), it and the job's
// transport are loaded here, before any hook; the program's own import of
// them later finds them loaded (same URL: same module), and tsx serves only
// the user's files. In the repository, TypeScript programs resolve core to
// its sources (--conditions=@tsmpi/source), which need tsx: nothing is
// preloaded. Resolved from the program's own location, as its import is.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const program = process.argv[1];
let core = null;
try {
  core = program === undefined ? null : createRequire(program).resolve('@tsmpi/core');
} catch {
  // @tsmpi/core is not reachable from the program: it does not use it, or fails on its own import.
}
if (core !== null && core.endsWith('.js')) {
  await import(pathToFileURL(core).href);
  // core loads the transport at init in a job of more than one process (TSMPI_TRANSPORT: a URL, rank-command.ts withTransport).
  const transport = process.env['TSMPI_TRANSPORT'] ?? '';
  if (transport.endsWith('.js') && Number(process.env['TSMPI_SIZE'] ?? 1) > 1) await import(transport);
}
