export { UNDEFINED, PROC_NULL, IDENT, CONGRUENT, SIMILAR, UNEQUAL } from './constants.ts';
export { Group } from './group.ts';
export type { RankRange } from './group.ts';
export {
  CONTEXT_SUFFIX, CONTEXT_SUFFIX_BITS, MAX_MASK_WORDS, RESERVED_PREFIXES, PREDEFINED_CONTEXT_ID,
  contextPrefix, contextIdOfPrefix, withSuffix, contextWord, contextBit, isReservedContextId,
} from './context-id-layout.ts';
export type { ContextSuffix } from './context-id-layout.ts';
export { ContextIdState, DEFAULT_EAGER_WORDS, NO_PRIORITY } from './context-id-mask.ts';
export type { ContextIdStateOptions } from './context-id-mask.ts';
export { ALLOCATION_PHASE, ContextIdAllocation, stepAllocation, abandonAllocation } from './context-id-stages.ts';
export type { AllocationPhase, AllocationStep, ContextIdCollectives, ContextIdOptions } from './context-id-stages.ts';
export { allocateContextId, freeContextId, contextIdsInUse, contextIdOptions, ContextIdPoller } from './context-id.ts';
export { GroupPt2pt } from './group-pt2pt.ts';
export { PeerPt2pt } from './peer-pt2pt.ts';
export { GROUP_COLL_TAG_BASE, groupCollTag, collectivePriorityTag, contextIdCollectives } from './context-id-collectives.ts';
export { encodeSplitEntry, decodeSplitEntry, splitRanks } from './split.ts';
export type { SplitEntry } from './split.ts';
export { computeDims, gridSize, cartRank, cartCoords, wrapCoords, cartShift, cartSub, cartNeighbors, cartSendOrder } from './cart.ts';
export { checkGraph, graphNeighbors, noticesOf, adjacencyOf } from './graph.ts';
export type { DistEdge, EdgeNotice } from './graph.ts';
export { encodeTopology, decodeTopology, neighborLists, reorderKeys } from './topology.ts';
export type { Topology, TopologyKind, CartTopology, GraphTopology, DistGraphTopology, NeighborLists } from './topology.ts';
