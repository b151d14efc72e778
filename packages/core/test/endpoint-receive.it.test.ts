// The endpointReceive setting (docs/adr/0019) through mpiexec: asking for `thread` never changes
// what a job computes or fails it; each process says in one info line which path its endpoints'
// receives take and why; a bad value is refused naming the variable and the allowed values.
// A worker thread's endpoint reader: claimed at threadAttach, handed back when the thread attaches elsewhere and when it ends, one
// reading per epoch, while messages to the endpoint stay in order (ep-reader.ts).
// Messages that take a reader's path (ep-route.ts): every message of a round once the reader said go,
// and a stream sent while readings open and close, in order across both paths; a reader that
// computes while eager isends to it complete (ep-reader-computes.ts); a sender that computes right
// after its isends to a reader holds none of them (ep-sender-computes.ts); a sender thread that dies
// on a reader's path lets the reader go (ep-sender-dies.ts); a reader that ends while its sender
// computes waits for the sender's FIN (ep-reader-ends.ts); a reader that dies fails the job naming
// its endpoint, also when its Worker's exit event comes long after its sockets closed (ep-reader-dies.ts); 10,000 messages through 40 readings (ep-route.ts stream 40).
// testlist: endpoints np 2 (--endpoints 3) per progress mode; ep-reader, ep-route np 2 (--endpoints 2) per progress mode
import { describe, expect, it } from 'vitest';
import { program, runJob, type JobResult } from './run-job.ts';

