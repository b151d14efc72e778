import { describe, expect, it } from 'vitest';
import { newDashboardToken, TOKEN_BYTES, tokenMatches, tokenOfUrl } from './dashboard-token.ts';

describe('dashboard token', () => {
  it('is 128 random bits as hex, fresh each time', () => {
    const a = newDashboardToken();
    expect(a).toMatch(new RegExp(`^[0-9a-f]{${TOKEN_BYTES * 2}}$`));
    expect(TOKEN_BYTES * 8).toBe(128);
    expect(newDashboardToken()).not.toBe(a);
  });

  it('matches only the exact token', () => {
    const t = newDashboardToken();
    expect(tokenMatches(t, t)).toBe(true);
    expect(tokenMatches(t, null)).toBe(false);
    expect(tokenMatches(t, '')).toBe(false);
    expect(tokenMatches(t, t.slice(0, -1))).toBe(false);
    expect(tokenMatches(t, `${t}0`)).toBe(false);
    expect(tokenMatches(t, t.toUpperCase())).toBe(false);
    expect(tokenMatches(t, `${t.slice(0, -1)}${t.endsWith('0') ? '1' : '0'}`)).toBe(false);
  });

  it('reads the token of a request URL', () => {
    expect(tokenOfUrl('/?token=abc')).toBe('abc');
    expect(tokenOfUrl('/ws?x=1&token=abc')).toBe('abc');
    expect(tokenOfUrl('/')).toBeNull();
    expect(tokenOfUrl(undefined)).toBeNull();
    expect(tokenOfUrl('/?token=')).toBe('');
  });
});
