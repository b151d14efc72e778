/** When init lowers V8's interrupt budget (tier-up.ts): the settings' 0 and a command-line budget leave V8 alone, and the window of the warm-ups restores V8's own. */
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { commandLineSetsBudget, lowerTierUpBudget, openTierUpWindow, v8InterruptBudget } from './tier-up.ts';

describe('tier-up budget', () => {
  it('finds a budget given on the node command line, in either spelling', () => {
    expect(commandLineSetsBudget(['--interrupt-budget=16384'])).toBe(true);
    expect(commandLineSetsBudget(['--single-threaded-gc', '--interrupt_budget=100'])).toBe(true);
    expect(commandLineSetsBudget(['--single-threaded-gc', '--conditions=@tsmpi/source'])).toBe(false);
    expect(commandLineSetsBudget([])).toBe(false);
  });

  it('changes nothing for 0, where each process has a core, or when the command line chose a budget', () => {
    expect(lowerTierUpBudget(0, true, [])).toBeNull();
    expect(lowerTierUpBudget(4096, false, [])).toBeNull();
    expect(lowerTierUpBudget(4096, true, ['--interrupt-budget=16384'])).toBeNull();
  });
});

describe("the tier-up window of init's warm-ups", () => {
  it("knows the running V8's own budget, as node --v8-options prints it", () => {
    const own = v8InterruptBudget();
    if (own === null) throw new Error(`V8 ${process.versions.v8} is not in V8_INTERRUPT_BUDGETS (tier-up.ts): add its --interrupt-budget default`);
    const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    expect(options).toContain(`--interrupt-budget=${own}\n`);
  });

  it('changes nothing for 0, a command-line budget or an unknown V8', () => {
    expect(openTierUpWindow(0, [])).toBeNull();
    expect(openTierUpWindow(4096, ['--interrupt-budget=16384'])).toBeNull();
    expect(openTierUpWindow(4096, [], '99.1.0')).toBeNull();
    expect(v8InterruptBudget('11.3.244.8-node.33')).toBe(67_584);
  });

  it('returns a close that can be called twice', () => {
    const close = openTierUpWindow(4096, []);
    expect(close).not.toBeNull();
    close!();
    close!();
  });
});
