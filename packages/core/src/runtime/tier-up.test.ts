/** When init lowers V8's interrupt budget (tier-up.ts): the setting's 0 and a command-line budget leave V8 alone. */
import { describe, expect, it } from 'vitest';
import { commandLineSetsBudget, lowerTierUpBudget } from './tier-up.ts';

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
