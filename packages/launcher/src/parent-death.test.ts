import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findSetpriv, withParentDeath } from './parent-death.ts';

describe('parent-death', () => {
  it('wraps a rank command in setpriv --pdeathsig KILL, keeping file and arguments in order', () => {
    expect(withParentDeath({ file: '/usr/bin/node', args: ['--import', 'tsx', 'app.ts', '--', '-x'] }, 'setpriv')).toEqual({
      file: 'setpriv',
      args: ['--pdeathsig', 'KILL', '--', '/usr/bin/node', '--import', 'tsx', 'app.ts', '--', '-x'],
    });
  });

  it('leaves the command alone without setpriv', () => {
    const cmd = { file: 'node', args: ['app.mjs'] };
    expect(withParentDeath(cmd, null)).toBe(cmd);
  });

  it('finds setpriv where util-linux installed it, and nothing off Linux', () => {
    const hasSetpriv = process.platform === 'linux' && ['/usr/bin/setpriv', '/bin/setpriv'].some((f) => existsSync(f));
    expect(findSetpriv()).toBe(hasSetpriv ? 'setpriv' : null);
  });
});
