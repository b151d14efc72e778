/**
 * How File.open opens a file on every process of a communicator (MPI 4.0
 * 14.2.1): one process's open, with its failure returned rather than thrown
 * (every process must learn of it: api/file.ts exchanges them), and the
 * choice of the two-phase aggregators at open (ROMIO's cb_nodes: by
 * default one process per host, the lowest rank of each).
 */
import { open as fsOpen, type FileHandle } from 'node:fs/promises';
import { fileError, openFlags } from '../io/index.ts';
import type { MPIError } from '../util/index.ts';
import type { Comm } from './comm.ts';
import { COMM_TYPE_SHARED } from './constants.ts';

/** Opens one process's handle; a failure is returned (every process must learn of it), not thrown. */
export async function openOne(path: string, amode: number, first: boolean, call: string): Promise<[FileHandle | null, MPIError | null]> {
  try {
    // 0o666 less the umask, as open(2) callers (and ROMIO) create files.
    return [await fsOpen(path, openFlags(amode, first), 0o666), null];
  } catch (e) {
    return [null, fileError(e, call, path)];
  }
}

/**
 * The aggregators of two-phase I/O: hint cb_nodes of them (default: one per host), taken round-robin
 * over the hosts, lowest ranks first (ROMIO's default placement).
 */
export async function chooseAggregators(comm: Comm, hints: [string, string][]): Promise<number[]> {
  const host = await comm.splitType(COMM_TYPE_SHARED);
  const leader = await host!.bcast(comm.rank);
  host!.free();
  const hostOf = await comm.allgather(leader);
  const byHost = new Map<number, number[]>();
  hostOf.forEach((h, r) => {
    const list = byHost.get(h);
    if (list === undefined) byHost.set(h, [r]);
    else list.push(r);
  });
  const hosts = [...byHost.values()];
  const wanted = hints.find(([k]) => k === 'cb_nodes')?.[1];
  let count = hosts.length;
  // File.open has checked the hint: a positive integer.
  if (wanted !== undefined) count = Math.min(Number(wanted), comm.size);
  const out: number[] = [];
  for (let i = 0; out.length < count; i++) for (const h of hosts) if (i < h.length && out.length < count) out.push(h[i]!);
  return out;
}
