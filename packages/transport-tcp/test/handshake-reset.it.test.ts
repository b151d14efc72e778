// testlist: { file: 'handshake-reset.it.test.ts', np: [1] } — one real TCP transport against a scripted listener on 127.0.0.1.
/**
 * How a connecting transport names the end of a connection whose HELLO it has
 * sent and whose ACCEPT it awaits (channel-connection.ts #lossCode), against a
 * scripted listener that plays the peer over a real loopback socket:
 *
 *   the peer dies: it resets the connection with our HELLO unread (what the
 *     kernel does for a process killed -9): a lost peer, TSMPI_ERR_PEER_CLOSED,
 *     with the socket's ECONNRESET in the message (it was logged as a
 *     handshake failure, TSMPI_ERR_HANDSHAKE);
 *   the peer refuses our key: it reads the whole HELLO and closes in order:
 *     TSMPI_ERR_HANDSHAKE, "wrong job key?", as before.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import type { TransportError } from '@tsmpi/core/transport';
import { CHALLENGE_BYTES, HELLO_BYTES } from '../src/handshake.ts';
import { TcpTransport } from '../src/tcp-transport.ts';
import { DEFAULT_TUNING } from '../src/tuning.ts';
import { jobKeyUsed, RecordingHandlers, recordingLog, waitUntil } from './tcp-harness.ts';

const MAGIC = Uint8Array.of(0x54, 0x53, 0x4d, 0x50, 0x49, 0x00, 0x02, 0x00);

class Handlers extends RecordingHandlers {
  errors: TransportError[] = [];
  override onPeerLost(process: number, err: TransportError): void {
    super.onPeerLost(process, err);
    this.errors.push(err);
  }
}

/** A listener that sends a CHALLENGE, then, once the whole HELLO arrived, resets or closes the connection. */
async function scriptedPeer(ending: 'reset' | 'close'): Promise<{ server: net.Server; address: string; hellos: () => number }> {
  let hellos = 0;
  const server = net.createServer((s) => {
    s.on('error', () => undefined);
    const challenge = new Uint8Array(CHALLENGE_BYTES);
    challenge.set(MAGIC);
    s.write(challenge);
    let got = 0;
    s.on('data', (d: Buffer) => {
      got += d.length;
      if (got < HELLO_BYTES) return;
      hellos++;
      // reset: as the kernel does for a process killed with unread bytes; close: an orderly refusal.
      if (ending === 'reset') s.resetAndDestroy();
      else s.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`, hellos: () => hellos };
}

async function lossAfterHello(ending: 'reset' | 'close'): Promise<{ err: TransportError; logged: object[]; hellos: number }> {
  const peer = await scriptedPeer(ending);
  const handlers = new Handlers();
  const log = recordingLog();
  const t = new TcpTransport(
    { process: 0, processCount: 2, channelCount: 1, jobKey: jobKeyUsed('c0ffee'), listenHost: '127.0.0.1', log, handlers },
    { ...DEFAULT_TUNING, sameHostUnix: false },
  );
  try {
    const own = await t.listen();
    t.start([own, peer.address]);
    t.send(1, { kind: 1, flags: 0, contextId: 0, srcEndpoint: 0, dstEndpoint: 1, tag: 0, seq: 0, aux: 0, aux2: 0, payloadLength: 0 }, null, -1);
    await waitUntil(() => handlers.errors.length > 0, 'the peer reported lost', 20_000);
    // Reported once per peer, even though the socket closes after the report.
    await new Promise((r) => setTimeout(r, 100));
    expect(handlers.lost).toEqual([{ process: 1, code: handlers.errors[0]!.code }]);
    return { err: handlers.errors[0]!, logged: log.records.map((r) => r.obj), hellos: peer.hellos() };
  } finally {
    t.destroy();
    peer.server.close();
  }
}

describe('the end of a connection between our HELLO and the ACCEPT', () => {
  it('a reset (the peer died with our HELLO unread) is a lost peer, not a handshake failure', async () => {
    const { err, logged, hellos } = await lossAfterHello('reset');
    expect(hellos).toBe(1);
    expect(err.code).toBe('TSMPI_ERR_PEER_CLOSED');
    expect(err.message).toMatch(/^channel 0 to process 1: .*ECONNRESET/);
    expect(logged, 'logged at info: the peer ended').toContainEqual(expect.objectContaining({ peer: 1, code: 'TSMPI_ERR_PEER_CLOSED' }));
  }, 30_000);

  it('an orderly close after the whole HELLO (a refused key) stays a handshake failure', async () => {
    const { err, hellos } = await lossAfterHello('close');
    expect(hellos).toBe(1);
    expect(err.code).toBe('TSMPI_ERR_HANDSHAKE');
    expect(err.message).toMatch(/wrong job key\?/);
  }, 30_000);
});
