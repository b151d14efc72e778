/**
 * The mpiexec flags that set a core setting (--channels, --matching, ...),
 * derived from core's settings table so that help, validation and the
 * environment handed to ranks can never drift from what core accepts.
 */
import { SETTINGS, parseSetting, type SettingRow } from '@tsmpi/core/pmi';

export type { SettingRow };

/** Every setting row that has an mpiexec flag, user-level rows first. */
export function settingFlags(): readonly SettingRow[] {
  const rows = SETTINGS.filter((r) => r.flag !== null);
  return [...rows.filter((r) => r.level === 'user'), ...rows.filter((r) => r.level !== 'user')];
}

/** The row whose flag is `flag`, or undefined. */
export function findSettingFlag(flag: string): SettingRow | undefined {
  return SETTINGS.find((r) => r.flag === flag);
}

/** The row named `name` (e.g. 'channels'), or undefined. */
export function findSetting(name: string): SettingRow | undefined {
  return SETTINGS.find((r) => r.name === name);
}

/** "parallel|global" for an enum, "N (1-64)" for an integer, "VALUE" otherwise. */
export function valueHint(row: SettingRow): string {
  const k = row.kind;
  if (k.type === 'enum') return k.values.join('|');
  if (k.type === 'int') return 'N';
  return 'VALUE';
}

/** What the flag allows, for error messages: "one of parallel, global" / "an integer from 1 to 64". */
export function allowedText(row: SettingRow): string {
  const k = row.kind;
  if (k.type === 'enum') return `one of ${k.values.join(', ')}`;
  if (k.type === 'int') return `an integer from ${k.min} to ${k.max}`;
  return 'any text';
}

/**
 * Validates a flag value against its row.
 * @returns the parsed value, or an Error whose message is the one-line complaint
 */
export function parseSettingFlag(row: SettingRow, raw: string): number | string | Error {
  const v = parseSetting(row, raw, 'option');
  if (v instanceof Error) return new Error(`${row.flag} ${raw}: expected ${allowedText(row)}`);
  return v;
}

/** explicit flag > mpiexec's own environment > default: the value ranks will see. */
export function effectiveSetting(row: SettingRow, given: ReadonlyMap<string, number | string>, env: NodeJS.ProcessEnv): number | string {
  const g = given.get(row.name);
  if (g !== undefined) return g;
  const e = env[row.env];
  if (e !== undefined && e !== '') {
    const v = parseSetting(row, e, 'environment');
    if (!(v instanceof Error)) return v;
  }
  return row.defaultValue();
}
