/**
 * Comm.createIntercomm (API.md Part 2 "Intercommunicators"; MPI 4.0 7.6.2,
 * MPI_Intercomm_create), installed on Comm.prototype here (as
 * topology-create.ts installs the topology creations) because the class it
 * makes extends Comm.
 *
 * Steps: a context id over this communicator with the papers' allocator (its
 * collective context, the creation's sequence tag: as dup); the local leader
 * swaps [id, local endpoints] with the remote leader on peerComm's suffix-3
 * context with the user's tag (no user message on peerComm can match it);
 * the leader broadcasts the remote side over this communicator (same tag); a
 * remote group that shares a member with this one is ERR_COMM at every rank
 * (both sides see the same overlap), and the id goes back.
 */
import { allocateContextId, CONTEXT_SUFFIX, freeContextId, PeerPt2pt } from '../comm/index.ts';
import { bcastBytes } from '../coll/index.ts';
import { runtime } from '../runtime/index.ts';
import { ERR_COMM, ERR_RANK, ERR_TAG, mpiError } from '../util/index.ts';
import { describe } from './buffer.ts';
import { CommCollPt2pt } from './coll-pt2pt.ts';
import { Comm } from './comm.ts';
import { TAG_UB, UNDEFINED } from './constants.ts';
import { decodeSide, encodeSide, Intercomm } from './intercomm.ts';

export { Intercomm };

const CTX_BOOT = CONTEXT_SUFFIX.INTERCOMM_BOOT;

declare module './comm.ts' {
  interface Comm {
    /**
     * An intercommunicator between this communicator's group and another group (MPI_Intercomm_create).
     * Collective over this communicator and, through the leaders, the other group's.
     * @param localLeader the rank here that talks to the other group
     * @param peerComm a communicator holding both leaders (significant at the local leader only)
     * @param remoteLeader the other leader's rank in peerComm (significant at the local leader only)
     * @param tag 0..TAG_UB: the leaders' messages on peerComm (concurrent creations over one peerComm differ by tag)
     * @throws MPIError(ERR_RANK) for a bad leader; ERR_TAG for a bad tag; ERR_COMM when peerComm is not a live Comm or the groups overlap
     * @example const inter = await half.createIntercomm(0, MPI.COMM_WORLD, isLow ? size / 2 : 0, 7);
     */
    createIntercomm(localLeader: number, peerComm: Comm, remoteLeader: number, tag?: number): Promise<Intercomm>;
  }
}

function createIntercomm(this: Comm, localLeader: number, peerComm: Comm, remoteLeader: number, tag = 0): Promise<Intercomm> {
  const call = 'Comm.createIntercomm';
  const me = this._me(call);
  if (this.isInter) throw mpiError(ERR_COMM, call, `${this.name} is an intercommunicator: createIntercomm is called on an intracommunicator`);
  if (!Number.isInteger(localLeader) || localLeader < 0 || localLeader >= this.size) {
    throw mpiError(ERR_RANK, call, `localLeader ${String(localLeader)} is out of range for ${this.name} (size ${this.size}): expected 0..${this.size - 1}`);
  }
  if (!Number.isInteger(tag) || tag < 0 || tag > TAG_UB) throw mpiError(ERR_TAG, call, `tag ${String(tag)} is invalid: expected 0..${TAG_UB} (TAG_UB)`);
  const isLeader = this.rank === localLeader;
  let peerEndpoint = -1;
  let peerCtx = -1;
  if (isLeader) {
    if (!(peerComm instanceof Comm)) throw mpiError(ERR_COMM, call, `peerComm is ${describe(peerComm)}: expected a Comm holding both leaders`);
    peerComm._me(call);
    if (peerComm.isInter) throw mpiError(ERR_COMM, call, `peerComm ${peerComm.name} is an intercommunicator: expected an intracommunicator`);
    if (!Number.isInteger(remoteLeader) || remoteLeader < 0 || remoteLeader >= peerComm.size) {
      throw mpiError(ERR_RANK, call, `remoteLeader ${String(remoteLeader)} is out of range for ${peerComm.name} (size ${peerComm.size}): expected 0..${peerComm.size - 1}`);
    }
    if (remoteLeader === peerComm.rank) throw mpiError(ERR_RANK, call, `remoteLeader ${remoteLeader} is the caller itself in ${peerComm.name}: the two groups must be disjoint`);
    peerEndpoint = peerComm._endpoints[remoteLeader]!;
    peerCtx = peerComm._ctx;
  }
  const c = this._beginCreation(call);
  const [coll, priority, wtag] = this._creationCollectives(call);
  const pt = new CommCollPt2pt(this, call);
  const local = this._endpoints;
  const dev = runtime(call).device;
  return this._collBlocking(call, (async () => {
    const ctx = await allocateContextId(c.state, this._ctx, priority, coll, c.options);
    let remote: { ctx: number; endpoints: Int32Array };
    try {
      let got: Uint8Array | null = null;
      if (isLeader) {
        const boot = new PeerPt2pt(dev, me, 0, Int32Array.of(peerEndpoint), Int32Array.of(peerCtx + CTX_BOOT), peerCtx + CTX_BOOT, call);
        [got] = await Promise.all([boot.recv(0, tag), boot.send(0, tag, encodeSide(ctx, local))]);
      }
      remote = decodeSide(await bcastBytes(pt, wtag, got, localLeader));
    } catch (e) {
      freeContextId(c.state, ctx);
      throw e;
    }
    for (const e of remote.endpoints) {
      if (this._rankOfEndpoint(e) !== UNDEFINED) {
        freeContextId(c.state, ctx);
        throw mpiError(ERR_COMM, call, `the remote group shares endpoint ${e} with ${this.name}: the two groups of an intercommunicator must be disjoint`);
      }
    }
    return Comm._makeWith(c, `${this.name}.inter`, ctx, local, null, (n, x, e) => new Intercomm(n, x, e, remote.endpoints, remote.ctx)) as Intercomm;
  })());
}

Object.defineProperty(Comm.prototype, 'createIntercomm', { value: createIntercomm, writable: true, configurable: true, enumerable: false });
