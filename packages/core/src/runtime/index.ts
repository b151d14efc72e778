/**
 * The runtime layer: what a thread owns between MPI.init and MPI.finalize and
 * how it waits, below the API layer's argument checks (DESIGN.md "Packages and
 * layering"). api/ imports it; it imports only the layers below api/.
 *
 *   thread-runtime.ts  ThreadRuntime, what a thread owns from init to finalize, and its slot
 *   thread-level.ts    the thread levels of MPI.init
 *   wait-poll.ts       how a blocking call waits: poll the event loop or sleep (--wait)
 *   poll-policy.ts     how often a polling thread yields its core
 *   blocked.ts         what each thread is blocked in, for mpiexec's roll-call
 *   worker-boot.ts     what an MPI.Worker thread receives to join its process
 *   worker-peers.ts    how MPI.Worker threads learn the processes that joined the job later
 *   dynamic-relay.ts   how a worker thread's spawn, connect and accept are carried out by the main thread
 *   relay-cell.ts      how a request's outcome reaches another thread that waits on it
 *   reader-death.ts    how a process fails when one of its endpoint readers died
 *   bootstrap.ts       how MPI.init brings a process's (or an MPI.Worker's) runtime up, and MPI.finalize down
 */
export { ThreadRuntime, isInitialized, isFinalized, setRuntime, runtime, runtimeOrNull, checkActive } from './thread-runtime.ts';
export type { ThreadRuntimeParts } from './thread-runtime.ts';
export { THREAD_LEVELS } from './thread-level.ts';
export type { ThreadLevel } from './thread-level.ts';
export { WaitPoll } from './wait-poll.ts';
export type { WaitPollOptions } from './wait-poll.ts';
export { pollPolicy } from './poll-policy.ts';
export type { HostShare, PollPolicy } from './poll-policy.ts';
export { BlockedCalls, BLOCKED_SLOT_WORDS, INIT_CALL, STARTING_CALL, clearSlot, markStarting } from './blocked.ts';
export { BOOT_KEY, workerBoot } from './worker-boot.ts';
export type { WorkerBoot } from './worker-boot.ts';
export { peersThreadEnded, workerPeers, WorkerPeers } from './worker-peers.ts';
export type { PeerBook, WorkerPeersBoot } from './worker-peers.ts';
export { dynamicRelay, serveWorkerRequests } from './dynamic-relay.ts';
export { RelayCell } from './relay-cell.ts';
export type { RelayContent, RelayStatus } from './relay-cell.ts';
export { failReaderDied } from './reader-death.ts';
export { peerAddress } from './peer-address.ts';
export { startProcess, startWorkerThread, finishProcess } from './bootstrap.ts';
export type { ApiParts } from './bootstrap.ts';
