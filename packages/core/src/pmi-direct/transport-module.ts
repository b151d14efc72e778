/**
 * Which transport module a directly launched rank loads when the user named
 * none (TSMPI_TRANSPORT). tsmpi's mpiexec resolves @tsmpi/transport-tcp from
 * its own dependencies and hands the ranks its file URL
 * (launcher/src/rank-command.ts); without mpiexec the rank resolves it itself:
 * from @tsmpi/core's place (a flat npm install puts them side by side), else
 * from the program's (a strict install such as pnpm's exposes to a package only
 * its own dependencies, and the program's project depends on the transport).
 * The file URL found goes to every thread and channel engine, which import
 * the same module.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const DEFAULT_TRANSPORT = '@tsmpi/transport-tcp';

/** The transport's file URL, or null when TSMPI_TRANSPORT is set or neither place resolves it (init then names the module). */
export function resolveDirectTransport(env: NodeJS.ProcessEnv, program: string | undefined): string | null {
  if ((env['TSMPI_TRANSPORT'] ?? '') !== '') return null;
  try {
    return import.meta.resolve(DEFAULT_TRANSPORT);
  } catch {
    // not beside core: try the program's project
  }
  if (program === undefined || program === '') return null;
  try {
    return pathToFileURL(createRequire(path.resolve(program)).resolve(DEFAULT_TRANSPORT)).href;
  } catch {
    return null;
  }
}
