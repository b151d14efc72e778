/**
 * The transport test kit (`@tsmpi/core/transport/kit`): the loopback network
 * (transports in one process, for the device's tests) and the conformance suite
 * every transport runs (transport-tcp's tests). Apart from index.ts, which every
 * rank loads through the device, so that a rank does not load test code (issue 38).
 */
export { createLoopbackNetwork, createLoopbackFactory, LOOPBACK_TARGET_MIN_BYTES, LOOPBACK_HIGH_WATER_MARK_BYTES } from './loopback.ts';
export type { LoopbackNetworkOptions } from './loopback.ts';
export { transportConformance } from './conformance.ts';
export type { MakeTransports, ConformanceTestApi, ConformanceAssertion } from './conformance.ts';
