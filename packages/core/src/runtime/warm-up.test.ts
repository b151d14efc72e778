// warm-up.ts against the in-process loopback transport: it runs the turns it is asked for, only to
// itself, stops early when told, and a transport that cannot be built ends it quietly.
import { describe, expect, it } from 'vitest';
import { createLoopbackFactory, type TransportFactory, type TransportOptions } from '../transport/index.ts';
import { startWarmUp } from './warm-up.ts';

/** The loopback factory, recording what each transport was built with and every frame it was handed. */
function recording(): { factory: TransportFactory; options: TransportOptions[]; sentTo: number[] } {
  const inner = createLoopbackFactory(1, 2);
  const options: TransportOptions[] = [];
  const sentTo: number[] = [];
  const factory: TransportFactory = (o) => {
    options.push(o);
    const t = inner(o);
    const send = t.send.bind(t);
    t.send = (dst, header, payload, token) => {
      sentTo.push(dst);
      return send(dst, header, payload, token);
    };
    return t;
  };
  return { factory, options, sentTo };
}

describe('startWarmUp', () => {
  it('runs the given turns on a private one-process transport that sends only to itself', async () => {
    const r = recording();
    const w = startWarmUp(r.factory, 50, 2);
    await w.done;
    expect(w.turns()).toBe(50);
    expect(r.options).toHaveLength(1);
    expect(r.options[0]!.processCount).toBe(1);
    expect(r.options[0]!.process).toBe(0);
    expect(r.options[0]!.jobKey).toMatch(/^[0-9a-f]{32}$/);
    expect(r.sentTo.length).toBe(50 * 12);
    expect(new Set(r.sentTo)).toEqual(new Set([0]));
  });

  it('stop() ends it after the current turn', async () => {
    const r = recording();
    const w = startWarmUp(r.factory, 1_000_000, 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    w.stop();
    await w.done;
    const turns = w.turns();
    expect(turns).toBeLessThan(1_000_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(w.turns()).toBe(turns);
  });

  it('ends at once with zero turns, or when the transport cannot be built', async () => {
    const r = recording();
    const none = startWarmUp(r.factory, 0, 1);
    await none.done;
    expect(none.turns()).toBe(0);
    const broken = startWarmUp(() => {
      throw new Error('no transport');
    }, 100, 1);
    await broken.done;
    expect(broken.turns()).toBe(0);
  });
});
