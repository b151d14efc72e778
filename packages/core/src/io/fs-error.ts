/**
 * Turns a node:fs failure into MPI's file error class (MPI 4.0 14.7, Table
 * 14.4), keeping the path and the OS reason in the message and the Node error
 * as the cause: "MPI_ERR_NO_SUCH_FILE: File.open: /data/x: ENOENT (no such
 * file or directory)". No raw Node error reaches a user (STYLE rule 17).
 */
import {
  ERR_ACCESS, ERR_BAD_FILE, ERR_FILE_EXISTS, ERR_FILE_IN_USE, ERR_IO, ERR_NO_SPACE, ERR_NO_SUCH_FILE, ERR_READ_ONLY, MPIError, mpiError,
} from '../util/index.ts';

/** OS error code -> MPI error class; anything else is ERR_IO. */
const CLASS_OF_CODE: Record<string, number> = {
  ENOENT: ERR_NO_SUCH_FILE,
  EEXIST: ERR_FILE_EXISTS,
  EACCES: ERR_ACCESS,
  EPERM: ERR_ACCESS,
  ENOSPC: ERR_NO_SPACE,
  EDQUOT: ERR_NO_SPACE,
  EFBIG: ERR_NO_SPACE,
  EROFS: ERR_READ_ONLY,
  EISDIR: ERR_BAD_FILE,
  ENOTDIR: ERR_BAD_FILE,
  ENAMETOOLONG: ERR_BAD_FILE,
  EINVAL: ERR_BAD_FILE,
  ELOOP: ERR_BAD_FILE,
  EBUSY: ERR_FILE_IN_USE,
  ETXTBSY: ERR_FILE_IN_USE,
};

/** The MPIError for a node:fs failure `e` of `call` on `path` (an MPIError passes through). */
export function fileError(e: unknown, call: string, path: string): MPIError {
  if (e instanceof MPIError) return e;
  const code = typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string' ? (e as { code: string }).code : '';
  const reason = code === '' ? String(e) : `${code} (${osText(e as Error, code)})`;
  return mpiError(CLASS_OF_CODE[code] ?? ERR_IO, call, `${path}: ${reason}`, e);
}

/** "no such file or directory" out of Node's "ENOENT: no such file or directory, open '/x'". */
function osText(e: Error, code: string): string {
  const m = /^[A-Z]+: ([^,]+)/.exec(e.message ?? '');
  return m === null ? code : m[1]!;
}
