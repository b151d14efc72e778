// When mpiexec tries ssh to a host again (connect-retry.ts): pure, on ssh's real messages and a fake clock.
import { describe, expect, it } from 'vitest';
import { ConnectRetry, isNotUpYet } from './connect-retry.ts';

const REFUSED = 'ssh: connect to host th2 port 2222: Connection refused\r\n';
const NO_NAME = 'ssh: Could not resolve hostname pi-worker-1.pi.default.svc: Name or service not known\r\n';
const TEMP_NAME = 'ssh: Could not resolve hostname w1: Temporary failure in name resolution\r\n';

describe('isNotUpYet', () => {
  it('is true for ssh failing to resolve or reach the host (status 255)', () => {
    for (const text of [REFUSED, NO_NAME, TEMP_NAME, 'ssh: connect to host 10.0.0.9 port 22: No route to host\n', 'kex_exchange_identification: read: Connection reset by peer\n']) {
      expect(isNotUpYet(255, text), text).toBe(true);
    }
  });

  it('is false when the host answered and refused, or when the remote command failed', () => {
    expect(isNotUpYet(255, 'root@th2: Permission denied (publickey).\n')).toBe(false);
    expect(isNotUpYet(255, 'Host key verification failed.\n')).toBe(false);
    expect(isNotUpYet(127, 'sh: 1: exec: /opt/node/bin/node: not found\n')).toBe(false);
    expect(isNotUpYet(1, REFUSED)).toBe(false);
    expect(isNotUpYet(null, REFUSED)).toBe(false);
  });
});

describe('ConnectRetry', () => {
  it('waits 1, 2, 4, 8, 8 s between attempts while within the window, then gives up', () => {
    let now = 1_000_000;
    const r = new ConnectRetry(30_000, () => now);
    const waits: number[] = [];
    for (;;) {
      r.started();
      const step = r.next(255, REFUSED);
      if (step === null) break;
      expect(step.attempt).toBe(r.attempts + 1);
      waits.push(step.waitMs);
      now += step.waitMs + 500; // the attempt itself takes half a second
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 8000]);
    expect(r.attempts).toBe(6);
    expect(r.elapsedSec).toBe(26);
  });

  it('never retries with a window of 0, nor a failure that is final', () => {
    const none = new ConnectRetry(0, () => 5);
    none.started();
    expect(none.next(255, REFUSED)).toBeNull();
    const auth = new ConnectRetry(60_000, () => 5);
    auth.started();
    expect(auth.next(255, 'Permission denied (publickey).')).toBeNull();
  });

  it('says nothing before the first attempt', () => {
    expect(new ConnectRetry(60_000).next(255, REFUSED)).toBeNull();
  });
});
