/**
 * Paths of files in the launcher's bin/ folder. They are found from the package's root (its own
 * package.json, resolved by the package's name) rather than beside the calling module: the
 * launcher runs from src/ (tsx), from dist/ and from its bundle in dist/bundle/ (ADR 0062), at
 * different depths below the root.
 */
import { createRequire } from 'node:module';
import path from 'node:path';

const BIN_DIR = path.join(path.dirname(createRequire(import.meta.url).resolve('@tsmpi/launcher/package.json')), 'bin');

/** The path of `file` in bin/. */
export function binFile(file: string): string {
  return path.join(BIN_DIR, file);
}
