/**
 * Test helper: the processes a test started, found through /proc (Linux), so
 * that tests can kill one of them by pid and check that none is left.
 */
import { readdirSync, readFileSync } from 'node:fs';

function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid ...: comm may hold spaces, so parse after the last ')'.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** Every live descendant of `root` (children, grandchildren, ...). */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const ppid = parentOf(pid);
    if (ppid === null) continue;
    const list = children.get(ppid) ?? [];
    list.push(pid);
    children.set(ppid, list);
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    for (const c of children.get(stack.pop()!) ?? []) {
      out.push(c);
      stack.push(c);
    }
  }
  return out;
}

/** The command line of `pid` ('' when it is gone). */
export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** One variable of `pid`'s environment (undefined when unset or gone). */
export function envOf(pid: number, key: string): string | undefined {
  try {
    const kv = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((e) => e.startsWith(`${key}=`));
    return kv?.slice(key.length + 1);
  } catch {
    return undefined;
  }
}

/** True while a process with this pid exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Resolves once none of `pids` runs; rejects (naming the survivors) after `timeoutMs`. */
export async function waitGone(pids: readonly number[], timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alive = pids.filter(isRunning);
    if (alive.length === 0) return;
    if (Date.now() > deadline) throw new Error(`processes still running: ${alive.map((p) => `${p} (${cmdline(p)})`).join('; ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
