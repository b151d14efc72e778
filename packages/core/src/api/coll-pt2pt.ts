/**
 * CollPt2pt (coll/pt2pt.ts) over a communicator's collective context: the only
 * way the collective algorithms reach the device. The same machinery as the
 * group collectives (comm/group-pt2pt.ts), over the communicator's members.
 */
import { GroupPt2pt } from '../comm/index.ts';
import { CTX_COLL, type Pt2ptComm } from './pt2pt-comm.ts';
import { runtime } from '../runtime/index.ts';

export class CommCollPt2pt extends GroupPt2pt {
  /** The API call these messages serve: mismatch errors name it (coll/mismatch.ts). */
  readonly call: string;

  /** @param root the collective's root (-1: none), which a mismatch error names */
  constructor(comm: Pt2ptComm, call: string, root = -1) {
    // Every communicator's collective context takes the device's byte-view entries (GroupPt2pt), derived
    // ones too: a Cartesian communicator's neighbour exchange takes the lean route as COMM_WORLD's does.
    super(runtime(call).device, comm._endpoints, comm._me(call), comm._ctx + CTX_COLL, call, true, comm.name, root);
    this.call = call;
  }
}
