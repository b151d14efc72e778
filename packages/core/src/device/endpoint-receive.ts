/**
 * Which path an endpoint's incoming messages take (the `endpointReceive` setting, docs/adr/0019):
 * the channel's host (an engine, or the main thread in inline progress), or the worker thread
 * attached to the endpoint (its reader). Pure: init asks once per process and logs the answer.
 *
 * The ADR keeps the engine path where a reader cannot serve: with --progress engines (the mode
 * for threads that compute right after an isend, which a reader cannot progress) and in a job of
 * one process (nothing arrives over sockets), and, for now, in a job on several hosts (readers
 * listen on same-host sockets only, and routes do not carry a reader's TCP port yet).
 * `auto`, the default, asks for `thread` in a job with two or more endpoints per process and for
 * `engine` otherwise (docs/adr/0021: measured, the reader's path is 1.66x the engine path's rate
 * at --endpoints 2; with one endpoint the main thread shares it with every worker).
 */

export type EndpointReceive = 'engine' | 'thread';
export type EndpointReceiveSetting = EndpointReceive | 'auto';

/** What `auto` stands for in a job with `endpoints` endpoints per process; `engine` and `thread` stand for themselves. */
export function resolveEndpointReceive(asked: EndpointReceiveSetting, endpoints: number): EndpointReceive {
  if (asked !== 'auto') return asked;
  return endpoints >= 2 ? 'thread' : 'engine';
}

/** The path for the process, and why the engine path was kept when `thread` was asked for (null: nothing to say). */
export interface EndpointReceivePlan {
  readonly path: EndpointReceive;
  readonly why: string | null;
}

/** `asked`: the setting after resolveEndpointReceive. `localCount`: the job's processes on this host (default: all of them). */
export function endpointReceivePlan(asked: EndpointReceive, progress: 'inline' | 'threads' | 'engines', processCount: number, localCount = processCount): EndpointReceivePlan {
  if (asked === 'engine') return { path: 'engine', why: null };
  if (processCount === 1) return { path: 'engine', why: 'a job of one process receives nothing over sockets' };
  // Readers listen on same-host sockets only and a sender does not know which peers share its
  // host: until routes carry a reader's port, a job on several hosts keeps the engine path.
  if (localCount < processCount) return { path: 'engine', why: 'readers listen on same-host sockets only, and this job runs on several hosts' };
  if (progress === 'engines') {
    return { path: 'engine', why: '--progress engines keeps every endpoint on its channel engine (a reader cannot progress a thread that computes right after an isend)' };
  }
  return { path: 'thread', why: null };
}
