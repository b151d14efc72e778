/** process-group.ts: a detached child's group has a member while it runs, none once it is reaped. */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { hasGroupMembers } from './process-group.ts';

describe('hasGroupMembers', () => {
  it('is true while a detached child runs and false from its exit event on', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { detached: true, stdio: 'ignore' });
    const pid = child.pid!;
    expect(hasGroupMembers(pid)).toBe(true);
    const atExit = await new Promise<boolean>((resolve) => {
      child.on('exit', () => resolve(hasGroupMembers(pid)));
      process.kill(-pid, 'SIGKILL');
    });
    expect(atExit).toBe(false);
  });

  it('is true while a grandchild holds the group after its leader exited', async () => {
    // The leader starts a grandchild in its own group and exits: the group (and its number) lives on.
    const script = "require('child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' }).unref()";
    const child = spawn(process.execPath, ['-e', script], { detached: true, stdio: 'ignore' });
    const pid = child.pid!;
    const atExit = await new Promise<boolean>((resolve) => child.on('exit', () => resolve(hasGroupMembers(pid))));
    expect(atExit).toBe(true);
    process.kill(-pid, 'SIGKILL');
  });
});
