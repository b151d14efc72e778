/**
 * Global setup of the integration project: writes the test programs as plain
 * JavaScript when the packages' dist/ is current (built-programs.ts says why).
 */
import { buildPrograms } from './built-programs.ts';

export default async function setup(): Promise<void> {
  const check = new URL('../../launcher/bin/built-is-current.mjs', import.meta.url);
  const { builtIsCurrent } = (await import(check.href)) as { builtIsCurrent: () => boolean };
  buildPrograms(builtIsCurrent());
}
