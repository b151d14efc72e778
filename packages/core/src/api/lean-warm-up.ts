/**
 * Init's warm-up of the lean path (setting leanWarmup, docs/adr/0020-lean-common-path.md section 8):
 * before init returns, each rank runs the neighbour-rate exchange with its ring neighbours over the
 * real connections, through the very functions a program calls (COMM_WORLD's Irecv and Isend,
 * Request.waitall), so that V8 has compiled them, with the shapes a program's calls have, before the
 * program's first message. Measured: the first 1,000 iterations of the neighbour-rate kernel then
 * pay for compiling the program's own loop, not tsmpi's.
 *
 * Why it cannot disturb the program: each rank receives from its left neighbour exactly the messages
 * that neighbour sends it in the warm-up, on receives naming that source, and waits for all of them
 * before init returns. MPI's order per (source, communicator) puts every warm-up message before
 * anything the neighbour sends after its own init, so a receive of the warm-up can match only a
 * message of the warm-up, whatever tag the program uses; the program's messages that arrive early
 * wait, unmatched, for the program's receives. A link is used only where both ends published the
 * same number of iterations before the wire-up fence (a rank without lanes publishes 0), so
 * mismatched settings skip the warm-up instead of leaving a message behind. The messages and their
 * frames are taken out of MPI.stats afterwards.
 *
 * Each iteration also sends one message each way on COMM_WORLD's collective context through the
 * collectives' own send and receive (coll-pt2pt.ts), as a barrier or a small allreduce does: the
 * arrival path that the warm-up compiles serves both contexts, and without a collective message in
 * its feedback it was thrown away by the program's first barrier (docs/adr/0020 section 8). The
 * same ordering argument holds on that context.
 *
 * Then, inside init's tier-up window (runtime/tier-up.ts, with the small allreduce's warm-up), pairs of
 * ranks (0 and 1, 2 and 3, ...; the last rank of an odd job sits out) run blocking round trips, the
 * even rank Send then Recv, the odd one Recv then Send, as a ping-pong does (roundTripWarmUp): the
 * blocking calls' own code (the wait of pt2pt-comm.ts's `blocking`, a receive posted before its
 * message) is not what the exchange compiles, and a program's first 1,000 round trips ran at 1.6x their
 * later speed without it (docs/adr/0027-round-trip-warm-up.md). A pair is two ring neighbours whose
 * link both used for the exchange, so the ordering argument is the same: every round-trip message
 * from the partner follows its exchange messages and is received, on a receive naming the partner,
 * before init returns.
 */
import type { Device } from '../device/index.ts';
import { CommCollPt2pt } from './coll-pt2pt.ts';
import type { Pt2ptComm } from './pt2pt-comm.ts';
import { Request } from './request.ts';

/** Messages each way per iteration: the window of the neighbour-rate kernel (msgrate.ts). */
const WINDOW = 12;
/** Payload of every other message; the rest are empty, so both of the lean path's copy branches run. */
const PAYLOAD_BYTES = 8;
/** A tag in the range every program may use (the ordering argument above makes the choice free). */
const TAG = 0;

/** The ring neighbours a rank warms up with, and how many iterations (0: that direction is skipped). */
export interface WarmUpLinks {
  readonly left: number;
  readonly right: number;
  /** iterations receiving from `left` (both ends published the same count) */
  readonly fromLeft: number;
  /** iterations sending to `right` */
  readonly toRight: number;
}

/** The PMI key under which rank `rank` publishes its warm-up iterations before the fence. */
export function warmUpKey(rank: number): string {
  return `leanWarmup:${rank}`;
}

/** Which links to use, from this rank's count and the counts its neighbours published (null: none published). */
export function warmUpLinks(rank: number, size: number, mine: number, leftCount: number | null, rightCount: number | null): WarmUpLinks {
  const left = (rank + size - 1) % size;
  const right = (rank + 1) % size;
  return {
    left, right,
    fromLeft: mine > 0 && leftCount === mine ? mine : 0,
    toRight: mine > 0 && rightCount === mine ? mine : 0,
  };
}

