/**
 * How soon V8 optimises the code a program runs after MPI.init: the interrupt
 * budget, lowered for init's blocking round trips and small allreduces only (setting warmUpTierUpBudget,
 * openTierUpWindow) and, if asked, for the rest of the process once init is
 * done (setting tierUpBudget, lowerTierUpBudget).
 *
 * V8 counts the bytecode a function runs and checks whether to optimise it
 * each time the count reaches the interrupt budget (67,584 in Node 20). An MPI
 * call runs some forty small functions of the device, the transport and Node's
 * streams, so in a program's first thousand iterations most of them still run
 * in the interpreter or the baseline compiler (docs/PERFORMANCE.md 4.15, 4.16):
 * an 8-byte allreduce on 4 processes took 2-3x its later median there. With a
 * budget 16x lower the same functions are optimised after a sixteenth of the
 * calls. Given on the node command line (docs/PERFORMANCE.md 4.14) the lower
 * budget also optimised tsx's transpiler and the module loader, and start-up
 * cost more than the first iterations saved; set here, after init, start-up
 * keeps V8's own budget. docs/adr/0025-tier-up-budget-after-init.md has the
 * measurements.
 *
 * V8's flags belong to the process, so this changes the budget for the user's
 * code as well (which then also optimises sooner), and for worker threads
 * started later. Node documents changing V8 flags after start-up as allowed
 * but unsupported; V8 reads this one afresh each time it resets a function's
 * count, and Node 20 does not freeze its flags (--no-freeze-flags-after-init).
 */
import v8 from 'node:v8';

/** Whether the node command line already chose a budget (rankNodeFlags, or by hand): then it stays. */
export function commandLineSetsBudget(execArgv: readonly string[]): boolean {
  return execArgv.some((a) => a.startsWith('--interrupt-budget') || a.startsWith('--interrupt_budget'));
}

/**
 * Sets V8's interrupt budget for the rest of the process (the main thread's init calls it; worker
 * threads share the process's flags), on a host with more of the job's processes than cores only.
 * There the ranks take turns on the cores anyway and the 8-byte allreduce's first 1,000 calls ran
 * about twice as fast with it; where each rank has a core, the compiler threads it keeps busy compete
 * with the ranks, and the neighbour rate's first 1,000 iterations ran a third slower with it than
 * without (docs/adr/0025-tier-up-budget-after-init.md, "Only where the host is oversubscribed").
 * @param budget - the tierUpBudget setting; 0 leaves V8's budget alone
 * @param oversubscribed - whether this host has more of the job's processes than cores (poll-policy.ts)
 * @returns the budget now in force from this call, or null when nothing was changed
 */
export function lowerTierUpBudget(budget: number, oversubscribed: boolean, execArgv: readonly string[] = process.execArgv): number | null {
  if (budget <= 0 || !oversubscribed || commandLineSetsBudget(execArgv)) return null;
  v8.setFlagsFromString(`--interrupt-budget=${Math.floor(budget)}`);
  return Math.floor(budget);
}

/**
 * V8's own interrupt budget by V8 version (major.minor), what openTierUpWindow restores: V8 has no
 * way to read a flag back. Node 20 ships V8 11.3; tier-up.test.ts checks the running V8's entry
 * against `node --v8-options`, and fails on a V8 missing here (the window is then off).
 */
export const V8_INTERRUPT_BUDGETS: Readonly<Record<string, number>> = { '11.3': 67_584 };

/** V8's own interrupt budget in this process, or null for a V8 version not in V8_INTERRUPT_BUDGETS. */
export function v8InterruptBudget(v8Version: string = process.versions.v8): number | null {
  const [major, minor] = v8Version.split('.');
  return V8_INTERRUPT_BUDGETS[`${major}.${minor}`] ?? null;
}

/**
 * Lowers V8's interrupt budget to `budget` until the returned function is called, which puts V8's
 * own back (init calls it around its blocking round trips and warm-up of the small allreduce, whose work is fixed: a window
 * bounded by work, not by time). Its functions are then optimised within the warm-up instead of in the program's
 * first calls; once the budget is back, the program's own code (a large allreduce's loops among it)
 * is compiled as V8 would: with the budget kept low after init the 8 MiB allreduce on 4 processes ran
 * 1.3x slower (docs/adr/0025-tier-up-budget-after-init.md, docs/adr/0026-tier-up-window-at-init.md).
 * @param budget - the warmUpTierUpBudget setting; 0 changes nothing
 * @returns the function that restores V8's budget, or null when nothing was changed (budget 0, a
 *   budget on the node command line, or a V8 whose own budget is not known here)
 */
export function openTierUpWindow(
  budget: number, execArgv: readonly string[] = process.execArgv, v8Version: string = process.versions.v8,
): (() => void) | null {
  const own = v8InterruptBudget(v8Version);
  if (budget <= 0 || own === null || commandLineSetsBudget(execArgv)) return null;
  v8.setFlagsFromString(`--interrupt-budget=${Math.floor(budget)}`);
  let open = true;
  return () => {
    if (!open) return;
    open = false;
    v8.setFlagsFromString(`--interrupt-budget=${own}`);
  };
}
