/**
 * @tsmpi/transport-tcp/host: what a launcher uses on a host, without the
 * transport: the job's same-host socket directory (docs/adr/0029) and
 * listening in a port range. mpiexec and the proxies import this subpath
 * so that their start-up does not load the transport's modules and core's
 * transport contract (issue 38: mpiexec's own start-up).
 */
export { listenInRange } from './listen-port.ts';
export { claimSameHostDirectory, removeSameHostDirectory, removeSameHostSockets, sweepStaleSameHostDirectories } from './same-host.ts';
