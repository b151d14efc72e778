/**
 * A rank's process group, and when it is still ours to signal.
 *
 * Ranks start detached (their own session and process group, id = the rank's pid), so one kill of
 * `-pid` ends the rank and whatever it left behind. Once the rank has exited and no member of its
 * group is left, the kernel may give that number to any new process on the machine, which may lead
 * a group of its own (a daemon, another launcher's step): a later kill of `-pid` would end a
 * stranger's processes. While a member lives, the number stays taken (Linux does not reuse a pid
 * still in use as a process group id), so the check is made once, at the rank's exit, when Node has
 * just reaped it and nothing can have taken the number yet.
 */

/** Whether process group `pgid` has a member this process may signal (signal 0 tests without sending). */
export function hasGroupMembers(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false; // ESRCH: the group is empty; EPERM: what is left is not ours
  }
}
