export { SETTINGS, resolveSettings, parseSetting } from './settings.ts';
export type { Settings, SettingRow } from './settings.ts';
export { JOB_ENV, readJobEnv, takeJobEnv, parsePortRange, hostLabel, processOf, universeOf } from './job-env.ts';
export type { JobEnv, PortRange } from './job-env.ts';
