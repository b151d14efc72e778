/**
 * File access modes and seek origins (MPI 4.0 14.2.1 and 14.4.2; MPICH's
 * values), the check of an amode at File.open, and the node:fs open flags an
 * amode maps to.
 *
 * An amode is a bitwise OR of MODE_* values. Valid: exactly one of RDONLY,
 * WRONLY, RDWR; CREATE and EXCL not with RDONLY; SEQUENTIAL not with RDWR;
 * no other bits (MPI 4.0 14.2.1, the errors ROMIO's MPI_File_open raises).
 */
import { constants as fsConstants } from 'node:fs';
import { ERR_AMODE, mpiError } from '../util/index.ts';

export const MODE_RDONLY = 2;
export const MODE_RDWR = 8;
export const MODE_WRONLY = 4;
export const MODE_CREATE = 1;
export const MODE_EXCL = 64;
export const MODE_DELETE_ON_CLOSE = 16;
export const MODE_UNIQUE_OPEN = 32;
export const MODE_APPEND = 128;
export const MODE_SEQUENTIAL = 256;

export const SEEK_SET = 600;
export const SEEK_CUR = 602;
export const SEEK_END = 604;

const ALL_MODES = MODE_RDONLY | MODE_RDWR | MODE_WRONLY | MODE_CREATE | MODE_EXCL | MODE_DELETE_ON_CLOSE | MODE_UNIQUE_OPEN | MODE_APPEND | MODE_SEQUENTIAL;

/**
 * Checks an amode for File.open.
 * @throws MPIError(ERR_AMODE) naming what is wrong and what is allowed
 */
export function checkAmode(amode: unknown, call: string): number {
  if (typeof amode !== 'number' || !Number.isInteger(amode) || amode < 0) {
    throw mpiError(ERR_AMODE, call, `amode is ${String(amode)}: expected a bitwise OR of MPI.MODE_* values`);
  }
  if ((amode & ~ALL_MODES) !== 0) throw mpiError(ERR_AMODE, call, `amode ${amode} has bits ${amode & ~ALL_MODES} that are no MPI.MODE_* value`);
  const access = (amode & MODE_RDONLY ? 1 : 0) + (amode & MODE_WRONLY ? 1 : 0) + (amode & MODE_RDWR ? 1 : 0);
  if (access !== 1) throw mpiError(ERR_AMODE, call, `amode ${amode} has ${access} of MODE_RDONLY, MODE_WRONLY, MODE_RDWR: expected exactly one`);
  if (amode & MODE_RDONLY && amode & (MODE_CREATE | MODE_EXCL)) {
    throw mpiError(ERR_AMODE, call, `amode ${amode}: MODE_CREATE and MODE_EXCL are not allowed with MODE_RDONLY`);
  }
  if (amode & MODE_RDWR && amode & MODE_SEQUENTIAL) throw mpiError(ERR_AMODE, call, `amode ${amode}: MODE_SEQUENTIAL is not allowed with MODE_RDWR`);
  return amode;
}

/**
 * The node:fs flags for opening with `amode`. `first` is the process that creates the file
 * (CREATE, EXCL); the others open what it created, without them.
 */
export function openFlags(amode: number, first: boolean): number {
  const c = fsConstants;
  let flags = amode & MODE_RDONLY ? c.O_RDONLY : amode & MODE_WRONLY ? c.O_WRONLY : c.O_RDWR;
  if (first && amode & MODE_CREATE) flags |= c.O_CREAT;
  if (first && amode & MODE_EXCL) flags |= c.O_EXCL;
  return flags;
}

/** True when the mode allows reading. */
export function isReadable(amode: number): boolean {
  return (amode & MODE_WRONLY) === 0;
}

/** True when the mode allows writing. */
export function isWritable(amode: number): boolean {
  return (amode & MODE_RDONLY) === 0;
}
