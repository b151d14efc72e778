/**
 * The warm-up at init (issue 15, docs/adr/0016): while a rank waits for the
 * wire-up fence, it runs the transport's own per-turn path — queue frames,
 * one flush per turn, a socket write, a read, the frame parser — so that V8
 * has compiled those functions (and Node's writeGeneric, afterWriteTick,
 * nextTick, onStreamRead that they call) before the first real message.
 * docs/PERFORMANCE.md 4.11 found that these functions run once per turn of
 * the event loop, not once per message, and so reach TurboFan only after
 * some 2,500 iterations of a real program; 4.12 measures the warm-up.
 *
 * Isolation (why it cannot disturb the job): the warm-up builds a SECOND,
 * private transport from the same factory, as a job of one process with a
 * random job key, and sends only to itself. Its frames never reach the
 * device, the match queues or MPI.stats (its handlers are its own), its
 * listener is known to nobody else and refuses any other key, and it is
 * destroyed before init returns. It listens on 127.0.0.1 only (a same-host
 * transport then talks over its Unix socket, as same-host ranks do).
 *
 * Turns: each turn sends FRAMES_PER_TURN frames (0 and 8 payload bytes, as
 * small messages are) and the next turn starts when the last of them has
 * been delivered, so one turn is one write and one read, like one iteration
 * of a rank that exchanges with a neighbour.
 */
import { randomBytes } from 'node:crypto';
import type { FrameHeader, Transport, TransportFactory, TransportLog } from '../transport/index.ts';

/** Frames per turn: the neighbor-rate pattern's 12 messages per direction. */
const FRAMES_PER_TURN = 12;
/** EAGER (transport/interface.ts FRAME_KIND): only the private handlers below ever see it. */
const KIND_EAGER = 1;

function noop(): void {}

const silentLog: TransportLog = { debug() {}, info() {}, warn() {}, error() {} };

/** A running warm-up. */
export interface WarmUp {
  /** Turns done so far. */
  readonly turns: () => number;
  /** Resolves once `turns` turns are done, or at once after stop(); the private transport is then destroyed. */
  readonly done: Promise<void>;
  /** Ends the warm-up after the current turn. */
  stop(): void;
}

/**
 * Starts warming up the transport that `factory` makes, for `turns` turns
 * (see the header). Never rejects: a warm-up that cannot run (no listener,
 * a socket error) just ends, since it is only an optimisation.
 */
export function startWarmUp(factory: TransportFactory, turns: number, channelCount: number): WarmUp {
  let done = 0;
  let delivered = 0;
  let isStopped = false;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const header: FrameHeader = { kind: KIND_EAGER, flags: 0, contextId: 0, srcEndpoint: 0, dstEndpoint: 0, tag: 0, seq: 0, aux: 0, aux2: 0, payloadLength: 0 };
  const payload = new Uint8Array(8);
  let transport: Transport | null = null;
  // The private transport's sockets are unref'd (interface.ts); this keeps the loop alive while it runs.
  const keepAlive = setInterval(noop, 1 << 30);
  const end = (): void => {
    if (transport !== null) transport.destroy();
    transport = null;
    clearInterval(keepAlive);
    finish();
  };
  const sendTurn = (): void => {
    const t = transport!;
    // One frame per channel of the job and then some: every socket of a real rank gets written.
    for (let i = 0; i < FRAMES_PER_TURN; i++) {
      header.tag = i;
      header.dstEndpoint = i % channelCount;
      header.seq = done;
      t.send(0, header, (i & 1) === 0 ? null : payload, -1);
    }
  };
  try {
    transport = factory({
      process: 0,
      processCount: 1,
      channelCount,
      jobKey: randomBytes(16).toString('hex'),
      // Loopback whatever the job's interface: the warm-up opens no port that another host could reach.
      listenHost: '127.0.0.1',
      log: silentLog,
      handlers: {
        onDeliver: () => {
          if (++delivered < FRAMES_PER_TURN) return;
          delivered = 0;
          if (++done >= turns || isStopped) end();
          else sendTurn();
        },
        onSent: () => undefined,
        onPeerLost: () => end(),
        payloadTarget: () => null,
      },
    });
  } catch {
    clearInterval(keepAlive);
    finish();
    return { turns: () => 0, done: finished, stop: () => undefined };
  }
  if (turns <= 0) end();
  else {
    transport.listen().then((address) => {
      if (transport === null) return;
      if (isStopped) {
        end();
        return;
      }
      transport.start([address]);
      sendTurn();
    }, end);
  }
  return {
    turns: () => done,
    done: finished,
    stop: () => {
      isStopped = true;
      // Before the first turn began (still listening), or already over: end now; otherwise after this turn.
      if (done === 0 && delivered === 0) end();
    },
  };
}
