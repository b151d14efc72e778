import { describe, expect, it } from 'vitest';
import { transportConformance } from './conformance.ts';
import { newFrameHeader, type FrameHeader, type TransportHandlers } from './interface.ts';
import { createLoopbackFactory, createLoopbackNetwork } from './loopback.ts';

transportConformance(
  'loopback',
  ({ processCount, channelCount, endpointsPerProcess, handlers }) => createLoopbackNetwork(processCount, { channelCount, handlers, ...(endpointsPerProcess === undefined ? {} : { endpointsPerProcess }) }),
  { describe, it, expect },
);

const silent = { debug() {}, info() {}, warn() {}, error() {} };

function recorder(): TransportHandlers & { got: { src: number; seq: number }[] } {
  const got: { src: number; seq: number }[] = [];
  return {
    got,
    onDeliver(src: number, h: FrameHeader) {
      got.push({ src, seq: h.seq });
    },
    onSent() {},
    onPeerLost() {},
  };
}

describe('loopback transport', () => {
  it('delivers asynchronously, never inside send()', async () => {
    const rs = [recorder(), recorder()];
    const [t0] = createLoopbackNetwork(2, { handlers: rs });
    t0!.send(1, { ...newFrameHeader(), seq: 1 }, null, -1);
    expect(rs[1]!.got.length).toBe(0);
    await new Promise((r) => setImmediate(r));
    expect(rs[1]!.got).toEqual([{ src: 0, seq: 1 }]);
  });

  it('routes each channel to the instance of the destination that owns it (threads mode)', async () => {
    const factory = createLoopbackFactory(2, 2);
    const make = (process: number, channel: number, handlers: TransportHandlers) => factory({
      process, processCount: 2, channelCount: 2, channels: [channel], jobKey: 'k', listenHost: 'x', log: silent, handlers,
    });
    const r = [recorder(), recorder()]; // receivers: process 1, channel 0 and channel 1
    const s0 = make(0, 0, recorder());
    const s1 = make(0, 1, recorder());
    make(1, 0, r[0]!);
    make(1, 1, r[1]!);
    const h = newFrameHeader();
    h.srcEndpoint = 0;
    h.dstEndpoint = 1; // channel 1
    h.seq = 11;
    s1.send(1, h, null, -1);
    h.dstEndpoint = 2; // channel 0
    h.seq = 10;
    s0.send(1, h, null, -1);
    expect(() => s0.send(1, { ...h, dstEndpoint: 1 }, null, -1)).toThrow(RangeError);
    await new Promise((res) => setImmediate(res));
    expect(r[0]!.got).toEqual([{ src: 0, seq: 10 }]);
    expect(r[1]!.got).toEqual([{ src: 0, seq: 11 }]);
  });
});
