/**
 * mpiexec --dashboard[=PORT]: the server (dashboard-server.ts) and its
 * sampler. Every SAMPLE_MS, while at least one viewer is connected, the
 * sampler runs one roll-call that asks for counters over the wire-up service
 * (each rank's main thread answers from its event loop with its threads'
 * calls and its totals: nothing runs in the ranks between samples, and
 * nothing at all without --dashboard), turns the answers into a snapshot
 * (dashboard-state.ts) and sends it to the viewers. Ranks on other hosts
 * answer on their own wire-up links, as they do for --timeout's roll-call.
 */
import type { Logger } from 'pino';
import { OutputTails } from './dashboard-output.ts';
import { DashboardServer } from './dashboard-server.ts';
import { DashboardState, encodeSnapshot, type DashboardRank } from './dashboard-state.ts';
import { newDashboardToken } from './dashboard-token.ts';
import type { RollCallAnswer } from './wireup-server.ts';

/** How often the viewers get a snapshot. */
export const SAMPLE_MS = 500;
/** How long a sample waits for answers: a rank that stays silent (busy outside MPI) is shown computing. */
const ANSWER_WAIT_MS = 400;

export interface DashboardDeps {
  readonly log: Logger;
  /** The wire-up service's roll-call, asking for counters. */
  readonly sample: (waitMs: number) => Promise<Map<number, RollCallAnswer>>;
  readonly ranks: () => readonly DashboardRank[];
}

/** The http URL to print for a bind address (a wildcard address is reached on loopback; IPv6 in brackets). */
export function dashboardUrl(host: string, port: number, token: string): string {
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}/?token=${token}`;
}

export class Dashboard {
  readonly #deps: DashboardDeps;
  readonly #token = newDashboardToken();
  readonly #server: DashboardServer;
  readonly #state = new DashboardState();
  readonly #tails = new OutputTails();
  #timer: NodeJS.Timeout | null = null;
  #busy = false;

  constructor(deps: DashboardDeps) {
    this.#deps = deps;
    this.#server = new DashboardServer(this.#token, deps.log, (rank) => this.#tails.tail(rank));
  }

  /** A chunk of a rank's stdout (1) or stderr (2), as mpiexec forwards it: kept for the page's output tail. */
  output(rank: number, fd: 1 | 2, data: Buffer): void {
    this.#tails.add(rank, fd, data);
  }

  /** Starts serving on host:port (0: a free one); resolves to the URL (with the token) to print. */
  async start(host: string, port: number): Promise<string> {
    const bound = await this.#server.start(host, port);
    this.#timer = setInterval(() => void this.#tick(), SAMPLE_MS);
    this.#timer.unref();
    return dashboardUrl(host, bound, this.#token);
  }

  /** Sends the job's final state to the viewers, then closes the server. */
  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#server.broadcast(encodeSnapshot(this.#state.update(this.#deps.ranks(), new Map(), Date.now())));
    await this.#server.close();
  }

  async #tick(): Promise<void> {
    if (this.#busy || this.#server.viewers === 0) return;
    this.#busy = true;
    try {
      const answers = await this.#deps.sample(ANSWER_WAIT_MS);
      if (this.#timer === null) return; // stopped meanwhile
      this.#server.broadcast(encodeSnapshot(this.#state.update(this.#deps.ranks(), answers, Date.now())));
    } catch (err) {
      this.#deps.log.debug({ err }, 'dashboard sample failed');
    } finally {
      this.#busy = false;
    }
  }
}

/**
 * mpiexec --dashboard: starts the dashboard of a job and prints its URL once on stderr (`write`).
 * @returns the dashboard, or null when it cannot listen (the message is written; the job does not start)
 */
export async function startDashboard(port: number, host: string | null, deps: DashboardDeps, write: (line: string) => void): Promise<Dashboard | null> {
  const d = new Dashboard(deps);
  const where = host ?? '127.0.0.1';
  try {
    const url = await d.start(where, port);
    const exposed = host !== null && !/^(127\.|::1$|localhost$)/.test(host);
    write(`mpiexec: dashboard at ${url}${exposed ? ' (listening on ' + where + ': anyone with this URL can watch the job, over plain HTTP)' : ''}\n`);
    return d;
  } catch (err) {
    write(`mpiexec: cannot start the dashboard on ${where}:${port}: ${(err as Error).message}\n`);
    return null;
  }
}