function expectOk(r: JobResult, marker: string): void {
  if (r.code !== 0 || !r.stdout.includes(marker)) {
    throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

/** The endpointReceive info lines of a job's stderr (pino NDJSON), parsed. */
function planLines(stderr: string): { why: string; path: string; progress: string }[] {
  return stderr.split('\n').filter((l) => l.includes('"endpointReceive thread: ')).map((l) => JSON.parse(l));
}

describe('endpointReceive', () => {
  it.each(['threads', 'inline', 'engines'] as const)('thread with --progress %s: the job runs and each process says once which path its receives take and why', async (progress) => {
    const r = await runJob(2, program('endpoints.ts'), {
      flags: ['--progress', progress, '--endpoints', '3', '--log-level', 'info', '--log-format', 'json', '--timeout', '60'],
      env: { TSMPI_ENDPOINT_RECEIVE: 'thread' },
      killAfterMs: 80_000,
    });
    expectOk(r, 'endpoints OK');
    const lines = planLines(r.stderr);
    expect(lines.length).toBe(2);
    for (const l of lines) {
      expect(l.path).toBe(progress === 'engines' ? 'engine' : 'thread');
      expect(l.progress).toBe(progress);
      expect(l.why).toMatch(progress === 'engines' ? /--progress engines/ : /worker thread reads the endpoint it attaches to/);
    }
  }, 90_000);

  /** The endpoint reader's info lines of a job's stderr, per process, as `reads|back endpoint epoch [why]`. */
  function readerLines(stderr: string): Map<number, string[]> {
    const byRank = new Map<number, string[]>();
    for (const l of stderr.split('\n').filter((x) => x.includes('"endpoint reader: ') && !x.includes('route announced') && !x.includes('every sender has left'))) {
      const o = JSON.parse(l) as { rank: number; endpoint: number; epoch: number; why?: string; msg: string };
      const what = o.msg.includes('reads') ? `reads ${o.endpoint} ${o.epoch}` : `back ${o.endpoint} ${o.epoch} ${o.why}`;
      byRank.set(o.rank, [...(byRank.get(o.rank) ?? []), what]);
    }
    return byRank;
  }

  /** The route announcements each process recorded, per (recording rank, endpoint), as `open|closing epoch`. */
  function announcedRoutes(stderr: string): Map<string, string[]> {
    const got = new Map<string, string[]>();
    for (const l of stderr.split('\n').filter((x) => x.includes('"endpoint route announced"'))) {
      const o = JSON.parse(l) as { rank: number; endpoint: number; epoch: number; state: string; recorded: boolean };
      const key = `${o.rank}:${o.endpoint}`;
      got.set(key, [...(got.get(key) ?? []), `${o.state} ${o.epoch}${o.recorded ? '' : ' ignored'}`]);
    }
    return got;
  }

  // `auto`, the default, is `thread` with --endpoints 2 or more (docs/adr/0021).
  it.each([['thread', 'threads'], ['thread', 'inline'], ['auto (the default)', 'threads']] as const)('%s with --progress %s: a worker reads the endpoint it attaches to, in a new epoch each time, announces it and hands it back', async (receive, progress) => {
    const r = await runJob(2, program('ep-reader.ts'), {
      // One channel: a reader's announcements and its data frames to the other process share one
      // connection, so what the peer's worker has received proves which announcements were recorded.
      flags: ['--progress', progress, '--endpoints', '2', '--channels', '1', '--log-level', 'info', '--log-format', 'json', '--timeout', '60'],
      args: ['reader'],
      env: receive === 'thread' ? { TSMPI_ENDPOINT_RECEIVE: 'thread' } : {},
      killAfterMs: 80_000,
    });
    expectOk(r, `ep-reader OK reader ${progress}`);
    const lines = readerLines(r.stderr);
    for (const rank of [0, 1]) {
      const e = rank * 2;
      // Each process logs its own worker's readings in the order they happened; the other process's timing does not matter.
      expect(lines.get(rank), `process ${rank}`).toEqual([
        `reads ${e + 1} 1`, `back ${e + 1} 1 threadAttach to another endpoint`,
        `reads ${e} 1`, `back ${e} 1 threadAttach to another endpoint`,
        `reads ${e + 1} 2`, `back ${e + 1} 2 the thread is ending`,
      ]);
    }
    // What each reader announced (its socket listening: a later turn of its event loop, so a reading
    // handed back before that is never announced), and what the other process recorded: every
    // announced reading's opening and closing, in order. Those of the last reading (endpoint e + 1,
    // epoch 2) go out after the reader's last message, so the peer may finalize before its host reads
    // them: a prefix of them, never out of order.
    const announced = new Set(r.stderr.split('\n').filter((x) => x.includes('"endpoint reader: route announced'))
      .map((x) => { const o = JSON.parse(x) as { endpoint: number; epoch: number }; return `${o.endpoint} ${o.epoch}`; }));
    const routes = announcedRoutes(r.stderr);
    for (const rank of [0, 1]) {
      const e = (1 - rank) * 2;
      const expected = (endpoint: number, epochs: number[]): string[] => epochs.filter((k) => announced.has(`${endpoint} ${k}`)).flatMap((k) => [`open ${k}`, `closing ${k}`]);
      expect(routes.get(`${rank}:${e}`) ?? [], `process ${rank}, endpoint ${e}`).toEqual(expected(e, [1]));
      const head = expected(e + 1, [1]);
      const got = routes.get(`${rank}:${e + 1}`) ?? [];
      expect(got.slice(0, head.length), `process ${rank}, endpoint ${e + 1}, epoch 1`).toEqual(head);
      const last = expected(e + 1, [2]);
      expect(got.slice(head.length), `process ${rank}, endpoint ${e + 1}, epoch 2: announced, or not yet read`).toEqual(last.slice(0, got.length - head.length));
    }
  }, 90_000);

  /** Each process's closed readings of `endpoint` (rank * 2 + 1 of its own), in order: `epoch frames fins`. */
  function closedReadings(stderr: string): Map<number, { epoch: number; frames: number; fins: number }[]> {
    const byRank = new Map<number, { epoch: number; frames: number; fins: number }[]>();
    for (const l of stderr.split('\n').filter((x) => x.includes('"endpoint reader: every sender has left'))) {
      const o = JSON.parse(l) as { rank: number; endpoint: number; epoch: number; frames: number; fins: number };
      if (o.endpoint !== o.rank * 2 + 1) continue;
      byRank.set(o.rank, [...(byRank.get(o.rank) ?? []), { epoch: o.epoch, frames: o.frames, fins: o.fins }]);
    }
    return byRank;
  }

  /** ep-route.ts in `mode` under endpointReceive=thread, with the readers' info lines on stderr. */
  function runEpRoute(mode: 'handshake' | 'stream', progress: string, readings = 4): ReturnType<typeof runJob> {
    return runJob(2, program('ep-route.ts'), {
      flags: ['--progress', progress, '--endpoints', '2', '--log-level', 'info', '--log-format', 'json', '--timeout', readings > 4 ? '200' : '100'],
      args: [mode, String(readings)],
      env: { TSMPI_ENDPOINT_RECEIVE: 'thread' },
      killAfterMs: readings > 4 ? 220_000 : 120_000,
    });
  }

  // ep-route.ts: 4 readings of endpoint 1 per process, 250 messages each from the other process's main thread.
  it.each(['threads', 'inline'] as const)('thread with --progress %s: after the reader\'s go, every message of a round (eager, rendezvous, synchronous) takes its socket, in order, and each reading closes once its sender\'s FIN is in', async (progress) => {
    const r = await runEpRoute('handshake', progress);
    expectOk(r, `ep-route OK handshake ${progress}`);
    const closed = closedReadings(r.stderr);
    // The route's opening precedes `go` on one connection, so the other main thread's first message
    // of a round starts its connection to the reader (by the engine path), and once that carries
    // frames it sends the other 249 to the reader's socket, and one FIN once the route closed.
    for (const rank of [0, 1]) expect(closed.get(rank), `process ${rank}`).toEqual([1, 2, 3, 4].map((epoch) => ({ epoch, frames: 249, fins: 1 })));
  }, 130_000);

  it.each(['threads', 'inline'] as const)('thread with --progress %s: a stream sent while the readings open and close arrives in order, across both paths', async (progress) => {
    const r = await runEpRoute('stream', progress);
    // The order of all 1,000 messages is checked by the program; how many took each path depends on timing.
    expectOk(r, `ep-route OK stream ${progress}`);
    const closed = closedReadings(r.stderr);
    for (const rank of [0, 1]) {
      const readings = closed.get(rank) ?? [];
      expect(readings.map((x) => x.epoch), `process ${rank}: every reading closed`).toEqual([1, 2, 3, 4]);
      const frames = readings.reduce((a, x) => a + x.frames, 0);
      expect(frames, `process ${rank}: frames on the reader's path`).toBeLessThanOrEqual(1000);
      // A reading that got frames got them from a sender that joined its route, and that sender left it.
      for (const x of readings) expect(x.fins, `process ${rank}, epoch ${x.epoch}`).toBe(x.frames > 0 ? 1 : 0);
    }
  }, 130_000);

  // docs/adr/0019 Consequences: 10,000 messages while 40 readings per process open and close.
  it('thread with --progress threads: a stream of 10,000 messages sent while 40 readings open and close arrives in order', async () => {
    const r = await runEpRoute('stream', 'threads', 40);
    expectOk(r, 'ep-route OK stream threads');
    const closed = closedReadings(r.stderr);
    for (const rank of [0, 1]) {
      const readings = closed.get(rank) ?? [];
      expect(readings.map((x) => x.epoch), `process ${rank}: every reading closed`).toEqual(Array.from({ length: 40 }, (_, k) => k + 1));
      expect(readings.reduce((a, x) => a + x.frames, 0), `process ${rank}: frames on the reader's path`).toBeLessThanOrEqual(10_000);
      for (const x of readings) expect(x.fins, `process ${rank}, epoch ${x.epoch}`).toBe(x.frames > 0 ? 1 : 0);
    }
  }, 230_000);

  it.each(['threads', 'inline'] as const)('thread with --progress %s: eager isends to a reader that computes complete, and their messages wait in its socket, in order', async (progress) => {
    const r = await runJob(2, program('ep-reader-computes.ts'), {
      flags: ['--progress', progress, '--endpoints', '2', '--log-level', 'info', '--log-format', 'json', '--timeout', '80'],
      env: { TSMPI_ENDPOINT_RECEIVE: 'thread' },
      killAfterMs: 100_000,
    });
    expectOk(r, `ep-reader-computes OK ${progress}`);
    // The first started the sender's connection (engine path); the other 199, sent once it was
    // ready, took the socket; the sender left with its FIN.
    expect(closedReadings(r.stderr).get(0)).toEqual([{ epoch: 1, frames: 199, fins: 1 }]);
  }, 110_000);

  it.each(['threads', 'inline'] as const)('thread with --progress %s: a sender that computes right after its isends to a reader holds none of them', async (progress) => {
    const r = await runJob(2, program('ep-sender-computes.ts'), {
      flags: ['--progress', progress, '--endpoints', '2', '--log-level', 'info', '--log-format', 'json', '--timeout', '80'],
      env: { TSMPI_ENDPOINT_RECEIVE: 'thread' },
      killAfterMs: 100_000,
    });
    expectOk(r, `ep-sender-computes OK ${progress}`);
    // The sender never joined the route (its connection needed its event loop): nothing on the socket, no FIN.
    expect(closedReadings(r.stderr).get(0)).toEqual([{ epoch: 1, frames: 0, fins: 0 }]);
  }, 110_000);

  it.each(['threads', 'inline'] as const)('thread with --progress %s: a sender thread terminated on a reader\'s path: the reader takes its connection\'s end for its FIN, hands back, and the job goes on', async (progress) => {
    const r = await runJob(2, program('ep-sender-dies.ts'), {
      flags: ['--progress', progress, '--endpoints', '2', '--log-level', 'info', '--log-format', 'json', '--timeout', '80'],
      env: { TSMPI_ENDPOINT_RECEIVE: 'thread' },
      killAfterMs: 100_000,
    });
    expectOk(r, `ep-sender-dies OK ${progress}`);
    // Messages 1-9 took the socket; the one FIN is the dead sender's connection end.
    expect(closedReadings(r.stderr).get(0)).toEqual([{ epoch: 1, frames: 9, fins: 1 }]);
    expect(r.stderr.split('\n').filter((l) => l.includes('its end is taken for the FIN')).length).toBe(1);
  }, 110_000);

  it.each(['threads', 'inline'] as const)('thread with --progress %s: a reader that ends while its sender computes ends only after the sender\'s FIN', async (progress) => {
    const r = await runJob(2, program('ep-reader-ends.ts'), {
      flags: ['--progress', progress, '--endpoints', '2', '--log-level', 'info', '--log-format', 'json', '--timeout', '80'],
      env: { TSMPI_ENDPOINT_RECEIVE: 'thread' },
      killAfterMs: 100_000,
    });
    // The program checks that the reader's thread exited only after the sender stopped computing.
    expectOk(r, `ep-reader-ends OK ${progress}`);
    expect(readerLines(r.stderr).get(0)).toEqual(['reads 1 1', 'back 1 1 the thread is ending']);
    // Messages 1-9 took the socket; the FIN is the sender's own (it was alive), not its connection's end.
    expect(closedReadings(r.stderr).get(0)).toEqual([{ epoch: 1, frames: 9, fins: 1 }]);
    expect(r.stderr).not.toContain('its end is taken for the FIN');
  }, 110_000);

  it.each([
    ['threads', 'soon'], ['inline', 'soon'],
    // Its 'exit' event comes long after its sockets closed: its death is known by its mark (runtime/reader-death.ts).
    ['threads', 'heap'], ['inline', 'heap'],
    // Stopped for memory (ERR_WORKER_OUT_OF_MEMORY): it marks nothing; the sender waits for rank 0 to fail (reader-routes.ts #onReaderLost).
    ['threads', 'memory'], ['inline', 'memory'],
  ] as const)('thread with --progress %s: a reader that dies (%s) without handing back fails the job, rank 0 blamed, naming its endpoint or its memory', async (progress, when) => {
    const r = await runJob(2, program('ep-reader-dies.ts'), {
      flags: ['--progress', progress, '--endpoints', '2', '--timeout', '60'],
      args: when === 'soon' ? [] : [when],
      env: { TSMPI_ENDPOINT_RECEIVE: 'thread' },
      killAfterMs: 80_000,
    });
    expect(r.code).not.toBe(0);
    expect(r.stdout).not.toContain('not reached');
    // The reader's process fails on its own account (its worker's exit, or its death mark), and mpiexec's
    // line blames it: the sender takes the end of its connection to the reader for the route's loss, not
    // the process's, so it does not stop first. A worker stopped for memory says so itself (an
    // 'error' event the program does not handle) before the exit listener would name the endpoint.
    expect(r.stderr).toMatch(/mpiexec: rank 0 \([^)]*\) exited with code 1[:;]/);
    expect(r.stderr).toMatch(when === 'memory'
      ? /ERR_WORKER_OUT_OF_MEMORY/
      : /MPI_ERR_PROC_FAILED: progress: the reader of endpoint 1 \(worker thread \d+\) ended without handing it back \(exit code 3\)/);
    // The reader's process failed; it did not stop blaming its peer, nor was the peer blamed.
    expect(r.stderr).not.toMatch(/rank 0 stopped \(peer failed\)/);
    expect(r.stderr).not.toMatch(/after losing its connection to rank 0/);
    // The death ended the job, not mpiexec's deadline.
    expect(r.stderr).not.toMatch(/--timeout 60 s fired/);
  }, 90_000);

  it.each([['engines', 'thread'], ['threads', 'engine']] as const)('--progress %s with endpointReceive %s: no thread reads an endpoint', async (progress, receive) => {
    const r = await runJob(2, program('ep-reader.ts'), {
      flags: ['--progress', progress, '--endpoints', '2', '--log-level', 'info', '--log-format', 'json', '--timeout', '60'],
      args: ['none'],
      env: { TSMPI_ENDPOINT_RECEIVE: receive },
      killAfterMs: 80_000,
    });
    expectOk(r, `ep-reader OK none ${progress}`);
    expect(readerLines(r.stderr).size).toBe(0);
    expect(announcedRoutes(r.stderr).size).toBe(0);
  }, 90_000);

  it('engine logs nothing about it, nor auto (the default) with one endpoint', async () => {
    const engine = await runJob(2, program('endpoints.ts'), { flags: ['--endpoints', '3', '--log-level', 'info', '--log-format', 'json', '--timeout', '60'], env: { TSMPI_ENDPOINT_RECEIVE: 'engine' }, killAfterMs: 80_000 });
    expectOk(engine, 'endpoints OK');
    expect(planLines(engine.stderr)).toEqual([]);
    const auto = await runJob(2, program('mt-pt2pt.ts'), { flags: ['--progress', 'threads', '--log-level', 'info', '--log-format', 'json', '--timeout', '60'], args: ['2', '20'], killAfterMs: 80_000 });
    expectOk(auto, 'mt-pt2pt OK');
    expect(planLines(auto.stderr)).toEqual([]);
  }, 150_000);

  it('auto (the default) with --endpoints 3: each process says once that worker threads read their endpoints', async () => {
    const r = await runJob(2, program('endpoints.ts'), { flags: ['--endpoints', '3', '--log-level', 'info', '--log-format', 'json', '--timeout', '60'], killAfterMs: 80_000 });
    expectOk(r, 'endpoints OK');
    const lines = planLines(r.stderr);
    expect(lines.length).toBe(2);
    for (const l of lines) expect(l.path).toBe('thread');
  }, 90_000);

  it('refuses a value outside auto, engine, thread, naming the variable', async () => {
    const r = await runJob(2, program('endpoints.ts'), { flags: ['--timeout', '60'], env: { TSMPI_ENDPOINT_RECEIVE: 'reader' }, killAfterMs: 80_000 });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/TSMPI_ENDPOINT_RECEIVE.*reader.*auto, engine, thread/);
  }, 90_000);
});
