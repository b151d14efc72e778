export { Device, packr } from './device.ts';
export type { DeviceOptions, DeviceStats, ProbeInfo } from './device.ts';
export { DevRequest, REQ_KIND } from './dev-request.ts';
export type { MatchingMode } from './match-queues.ts';
