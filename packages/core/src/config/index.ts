export { SETTINGS, resolveSettings, parseSetting } from './settings.ts';
export type { Settings, SettingRow } from './settings.ts';
export { JOB_ENV, readJobEnv, takeJobEnv, parsePortRange, hostLabel, processOf, universeOf, isProgress } from './job-env.ts';
export type { JobEnv, PortRange, Progress } from './job-env.ts';
