export { SETTINGS, resolveSettings, parseSetting } from './settings.ts';
export type { Settings, SettingRow } from './settings.ts';
export { JOB_ENV, readJobEnv } from './job-env.ts';
export type { JobEnv } from './job-env.ts';
