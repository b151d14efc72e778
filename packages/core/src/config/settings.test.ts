// The eager limit's allowed range (issue 17, limits): a value the receivers could not take is refused at init.
import { describe, expect, it } from 'vitest';
import { MAX_EAGER_LIMIT_BYTES, resolveSettings } from './settings.ts';

describe('eagerLimit range', () => {
  it('accepts 0 to 64 MiB', () => {
    expect(resolveSettings({}, { TSMPI_EAGER_LIMIT: String(MAX_EAGER_LIMIT_BYTES) }).eagerLimit).toBe(64 << 20);
    expect(resolveSettings({}, { TSMPI_EAGER_LIMIT: '0' }).eagerLimit).toBe(0);
  });

  it('refuses a larger value, naming the variable and the range', () => {
    expect(() => resolveSettings({}, { TSMPI_EAGER_LIMIT: String(MAX_EAGER_LIMIT_BYTES + 1) })).toThrow(/TSMPI_EAGER_LIMIT: eagerLimit=67108865 is invalid: expected an integer from 0 to 67108864/);
    expect(() => resolveSettings({ eagerLimit: 1 << 30 }, {})).toThrow(/from 0 to 67108864/);
  });
});
