/**
 * What a device checks of a frame from another process before it acts on it (issue 35). The
 * transport has proved that the peer holds the job key and bounded what it may send unasked; the
 * header's other fields reach the device as the peer wrote them, and the device uses them as
 * indices: endpoints pick a matching queue, request slots (aux) pick the send a SYNC_ACK or a CTS
 * answers and the receive rendezvous data fills. A field that points nowhere, or at something that
 * does not wait for this frame, would crash the rank, complete someone else's request or send
 * bytes of the shared arena to the peer; instead the device takes it for a protocol error of that
 * peer (DeviceWiring.protocolError, device-wiring.ts), as the transport does for a frame it refuses.
 *
 * Pure: it reads the request table's words and returns the fault as text, or null.
 */
import { FRAME_KIND, type FrameHeader } from '../transport/index.ts';
import { FLAG, KIND, SLOT, SLOT_WORDS, STATE } from './request-table.ts';

/** What the check needs of the device that received the frame. */
export interface FrameCheckContext {
  /** the receiving process */
  readonly process: number;
  readonly endpointsPerProcess: number;
  /** the request table's words (request-table.ts) and its slot count */
  readonly words: Int32Array;
  readonly slots: number;
}

const KIND_NAMES: Record<number, string> = {
  [FRAME_KIND.EAGER]: 'EAGER',
  [FRAME_KIND.EAGER_SYNC]: 'EAGER_SYNC',
  [FRAME_KIND.SYNC_ACK]: 'SYNC_ACK',
  [FRAME_KIND.RNDV_RTS]: 'RNDV_RTS',
  [FRAME_KIND.RNDV_CTS]: 'RNDV_CTS',
  [FRAME_KIND.RNDV_DATA]: 'RNDV_DATA',
  [FRAME_KIND.CONTROL]: 'CONTROL',
  [FRAME_KIND.CANCEL_SEND]: 'CANCEL_SEND',
  [FRAME_KIND.CANCEL_ACK]: 'CANCEL_ACK',
  [FRAME_KIND.RMA]: 'RMA',
};

function isEndpointOf(endpoint: number, process: number, endpointsPerProcess: number): boolean {
  return Math.floor((endpoint >>> 0) / endpointsPerProcess) === process;
}

/** Slot `s` exists, has kind `kind` and is pending (neither free nor completed). */
function isPendingSlot(s: number, kind: number, c: FrameCheckContext): boolean {
  if (s >>> 0 >= c.slots) return false;
  const b = s * SLOT_WORDS;
  return c.words[b + SLOT.KIND] === kind && c.words[b + SLOT.STATE] === STATE.PENDING;
}

/**
 * The reason frame `h` from process `src` cannot be acted on, or null when it can. CONTROL frames
 * are not judged here: their handlers check their own fields (ReaderRoutes.onControl).
 */
export function peerFrameFault(src: number, h: FrameHeader, c: FrameCheckContext): string | null {
  const name = KIND_NAMES[h.kind];
  if (name === undefined) return `a frame of unknown kind ${h.kind}`;
  if (h.kind === FRAME_KIND.CONTROL) return null;
  const J = c.endpointsPerProcess;
  if (!isEndpointOf(h.srcEndpoint, src, J)) return `a ${name} frame from endpoint ${h.srcEndpoint >>> 0}, which is not one of process ${src}'s`;
  if (!isEndpointOf(h.dstEndpoint, c.process, J)) return `a ${name} frame to endpoint ${h.dstEndpoint >>> 0}, which is not one of this process's (${c.process})`;
  switch (h.kind) {
    case FRAME_KIND.SYNC_ACK:
    case FRAME_KIND.RNDV_CTS:
      if (!isPendingSlot(h.aux, KIND.SEND, c)) return `a ${name} frame for request slot ${h.aux >>> 0}, which is no pending send`;
      return null;
    case FRAME_KIND.CANCEL_ACK:
      // Only a send whose cancel this process asked for (its aux in a CANCEL_SEND is a key the receiver compares, never an index).
      if (!isPendingSlot(h.aux, KIND.SEND, c) || (c.words[h.aux * SLOT_WORDS + SLOT.FLAGS]! & FLAG.CANCEL_ASKED) === 0) {
        return `a CANCEL_ACK frame for request slot ${h.aux >>> 0}, which is no send waiting for a cancel`;
      }
      return null;
    case FRAME_KIND.RNDV_DATA: {
      const s = h.aux;
      if (!isPendingSlot(s, KIND.RECV, c) || (c.words[s * SLOT_WORDS + SLOT.FLAGS]! & FLAG.RNDV) === 0) {
        return `a RNDV_DATA frame for request slot ${s >>> 0}, which is no receive waiting for rendezvous data`;
      }
      const b = s * SLOT_WORDS;
      if (!isEndpointOf(c.words[b + SLOT.ST_SOURCE]!, src, J)) return `a RNDV_DATA frame for request slot ${s}, which waits for data from another process`;
      const announced = c.words[b + SLOT.ST_COUNT]! >>> 0;
      if (h.payloadLength > announced) return `a RNDV_DATA frame of ${h.payloadLength} bytes for a message announced with ${announced}`;
      return null;
    }
    default:
      return null;
  }
}
