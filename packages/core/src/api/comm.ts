/**
 * Comm: the public communicator. Layers: Pt2ptComm (point-to-point) <-
 * CollComm (collectives) <- Comm (communicator management: dup, split,
 * create, createGroup, group, free).
 */
import { CollComm } from './coll-comm.ts';

export class Comm extends CollComm {}
