// The rank link's framing (link-frames.ts) fed raw bytes, and the wire-up URL (protocol.ts).
import { describe, expect, it } from 'vitest';
import { FRAME_KIND, FrameReader, MAX_CLOSE_REASON_BYTES, encodeCloseFrame, encodeMessageFrame, type FrameSink } from './link-frames.ts';
import { parseWireupUrl, wireupUrl } from './protocol.ts';

function collector(): { sink: FrameSink; messages: string[]; closes: [number, string][] } {
  const messages: string[] = [];
  const closes: [number, string][] = [];
  return { messages, closes, sink: { onMessage: (b) => messages.push(b.toString('latin1')), onClose: (code, reason) => closes.push([code, reason]) } };
}

describe('FrameReader', () => {
  it('reads frames whole, two in a chunk, and split byte by byte', () => {
    const bytes = Buffer.concat([encodeMessageFrame(Buffer.from('hello')), encodeMessageFrame(Buffer.alloc(0)), encodeMessageFrame(Buffer.from('x'.repeat(300)))]);
    const whole = collector();
    expect(new FrameReader(1024).push(bytes, whole.sink)).toBe(true);
    const split = collector();
    const r = new FrameReader(1024);
    for (let i = 0; i < bytes.length; i++) expect(r.push(bytes.subarray(i, i + 1), split.sink)).toBe(true);
    for (const c of [whole, split]) expect(c.messages).toEqual(['hello', '', 'x'.repeat(300)]);
  });

  it('refuses a frame over its limit from the header alone, and reads nothing after', () => {
    const c = collector();
    const r = new FrameReader(1024);
    const header = encodeMessageFrame(Buffer.alloc(1025)).subarray(0, 5);
    expect(r.push(header, c.sink)).toBe(false);
    expect(r.error).toMatch(/frame of 1025 bytes/);
    expect(r.push(encodeMessageFrame(Buffer.from('late')), c.sink)).toBe(false);
    expect(c.messages).toEqual([]);
  });

  it('takes larger frames once its owner raised the limit', () => {
    const c = collector();
    const r = new FrameReader(4);
    expect(r.push(encodeMessageFrame(Buffer.from('abcd')), c.sink)).toBe(true);
    r.maxBodyBytes = 16;
    expect(r.push(encodeMessageFrame(Buffer.from('abcdefgh')), c.sink)).toBe(true);
    expect(c.messages).toEqual(['abcd', 'abcdefgh']);
  });

  it('refuses an unknown kind and a close frame of a bad length', () => {
    const unknown = Buffer.from([0, 0, 0, 1, 7, 0]);
    const r1 = new FrameReader(1024);
    expect(r1.push(unknown, collector().sink)).toBe(false);
    expect(r1.error).toMatch(/unknown frame kind 7/);
    const shortClose = Buffer.from([0, 0, 0, 1, FRAME_KIND.close, 0]);
    const r2 = new FrameReader(1024);
    expect(r2.push(shortClose, collector().sink)).toBe(false);
    expect(r2.error).toMatch(/close frame of 1 bytes/);
  });

  it('hands over a close frame with its code and reason, then stops', () => {
    const c = collector();
    const r = new FrameReader(1024);
    const bytes = Buffer.concat([encodeMessageFrame(Buffer.from('m')), encodeCloseFrame(4001, 'bad key'), encodeMessageFrame(Buffer.from('after'))]);
    expect(r.push(bytes, c.sink)).toBe(false);
    expect(r.error).toBeNull();
    expect(c.messages).toEqual(['m']);
    expect(c.closes).toEqual([[4001, 'bad key']]);
  });

  it('cuts a close reason to its bound', () => {
    const c = collector();
    new FrameReader(16).push(encodeCloseFrame(4002, 'y'.repeat(500)), c.sink);
    expect(c.closes[0]![1].length).toBe(MAX_CLOSE_REASON_BYTES);
  });
});

describe('wire-up URL', () => {
  it('round-trips tcp:// and tls:// with IPv4, names and IPv6', () => {
    expect(wireupUrl(false, '127.0.0.1', 4000)).toBe('tcp://127.0.0.1:4000');
    expect(wireupUrl(true, 'fe80::1', 65535)).toBe('tls://[fe80::1]:65535');
    expect(parseWireupUrl('tls://[fe80::1]:65535')).toEqual({ isTls: true, host: 'fe80::1', port: 65535 });
    expect(parseWireupUrl('tcp://node-7:1')).toEqual({ isTls: false, host: 'node-7', port: 1 });
  });

  it('refuses what is not one', () => {
    for (const bad of ['ws://127.0.0.1:4000', 'tcp://127.0.0.1', 'tcp://127.0.0.1:0', 'tcp://127.0.0.1:70000', 'tcp://a:1/x', '']) {
      expect(parseWireupUrl(bad), bad).toBeNull();
    }
  });
});
