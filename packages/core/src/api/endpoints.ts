/**
 * Endpoints (papers/endpoints-proposal.txt): a thread is attached to one
 * endpoint of its process (its clique) and may move to another one of the same
 * clique. The main thread starts on endpoint 0; a new thread on its parent's.
 */
import { ERR_ENDPOINTS, ERR_RANK, mpiError } from '../util/index.ts';
import type { Comm } from './comm.ts';
import { COMM_CLIQUE, selfFollows } from './predefined-comms.ts';
import { runtime } from '../runtime/index.ts';

/**
 * Attaches the calling thread to endpoint `rank` of `comm` (default COMM_CLIQUE).
 * @throws MPIError(ERR_ENDPOINTS) if that endpoint is not in the caller's clique; ERR_RANK if rank is out of range.
 * @example MPI.threadAttach(i); // in thread i, with mpiexec --endpoints J
 */
export function threadAttach(rank: number, comm: Comm = COMM_CLIQUE): void {
  const call = 'threadAttach';
  const rt = runtime(call);
  if (!Number.isInteger(rank) || rank < 0 || rank >= comm.size) {
    throw mpiError(ERR_RANK, call, `rank ${String(rank)} is out of range for ${comm.name} (size ${comm.size}): expected 0..${comm.size - 1}`);
  }
  const ep = comm._endpoints[rank]!;
  const dev = rt.device;
  if (!dev.isLocal(ep)) {
    const first = dev.firstEndpoint;
    throw mpiError(ERR_ENDPOINTS, call, `endpoint ${ep} (rank ${rank} of ${comm.name}) is not in the calling thread's clique: endpoints ${first}..${first + rt.settings.endpoints - 1} of process ${dev.opts.process}`);
  }
  // docs/adr/0019: a thread that reads an endpoint hands it back when it moves, and a worker
  // thread may become the reader of the endpoint it attaches to (endpointReceive=thread only).
  if (dev.readers.readingEndpoint >= 0 && dev.readers.readingEndpoint !== ep) void dev.readers.handBack('threadAttach to another endpoint');
  dev.readers.readEndpoint(ep);
  rt.endpoint = ep;
  selfFollows(ep);
}

/** The calling thread's endpoint: its rank in COMM_ENDPOINTS. */
export function attachedEndpoint(): number {
  return runtime('attachedEndpoint').endpoint;
}
