/**
 * @tsmpi/launcher: mpiexec as a library (the bin runs src/cli.ts).
 */
export { main, processMapText, USAGE_STATUS } from './main.ts';
export { parseArgs, knownFlags, LAUNCHERS } from './options.ts';
export type { LaunchOptions, LauncherKind, ParseResult } from './options.ts';
export { Job, TIMEOUT_STATUS } from './job.ts';
export type { JobDeps, HostLaunchLine } from './job.ts';
export { WireupServer } from './wireup-server.ts';
export type { WireupEvents, RollCallAnswer } from './wireup-server.ts';
export { LineForwarder, OutputSink, MAX_LINE_BYTES } from './output-forwarder.ts';
export { parseHostList, parseHostfile, placeRanks, isLocalHost } from './process-map.ts';
export type { HostSlots, Placement } from './process-map.ts';
export { helpAllText, helpText } from './help.ts';
export { rollCallLines, describeBlockedIn } from './roll-call.ts';
export { nodeFlagsFor, parseRankNodeFlags, rankCommand, resolveProgram, tsxLoaderUrl } from './rank-command.ts';
export type { RankCommand } from './rank-command.ts';
export type { JobReport, RankReport } from './report.ts';
