/**
 * Coupling two mpiexec jobs at a port (docs/adr/0043-connect-two-jobs.md), both halves: the accepting
 * job's (a port link arrived, an accept pairs with it) and the connecting job's (dial the port's mpiexec).
 * dynamic-service.ts decides when; this module runs the port link's exchange (port-link.ts), gives each
 * side's processes new numbers of this job's universe, puts their addresses and the pair key in the job's
 * store (`tcp:P`, `tcp:P:C` per channel, `pair:P`, read by core's api/dynamic.ts reach) and renumbers the
 * other group's side. Either job may run channel engines (--progress threads|engines): then its offer
 * names each channel engine's address, which the other job's transports dial per channel.
 */
import { randomBytes } from 'node:crypto';
import { LINK_HANDSHAKE_MS, type GroupOffer, type LinkChannel } from './port-link.ts';

/** [MPI error class name, message], or a value: dynamic-service.ts's answer. */
type Answer = { readonly value: unknown } | { readonly error: readonly [string, string] };

/** What a coupling needs from the job. */
export interface CouplingDeps {
  /** A committed value of the job's store (a process's address `tcp:P`). */
  get(key: string): string | undefined;
  /** Puts a value in the job's store (the other job's processes' addresses and the pair key). */
  put(key: string, value: string): void;
  /** Takes `n` process numbers of the universe; an Error when fewer are free. */
  take(n: number, why: string): number[] | Error;
  /** The other job's processes are this job's numbers `here` now, `there[i]` their number in their own job (mpiexec's failure lines name them so). */
  coupled?(here: readonly number[], there: readonly number[]): void;
}

/** How long one side waits for the other's processes to take the coupling ('coupled'). */
const COUPLED_TIMEOUT_MS = 120_000;

function fail(message: string): Answer {
  return { error: ['ERR_PORT', message] };
}

/**
 * A group's offer: its side and its processes' addresses from the store (under channel engines each
 * channel's engine's, `tcp:P:C`, as core's init puts them); an Error when one is missing.
 */
export function groupOffer(side: Uint8Array, j: number, engines: boolean, c: number, deps: CouplingDeps): GroupOffer | Error {
  const words = new Int32Array(Uint8Array.from(side).buffer);
  const procs: { p: number; address: string; channels?: string[] }[] = [];
  const seen = new Set<number>();
  for (const e of words.subarray(1)) {
    const p = Math.floor(e / j);
    if (seen.has(p)) continue;
    seen.add(p);
    if (engines && c > 0) {
      const channels = Array.from({ length: c }, (_, ch) => deps.get(`tcp:${p}:${ch}`));
      if (channels.some((a) => a === undefined)) return new Error(`process ${p} published no address for each of its ${c} channel engines`);
      procs.push({ p, address: channels[0]!, channels: channels as string[] });
      continue;
    }
    const address = deps.get(`tcp:${p}`);
    if (address === undefined) return new Error(`process ${p} published no transport address`);
    procs.push({ p, address });
  }
  return { side: Buffer.from(side).toString('base64'), procs, j, engines, ...(c > 0 ? { c } : {}) };
}

/** A connect's or accept's `channels` (core sends its --channels); 0 from a core that did not say. */
export function channelsOf(a: Readonly<Record<string, unknown>>): number {
  const c = a['channels'];
  return typeof c === 'number' && Number.isInteger(c) && c >= 1 && c <= MAX_CHANNELS ? c : 0;
}

/** The other group's side in this job's numbers: process procs[i].p becomes numbers[i]. */
function renumberSide(group: GroupOffer, numbers: readonly number[]): Uint8Array {
  const words = new Int32Array(Uint8Array.from(Buffer.from(group.side, 'base64')).buffer);
  const map = new Map(group.procs.map((x, i) => [x.p, numbers[i]!]));
  const J = group.j;
  for (let i = 1; i < words.length; i++) {
    const local = map.get(Math.floor(words[i]! / J));
    if (local === undefined) throw new Error('side names a process outside its group');
    words[i] = local * J + (words[i]! % J);
  }
  return new Uint8Array(words.buffer);
}

/** Why two groups cannot couple, or null. */
function whyNot(mine: GroupOffer, theirs: GroupOffer): string | null {
  if (!Number.isInteger(theirs.j) || theirs.j !== mine.j) return `the two jobs run ${mine.j} and ${String(theirs.j)} endpoints per process: coupled jobs need the same`;
  // A frame travels on the channel its sender picks, (s + d) mod C in the sender's numbers: the receiver must own it.
  if (theirs.c !== undefined && theirs.c !== mine.c) return `the two jobs run ${String(mine.c)} and ${String(theirs.c)} channels per process pair (--channels): coupled jobs need the same`;
  return null;
}

/** Puts the other group's addresses and the pair key for this group's processes. */
function store(deps: CouplingDeps, theirs: GroupOffer, theirNumbersHere: readonly number[], mine: GroupOffer, myNumbersThere: readonly number[], key: string): void {
  const as: Record<string, number> = {};
  mine.procs.forEach((x, i) => {
    as[String(x.p)] = myNumbersThere[i]!;
  });
  theirs.procs.forEach((x, i) => {
    const n = theirNumbersHere[i]!;
    deps.put(`tcp:${n}`, x.address);
    // This job's channel engines (and user threads' routes to them) read channel c's address of a process as `tcp:P:C`:
    // an engine of the other job, or its one listener under inline progress.
    for (let c = 0; c < (mine.c ?? 0); c++) deps.put(`tcp:${n}:${c}`, x.channels?.[c] ?? x.address);
    // `is`: its number in its own job, which the processes' errors name it by; `channels`: its engines' addresses (core's ForeignPeer.channelAddresses).
    deps.put(`pair:${n}`, JSON.stringify({ key, as, is: x.p, ...(x.channels === undefined ? {} : { channels: x.channels }) }));
  });
  deps.coupled?.(theirNumbersHere, theirs.procs.map((x) => x.p));
}

