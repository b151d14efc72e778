/**
 * datatype/: the datatype engine and the reduction ops (pure logic, imports
 * only util/). The API layer wraps it in the public Datatype and Op classes;
 * coll/ and device/ use the type maps, pack engine and reduceLocal.
 */
export {
  TYPE_CODES,
  TYPE_ALIASES,
  PREDEFINED_DATATYPES,
  ALL_TYPE_CODES,
  isTypeCode,
  typeSize,
  typeName,
  elementArrayOf,
  isIntegerType,
  isFloatType,
  isBigIntType,
  typeCodeOfView,
} from './predefined.ts';
export type { TypeName, TypeCode, ElementArray, ElementArrayConstructor } from './predefined.ts';

export {
  predefinedDescriptor,
  createContiguous,
  createVector,
  createHvector,
  createIndexed,
  createStruct,
  createSubarray,
  createResized,
  descriptorToString,
} from './descriptor.ts';
export type {
  TypeDescriptor,
  DescriptorKind,
  PredefinedDescriptor,
  ContiguousDescriptor,
  VectorDescriptor,
  HvectorDescriptor,
  IndexedDescriptor,
  StructDescriptor,
  SubarrayDescriptor,
  ResizedDescriptor,
} from './descriptor.ts';

export { encodeDescriptor, decodeDescriptor } from './descriptor-codec.ts';

export { typeInfoOf, typeMapOf, MAX_TYPE_BLOCKS } from './type-map.ts';
export type { TypeInfo, TypeMap } from './type-map.ts';

export { packedSize, packInto, unpackFrom, packRange, unpackRange, contiguousView, packToNew } from './pack.ts';

export { DatatypeRecord, predefinedRecord, checkUsable, checkConstructible } from './record.ts';

export { UNDEFINED, resolveBuffer, bytesOfView, spanBytes, maxCount, countItems, countElements } from './buf-spec.ts';
export type { ResolvedBuffer } from './buf-spec.ts';

export { OP_CODES, FIRST_USER_OP_CODE, ALL_OP_CODES, isOpCode, opName, isLocOp, isOpAllowed, checkOp } from './ops.ts';
export type { OpName, OpCode } from './ops.ts';

export { kernelFor } from './kernels.ts';
export type { Kernel } from './kernels.ts';

export { reduceLocal, byteReducer, alignedView, copyElements } from './reduce-local.ts';
export { reduceValues } from './reduce-values.ts';
export type { LocPair } from './reduce-values.ts';
export { createUserOp, checkUserOp, applyUserOp, applyUserOpValues, describeKind } from './user-op.ts';
export type { UserFunction, UserOp } from './user-op.ts';
