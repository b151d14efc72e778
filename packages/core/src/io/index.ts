/**
 * io/: the pure parts of MPI-IO (API.md Part 2 "Parallel I/O (File)"):
 * access modes, the mapping of node:fs errors to MPI's file error classes,
 * file views flattened into byte runs, the two-phase plan of collective
 * I/O, the data sieving plan of independent accesses and the external32
 * conversion. Imports datatype/ and util/ only; the File class and its
 * node:fs and communicator calls are in api/file*.ts.
 */
export {
  MODE_RDONLY, MODE_RDWR, MODE_WRONLY, MODE_CREATE, MODE_EXCL, MODE_DELETE_ON_CLOSE, MODE_UNIQUE_OPEN, MODE_APPEND, MODE_SEQUENTIAL,
  SEEK_SET, SEEK_CUR, SEEK_END, checkAmode, openFlags, isReadable, isWritable,
} from './amode.ts';
export { fileError } from './fs-error.ts';
export { makeViewMap, byteViewMap, fileByteOf, runsOf } from './view-map.ts';
export type { ViewMap, Runs } from './view-map.ts';
export { fileDomains, splitByDomain, coalesce, isInterleaved, roundWindows, wantsTwoPhase, LARGE_PIECE_BYTES, type AccessShape } from './two-phase.ts';
export type { DomainPieces, Piece, Extent, Rounds } from './two-phase.ts';
export { planSieve, gatherPieces, scatterPieces, piecesBytes } from './sieve.ts';
export type { SieveExtent } from './sieve.ts';
export { swapPacked } from './external32.ts';
