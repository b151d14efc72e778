/**
 * How soon V8 optimises the code a program runs after MPI.init: the interrupt
 * budget (setting tierUpBudget), lowered once init is done.
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
