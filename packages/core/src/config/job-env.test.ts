// Unit tests of the job environment's host label (what COMM_TYPE_SHARED groups by).
import { describe, expect, it } from 'vitest';
import { hostLabel } from './job-env.ts';

describe('hostLabel', () => {
  it('tells apart two hosts that share one host name by their listen addresses', () => {
    const a = hostLabel('node', { TSMPI_LISTEN_HOST: '198.18.0.1' });
    const b = hostLabel('node', { TSMPI_LISTEN_HOST: '198.18.0.2' });
    expect(a).not.toBe(b);
  });
  it('agrees for two processes of one host', () => {
    expect(hostLabel('th1', { TSMPI_LISTEN_HOST: '127.0.0.1' })).toBe(hostLabel('th1', { TSMPI_LISTEN_HOST: '127.0.0.1' }));
    expect(hostLabel('th1', {})).toBe(hostLabel('th1', {}));
  });
  it('tells apart hosts with different names even on the same address', () => {
    expect(hostLabel('a', { TSMPI_LISTEN_HOST: '127.0.0.1' })).not.toBe(hostLabel('b', { TSMPI_LISTEN_HOST: '127.0.0.1' }));
  });
});
