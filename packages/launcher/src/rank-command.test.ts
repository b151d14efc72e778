import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TRANSPORT_ENV, withTransport } from './rank-command.ts';

describe('withTransport', () => {
  it('names the launcher\'s own @tsmpi/transport-tcp by file URL when the user chose none', () => {
    for (const env of [{}, { [TRANSPORT_ENV]: '' }]) {
      const url = withTransport(env)[TRANSPORT_ENV]!;
      expect(url).toMatch(/^file:\/\/.*transport-tcp\/(src\/index\.ts|dist\/index\.js)$/);
      expect(existsSync(fileURLToPath(url))).toBe(true);
    }
  });

  it('keeps a transport the user set, and the rest of the environment', () => {
    const env = { [TRANSPORT_ENV]: 'my-transport', OTHER: 'x' };
    expect(withTransport(env)).toEqual(env);
    expect(withTransport({ OTHER: 'y' }).OTHER).toBe('y');
  });
});
