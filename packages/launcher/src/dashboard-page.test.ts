import { describe, expect, it } from 'vitest';
import { DASHBOARD_PAGE } from './dashboard-page.ts';

describe('dashboard page', () => {
  it('has one inline script that parses (a template-literal escape gone wrong breaks the whole page)', () => {
    const scripts = [...DASHBOARD_PAGE.matchAll(/<script>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(() => new Function(scripts[0]![1]!)).not.toThrow();
    for (const id of ['ranks', 'waits', 'collectives', 'matrix', 'channels', 'tail-lines']) expect(DASHBOARD_PAGE).toContain(`id="${id}"`);
  });
});