/**
 * Runs the warm-up on `comm` (COMM_WORLD, bound to the lean path) and takes its messages out of
 * `device`'s counts. Resolves once every receive of it has completed. A failure of the job on the
 * way (a lost peer) ends it early without an error: the program's first call reports the failure.
 */
export async function leanWarmUp(comm: Pt2ptComm, device: Device, links: WarmUpLinks): Promise<void> {
  const iterations = Math.max(links.fromLeft, links.toRight);
  if (iterations === 0) return;
  const recvBufs = Array.from({ length: WINDOW }, () => new Uint8Array(PAYLOAD_BYTES));
  const payloads = [new Uint8Array(0), new Uint8Array(PAYLOAD_BYTES)];
  const reqs: Request<void>[] = [];
  const coll = new CommCollPt2pt(comm, 'init');
  let sent = 0;
  let bytesSent = 0;
  let received = 0;
  let bytesReceived = 0;
  try {
    for (let it = 0; it < iterations; it++) {
      reqs.length = 0;
      if (it < links.fromLeft) {
        for (let i = 0; i < WINDOW; i++) reqs.push(comm.Irecv(recvBufs[i]!, links.left, TAG));
      }
      if (it < links.toRight) {
        for (let i = 0; i < WINDOW; i++) {
          const data = payloads[i & 1]!;
          reqs.push(comm.Isend(data, links.right, TAG));
          sent++;
          bytesSent += data.length;
        }
      }
      const collIn = it < links.fromLeft ? coll.recv(links.left, TAG) : null;
      if (it < links.toRight) {
        await coll.send(links.right, TAG, payloads[1]!);
        sent++;
        bytesSent += PAYLOAD_BYTES;
      }
      await Request.waitall(reqs);
      if (collIn !== null) {
        await collIn;
        received += WINDOW + 1;
        bytesReceived += (WINDOW / 2 + 1) * PAYLOAD_BYTES;
      }
    }
  } catch {
    // The job is failing; the program's next call says so.
  } finally {
    device.uncount(sent, bytesSent, comm._endpoints[links.right]!, received, bytesReceived, comm._endpoints[links.left]!);
  }
}

/**
 * The partner of this rank in the round-trip warm-up: its right neighbour for an even rank, its left
 * for an odd one, where the exchange used that link (both ends published the same count); null for
 * the last rank of an odd job, a rank alone, or a link the exchange skipped.
 */
export function roundTripPartner(rank: number, size: number, links: WarmUpLinks): number | null {
  if (rank % 2 === 0) return rank + 1 < size && links.toRight > 0 ? links.right : null;
  return links.fromLeft > 0 ? links.left : null;
}

/**
 * Runs `iterations` blocking round trips with `partner` (roundTripPartner) through COMM_WORLD's Send
 * and Recv, the lower rank of the pair sending first, and takes their messages out of `device`'s
 * counts. A failure of the job on the way ends it early without an error, as in leanWarmUp.
 */
export async function roundTripWarmUp(comm: Pt2ptComm, device: Device, rank: number, partner: number, iterations: number): Promise<void> {
  const starts = rank < partner;
  const payloads = [new Uint8Array(0), new Uint8Array(PAYLOAD_BYTES)];
  const recvBuf = new Uint8Array(PAYLOAD_BYTES);
  let sent = 0;
  let bytes = 0;
  try {
    for (let it = 0; it < iterations; it++) {
      // Both copy branches of the lean path, as in the exchange: the sizes alternate, the same each way.
      const data = payloads[it & 1]!;
      if (starts) {
        await comm.Send(data, partner, TAG);
        await comm.Recv(recvBuf, partner, TAG);
      } else {
        await comm.Recv(recvBuf, partner, TAG);
        await comm.Send(data, partner, TAG);
      }
      sent++;
      bytes += data.length;
    }
  } catch {
    // The job is failing; the program's next call says so.
  } finally {
    const endpoint = comm._endpoints[partner]!;
    device.uncount(sent, bytes, endpoint, sent, bytes, endpoint);
  }
}
