/**
 * The recorders of the threads of a process under `mpiexec --trace` (issue 41): every MPI thread
 * of a traced process records its own calls (startTrace at its init: a TraceRecorder,
 * trace-recorder.ts, installed by profile.ts's instrument()). The main thread hands its trace and
 * its workers' to mpiexec at MPI.finalize; a worker thread posts its trace to the main thread on
 * a BroadcastChannel when its event loop empties (its end), and finalize waits a moment for the
 * traces of worker threads that started but have not posted. Loaded only under --trace.
 */
import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads';
import type { TraceThread } from '../pmi/index.ts';
import { instrument } from './profile.ts';
import { TraceRecorder } from './trace-recorder.ts';

/** The channel worker threads' traces reach the main thread on (one per process: BroadcastChannel is per process). */
const CHANNEL = 'tsmpi:trace';
/** What a worker thread posts on CHANNEL: that it records, then its trace. */
type ThreadNote = { readonly kind: 'started'; readonly tid: number } | { readonly kind: 'trace'; readonly thread: TraceThread };
/** How long finalize waits for the traces of worker threads that started recording and have not posted. */
const WORKER_TRACE_WAIT_MS = 2000;

/** This thread's recorder while tracing, and how to remove its instrumentation. */
let current: { recorder: TraceRecorder; remove: () => void } | null = null;
/** Main thread: the traces worker threads posted, and the threads that said they record. */
let fromWorkers: { channel: BroadcastChannel; traces: Map<number, TraceThread>; started: Set<number>; arrived: (() => void) | null } | null = null;

/**
 * Starts recording this thread's calls (runtime/bootstrap.ts, at init under --trace, in every MPI
 * thread). `takeOrder`: the process's post sequence (SharedState.takeTraceOrder). A worker thread
 * says so to the main thread and posts its trace when its event loop empties.
 */
export function startTrace(maxEvents: number, takeOrder: (n: number) => number): void {
  const recorder = new TraceRecorder(maxEvents, takeOrder);
  current = { recorder, remove: instrument((call, method) => recorder.wrap(call, method)) };
  if (isMainThread) {
    const state = { channel: new BroadcastChannel(CHANNEL), traces: new Map<number, TraceThread>(), started: new Set<number>(), arrived: null as (() => void) | null };
    state.channel.onmessage = (e: unknown) => {
      const note = (e as { data: ThreadNote }).data;
      if (note.kind === 'started') state.started.add(note.tid);
      else state.traces.set(note.thread.tid, note.thread);
      state.arrived?.();
    };
    // The channel must not keep the process alive.
    (state.channel as unknown as { unref(): void }).unref();
    fromWorkers = state;
    return;
  }
  const channel = new BroadcastChannel(CHANNEL);
  channel.postMessage({ kind: 'started', tid: threadId } satisfies ThreadNote);
  // Nor a worker alive: its trace leaves when its loop empties (beforeExit).
  (channel as unknown as { unref(): void }).unref();
  process.once('beforeExit', () => {
    const thread = takeOwn(threadId);
    if (thread !== null) channel.postMessage({ kind: 'trace', thread } satisfies ThreadNote);
    channel.close();
  });
}

function takeOwn(tid: number): TraceThread | null {
  if (current === null) return null;
  const { recorder, remove } = current;
  current = null;
  remove();
  return recorder.dump(tid);
}

/**
 * Main thread, at finalize: stops recording and returns the traces of this thread (tid 0) and of
 * the worker threads (tid: their Node thread id), waiting up to WORKER_TRACE_WAIT_MS for workers
 * that started recording and have not posted (a worker still running, or one that was terminated,
 * is left out). Null when not tracing.
 */
export async function takeTraces(): Promise<TraceThread[] | null> {
  const own = takeOwn(0);
  if (own === null) return null;
  const state = fromWorkers;
  fromWorkers = null;
  if (state === null) return [own];
  const giveUp = Date.now() + WORKER_TRACE_WAIT_MS;
  while ([...state.started].some((t) => !state.traces.has(t)) && Date.now() < giveUp) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(1, giveUp - Date.now()));
      state.arrived = () => { clearTimeout(timer); resolve(); };
    });
    state.arrived = null;
  }
  state.channel.close();
  return [own, ...[...state.traces.values()].sort((a, b) => a.tid - b.tid)];
}
