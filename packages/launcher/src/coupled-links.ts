/**
 * The port links two coupled mpiexec jobs keep after `coupled` (docs/adr/0043-connect-two-jobs.md), so
 * that a failure of one job's coupled process reaches every process of the other job's group, not only
 * those that held a connection to it (which see the connection end):
 *
 *   this job's mpiexec                              the other job's mpiexec
 *   failed {process, why}  ──>   a process of this group ended without MPI.finalize: the other mpiexec
 *                                sends wire-up peerFailed to each process of its group (core's
 *                                device/coupled-peers.ts), naming it by its own number and this job's
 *   finalized {process}    ──>   a process of this group finalized: its end is no failure
 *   (the link closes)      ──>   the other job's mpiexec ended: each of its group's processes that did not
 *                                finalize (or was not told failed) is failed here
 *
 * Decoupled: once this job's group disconnected from the other (core's Comm.disconnect, whose root sends
 * wire-up dyn `decoupled`), nothing passes in either direction for that coupling (MPI 4.0 section
 * 11.10.4: after the disconnect a failure of one group must not reach the other). The link stays open
 * until the job ends, so that the other side, disconnecting a moment later, never sees a close as a failure.
 *
 * Trust: these messages come only over a link that proved the port's secret (port-link.ts), and one
 * names only a process of its sender's group (checked against the numbers the coupling gave): a stranger
 * cannot make a job fail a peer, and the other job can only report its own processes. `why` is cut to
 * WHY_CHARS printable characters before it reaches a process.
 */
import type { Logger } from '@tsmpi/core/pmi';
import type { LinkChannel, LinkMessage } from './port-link.ts';

/** What a kept link is used for (port-link.ts LinkChannel). */
export type CouplingLink = Pick<LinkChannel, 'follow' | 'send' | 'close'>;

/** One coupling, as dynamic-service.ts knows it once both groups took each other. */
export interface Coupling {
  readonly link: CouplingLink;
  /** The port without its secret (what mpiexec's lines name). */
  readonly port: string;
  /** This job's processes in the coupled group. */
  readonly mine: readonly number[];
  /** This job's numbers for the other group's processes, and their numbers in their own job (same order). */
  readonly here: readonly number[];
  readonly there: readonly number[];
}

export interface CoupledLinksDeps {
  /** Sends wire-up peerFailed to process `to` (when it is connected): this job's process `failed` failed, `why`. */
  tell(to: number, failed: number, why: string): void;
  /** "process N (process M of the job coupled at port ...)" (dynamic-service.ts coupledPeer). */
  describe(here: number): string;
  readonly log: Logger | undefined;
}

/** Longest `why` passed on from the other job (its mpiexec's words about how its process ended). */
const WHY_CHARS = 300;

interface Entry {
  readonly c: Coupling;
  /** their number there -> this job's number */
  readonly hereOf: Map<number, number>;
  /** The other group's processes (their numbers) that finalized or failed: nothing more to say of them. */
  readonly ended: Set<number>;
  /** This group's processes already reported to the other job. */
  readonly told: Set<number>;
  isDecoupled: boolean;
  /** This job is ending (close): the link's end is no failure. */
  isClosed: boolean;
}

/** The kept links of one job. */
export class CoupledLinks {
  readonly #deps: CoupledLinksDeps;
  readonly #entries: Entry[] = [];

  constructor(deps: CoupledLinksDeps) {
    this.#deps = deps;
  }

  /** Keeps `c`'s link: from now on its messages fail peers here, and this group's ends are told there. */
  add(c: Coupling): void {
    const e: Entry = { c, hereOf: new Map(c.there.map((t, i) => [t, c.here[i]!])), ended: new Set(), told: new Set(), isDecoupled: false, isClosed: false };
    this.#entries.push(e);
    c.link.follow((m) => this.#onMessage(e, m), (err) => this.#onEnd(e, err));
  }

  /** Process `p` of this job ended: `why` how, or null when it finalized (no failure). Told to every coupling of its group. */
  processEnded(p: number, why: string | null): void {
    for (const e of this.#entries) {
      if (e.isDecoupled || e.isClosed || e.told.has(p) || !e.c.mine.includes(p)) continue;
      e.told.add(p);
      e.c.link.send(why === null ? { t: 'finalized', process: p } : { t: 'failed', process: p, why });
    }
  }

  /**
   * This job's group disconnected from the other group, whose processes are `here` (this job's numbers):
   * nothing passes for that coupling any more. @returns false when no coupling holds them
   */
  decouple(here: readonly number[]): boolean {
    let found = false;
    for (const e of this.#entries) {
      if (!here.some((p) => e.c.here.includes(p))) continue;
      e.isDecoupled = true;
      found = true;
      this.#deps.log?.debug({ port: e.c.port }, 'coupled groups disconnected: failures no longer pass');
    }
    return found;
  }

  /** The job ends: every link closes (the other side then fails what of this group did not finalize). */
  close(): void {
    for (const e of this.#entries) {
      e.isClosed = true;
      e.c.link.close('job ended');
    }
  }

  #onMessage(e: Entry, m: LinkMessage): void {
    if (m.t !== 'failed' && m.t !== 'finalized') {
      this.#deps.log?.warn({ port: e.c.port, t: m.t }, 'coupled job sent an unexpected message: ignored');
      return;
    }
    const here = Number.isInteger(m.process) ? e.hereOf.get(m.process) : undefined;
    if (here === undefined) {
      this.#deps.log?.warn({ port: e.c.port, process: m.process }, 'coupled job named a process outside its group: ignored');
      return;
    }
    if (e.ended.has(m.process)) return;
    e.ended.add(m.process);
    if (m.t === 'failed' && !e.isDecoupled) {
      const why = typeof m.why === 'string' ? m.why.replace(/[^\x20-\x7e]/g, '?').slice(0, WHY_CHARS) : 'failed';
      this.#failHere(e, here, `${this.#deps.describe(here)} failed: ${why} (as its job's mpiexec says)`);
    }
  }

  #onEnd(e: Entry, err: Error): void {
    if (e.isClosed || e.isDecoupled) return;
    e.isClosed = true;
    for (const [there, here] of e.hereOf) {
      if (e.ended.has(there)) continue;
      e.ended.add(there);
      this.#failHere(e, here, `${this.#deps.describe(here)} is gone: its job's mpiexec ended without saying it finalized (${err.message})`);
    }
  }

  /** Every process of this group hears that `here` failed. */
  #failHere(e: Entry, here: number, why: string): void {
    this.#deps.log?.info({ peer: here, port: e.c.port }, 'coupled process failed: telling this group');
    for (const p of e.c.mine) this.#deps.tell(p, here, why);
  }
}