function isNumbers(v: unknown, n: number): v is number[] {
  return Array.isArray(v) && v.length === n && v.every((x) => Number.isInteger(x) && x >= 0);
}

function isGroup(g: unknown): g is GroupOffer {
  const x = g as GroupOffer | null;
  return typeof x === 'object' && x !== null && typeof x.side === 'string' && Array.isArray(x.procs) && x.procs.length > 0 &&
    x.procs.every((p) => Number.isInteger(p?.p) && typeof p.address === 'string' && p.address.length < 1024 && isChannelList(p.channels, x.c)) &&
    typeof x.j === 'number' && typeof x.engines === 'boolean' && (x.c === undefined || (Number.isInteger(x.c) && x.c >= 1 && x.c <= MAX_CHANNELS));
}

/** The most channels a process pair may have (core's --channels range). */
const MAX_CHANNELS = 64;

/** A process's per-channel addresses in an offer: absent, or one address per channel. */
function isChannelList(v: unknown, c: number | undefined): boolean {
  return v === undefined || (Array.isArray(v) && v.length === c && v.every((a) => typeof a === 'string' && a.length < 1024));
}

/** The accepting side: `theirs` connected over `link`, this job's accept offers `mine`. Answers the accept. */
export async function acceptCoupling(link: LinkChannel, theirs: GroupOffer, mine: GroupOffer, deps: CouplingDeps, port: string): Promise<Answer> {
  const refuse = (message: string): Answer => {
    link.send({ t: 'refused', error: ['ERR_PORT', message] });
    link.close('refused');
    return fail(message);
  };
  if (!isGroup(theirs)) return refuse('malformed connect');
  const why = whyNot(mine, theirs);
  if (why !== null) return refuse(`${port}: ${why}`);
  const numbers = deps.take(theirs.procs.length, `the connecting job's ${theirs.procs.length} processes at ${port}`);
  if (numbers instanceof Error) return refuse(numbers.message);
  const key = randomBytes(32).toString('hex');
  link.send({ t: 'accepted', group: mine, numbers, key });
  let m;
  try {
    m = await link.next(LINK_HANDSHAKE_MS);
  } catch (e) {
    return fail(`${port}: the connecting job went away: ${(e as Error).message}`);
  }
  if (m.t === 'refused') return fail(`${port}: the connecting job refused: ${m.error[1]}`);
  if (m.t !== 'numbers' || !isNumbers(m.numbers, mine.procs.length)) return refuse('malformed numbers');
  store(deps, theirs, numbers, mine, m.numbers, key);
  return { value: { side: renumberSide(theirs, numbers) } };
}

/** The connecting side over a proven `link`: offers `mine`, waits for the accept (`timeoutS`). Answers the connect. */
export async function connectCoupling(link: LinkChannel, mine: GroupOffer, timeoutS: number, deps: CouplingDeps, port: string): Promise<Answer> {
  link.send({ t: 'connect', group: mine, timeout: timeoutS });
  let m;
  try {
    m = await link.next(timeoutS * 1000 + LINK_HANDSHAKE_MS);
  } catch (e) {
    link.close('no answer');
    return fail(`${port}: ${(e as Error).message}`);
  }
  if (m.t === 'refused') {
    link.close('refused');
    return { error: [typeof m.error[0] === 'string' ? m.error[0] : 'ERR_PORT', String(m.error[1])] };
  }
  if (m.t !== 'accepted' || !isGroup(m.group) || !isNumbers(m.numbers, mine.procs.length) || typeof m.key !== 'string' || !/^[0-9a-f]{64}$/.test(m.key)) {
    link.close('malformed');
    return fail(`${port}: the accepting mpiexec answered a malformed message`);
  }
  const why = whyNot(mine, m.group);
  const numbers = why === null ? deps.take(m.group.procs.length, `the accepting job's ${m.group.procs.length} processes at ${port}`) : new Error(`${port}: ${why}`);
  if (numbers instanceof Error) {
    link.send({ t: 'refused', error: ['ERR_PORT', numbers.message] });
    link.close('refused');
    return fail(numbers.message);
  }
  link.send({ t: 'numbers', numbers });
  store(deps, m.group, numbers, mine, m.numbers, m.key);
  return { value: { side: renumberSide(m.group, numbers) } };
}

/**
 * Both groups' processes took the coupling (or one failed): tells the other side and waits for its word.
 * On both sides' yes the link stays open (the caller keeps it: coupled-links.ts); otherwise it closes.
 */
export async function confirmCoupling(link: LinkChannel, ok: boolean): Promise<Answer> {
  link.send({ t: 'coupled', ok });
  let answer: Answer;
  try {
    const m = await link.next(COUPLED_TIMEOUT_MS);
    if (!ok) answer = fail('this group could not take the other job\'s processes');
    else if (m.t !== 'coupled' || m.ok !== true) answer = fail('the other job\'s processes could not take this group\'s');
    else answer = { value: null };
  } catch (e) {
    answer = fail(`the other job went away while coupling: ${(e as Error).message}`);
  }
  if ('error' in answer) link.close('not coupled');
  return answer;
}
