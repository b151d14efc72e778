// The handshake deadline of a wired socket (socket-events.ts): it fires once when the handshake
// outlasts it, never once disarmed, and it is not Node's socket timeout, which Node refreshes on
// every read and write of the socket's life.
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { endHandshakeTimeout, wireSocket, type SocketEventSink } from './socket-events.ts';

class TimeoutCount implements SocketEventSink {
  timeouts = 0;
  _onData(): void {}
  _onEnd(): void {}
  _onError(): void {}
  _onClose(): void {}
  _onTimeout(): void {
    this.timeouts++;
  }
}

/** Node's own timer of a socket (socket.setTimeout), which its reads and writes refresh. */
function nodeSocketTimer(socket: net.Socket): unknown {
  const key = Object.getOwnPropertySymbols(socket).find((s) => s.description === 'timeout');
  return key === undefined ? undefined : (socket as unknown as Record<symbol, unknown>)[key];
}

const sockets: net.Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
});

describe('the handshake deadline', () => {
  it('reports one timeout when the handshake outlasts it', async () => {
    const socket = new net.Socket();
    sockets.push(socket);
    const sink = new TimeoutCount();
    wireSocket(socket, sink, 20, 60_000);
    await sleep(120);
    expect(sink.timeouts).toBe(1);
  });

  it('reports none once the handshake ended, and leaves Node no socket timer to refresh per message', async () => {
    const socket = new net.Socket();
    sockets.push(socket);
    const sink = new TimeoutCount();
    wireSocket(socket, sink, 20, 60_000);
    endHandshakeTimeout(socket);
    await sleep(120);
    expect(sink.timeouts).toBe(0);
    expect(nodeSocketTimer(socket) ?? null).toBeNull();
  });
});
