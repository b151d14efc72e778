/**
 * Where each rank runs: parses --hosts / --hostfile and places ranks on
 * hosts in blocks (each host takes --ppn ranks, else its slot count, else
 * one), wrapping around when there are more ranks than slots
 * (oversubscription is allowed). Pure: no I/O.
 */
import os from 'node:os';
import { isThisMachine } from './iface.ts';

/** Most slots one host entry may declare: as many as mpiexec's -n accepts (beyond that it is a typo). */
const MAX_SLOTS = 65536;

/** One host entry: "h1:4" gives { host: 'h1', slots: 4 }. */
export interface HostSlots {
  readonly host: string;
  readonly slots: number | null;
}

/** One rank's place in the job. */
export interface Placement {
  readonly rank: number;
  readonly host: string;
  /** Index of the rank among the ranks on the same host. */
  readonly localRank: number;
  /** Number of ranks on the same host. */
  readonly localSize: number;
}

function parseEntry(entry: string, where: string): HostSlots | Error {
  // ssh (and any --launcher-exec) would read such a name as an option: `-oProxyCommand=...` runs a command.
  if (entry.trim().startsWith('-')) return new Error(`${where}: "${entry.trim()}" is not a host: a host name may not begin with "-"`);
  const m = /^([A-Za-z0-9_.\-]+|\[[0-9a-fA-F:]+\])(?::(\d+)|\s+slots\s*=\s*(\d+))?$/.exec(entry.trim());
  if (m === null) return new Error(`${where}: "${entry}" is not a host: expected NAME, NAME:SLOTS or NAME slots=SLOTS`);
  const slotsText = m[2] ?? m[3];
  const slots = slotsText === undefined ? null : Number(slotsText);
  if (slots !== null && (slots < 1 || slots > MAX_SLOTS)) return new Error(`${where}: "${entry}": slots must be from 1 to ${MAX_SLOTS}`);
  return { host: m[1]!, slots };
}

/** Parses "h1[:slots],h2,...". */
export function parseHostList(text: string): HostSlots[] | Error {
  const out: HostSlots[] = [];
  for (const part of text.split(',')) {
    if (part.trim() === '') continue;
    const e = parseEntry(part, '--hosts');
    if (e instanceof Error) return e;
    out.push(e);
  }
  if (out.length === 0) return new Error('--hosts: expected h1[:slots],h2,...');
  return out;
}

/** Parses a hostfile: one "host", "host:slots" or "host slots=N" per line; # starts a comment. */
export function parseHostfile(text: string, file: string): HostSlots[] | Error {
  const out: HostSlots[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/#.*/, '').trim();
    if (line === '') continue;
    const e = parseEntry(line, `--hostfile ${file} line ${i + 1}`);
    if (e instanceof Error) return e;
    out.push(e);
  }
  if (out.length === 0) return new Error(`--hostfile ${file}: no hosts in the file`);
  return out;
}

/**
 * Places `np` ranks on `hosts` (null: all on `defaultHost`).
 * @param ppn - ranks per host (overrides the slot counts)
 */
export function placeRanks(np: number, hosts: readonly HostSlots[] | null, ppn: number | null, defaultHost: string): Placement[] {
  const list: readonly HostSlots[] = hosts ?? [{ host: defaultHost, slots: null }];
  const perHost = new Map<string, number>();
  // localSize is known once every rank is placed.
  const placed: Omit<Placement, 'localSize'>[] = [];
  let h = 0;
  while (placed.length < np) {
    const entry = list[h % list.length]!;
    const take = hosts === null ? np : (ppn ?? entry.slots ?? 1);
    for (let i = 0; i < take && placed.length < np; i++) {
      const localRank = perHost.get(entry.host) ?? 0;
      perHost.set(entry.host, localRank + 1);
      placed.push({ rank: placed.length, host: entry.host, localRank });
    }
    h++;
  }
  return placed.map((p) => ({ ...p, localSize: perHost.get(p.host)! }));
}

/** True when `host` names this machine: its host name, localhost, or one of its addresses (launched by fork). */
export function isLocalHost(host: string): boolean {
  return isThisMachine(host, os.hostname(), os.networkInterfaces());
}
