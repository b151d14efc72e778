// Over 600 lines: one class holding the whole MPI_File surface, a method per MPI call; the mechanisms are in io/ and file-*.ts.
/**
 * The public File (API.md Part 2 "Parallel I/O (File)"; MPI 4.0 chapter 14;
 * mpi4py's File for the spellings): open / close / delete, the view, the
 * individual and shared file pointers, sizes, atomicity, hints and the error
 * handler, and every data access in its explicit-offset, individual-pointer,
 * shared-pointer, collective and nonblocking forms.
 *
 * A File holds a private dup of the communicator it was opened on (its
 * collectives and the shared pointer's messages never meet the user's), one
 * node:fs FileHandle per process, and the view flattened into byte runs
 * (io/view-map.ts). The accesses are api/file-access.ts (independent) and
 * api/file-collective.ts (two-phase); the shared pointer is
 * api/file-shared-pointer.ts, the split collectives' state api/file-split.ts. Collective data accesses of one File run one
 * after another in call order (a chain), so their nonblocking forms issue the
 * communicator's collectives in the same order on every process.
 * A File's default error handler is ERRORS_RETURN (MPI 4.0 14.7).
 */
import { fstatSync } from 'node:fs';
import { unlink, type FileHandle } from 'node:fs/promises';
import {
  MODE_APPEND, MODE_DELETE_ON_CLOSE, SEEK_CUR, SEEK_END, SEEK_SET, byteViewMap, checkAmode, fileByteOf, fileError, isReadable, isWritable,
  makeViewMap, runsOf, type ViewMap,
} from '../io/index.ts';
import {
  ERR_ACCESS, ERR_ARG, ERR_BAD_FILE, ERR_COMM, ERR_FILE, ERR_READ_ONLY, ERR_TYPE, ERR_UNSUPPORTED_DATAREP, MPIError, mpiError,
} from '../util/index.ts';
import { runtimeOrNull } from '../runtime/index.ts';
import { checkDatatype, describe, type BufSpec, type ResolvedBuf } from './buffer.ts';
import { Comm } from './comm.ts';
import { BYTE, type Datatype } from './datatype.ts';
import { ERRORS_RETURN, checkErrhandler, invokeErrhandler, routeErrors, type Errhandler } from './errhandler.ts';
import type { CollectiveAccess } from './file-collective.ts';
import type { SharedPointer } from './file-shared-pointer.ts';
import type { SplitCollective } from './file-split.ts';
import type { Group } from './group.ts';
import { Info, infoEntries } from './info.ts';
import { abort } from './abort.ts';
import type { Request } from './request.ts';
import type { Status } from './status.ts';

export {
  MODE_RDONLY, MODE_WRONLY, MODE_RDWR, MODE_CREATE, MODE_EXCL, MODE_APPEND, MODE_DELETE_ON_CLOSE, MODE_UNIQUE_OPEN, MODE_SEQUENTIAL,
  SEEK_SET, SEEK_CUR, SEEK_END,
} from '../io/index.ts';

/**
 * The accesses, the two-phase code, the opening and the shared pointer, loaded by the first File.open
 * (File.delete needs none of them): a program that opens no file does not load them (issue 38, start-up and memory).
 * Every File exists only after its open, so its methods find them loaded.
 */
type FileParts = typeof import('./file-access.ts') & typeof import('./file-collective.ts') & typeof import('./file-open.ts') & typeof import('./file-shared-pointer.ts')
  & typeof import('./file-split.ts');
let parts: FileParts | null = null;

async function loadParts(): Promise<FileParts> {
  if (parts === null) {
    const [access, collective, open, pointer, split] = await Promise.all([
      import('./file-access.ts'), import('./file-collective.ts'), import('./file-open.ts'), import('./file-shared-pointer.ts'), import('./file-split.ts'),
    ]);
    parts = { ...access, ...collective, ...open, ...pointer, ...split };
  }
  return parts;
}

/** The parts, for the methods of an open File. */
function loaded(): FileParts {
  return parts!;
}

/** An assertion's call target must be a declared name (TypeScript): file-access.ts's checkOffset through one. */
const checkOffset: FileParts['checkOffset'] = (offset, call) => loaded().checkOffset(offset, call);

/** ROMIO's default collective buffer: 16 MiB. */
const DEFAULT_CB_BUFFER_SIZE = 16 * 1024 * 1024;
/** ROMIO's default data sieving buffers: 4 MiB for reads, 512 KiB for writes. */
const DEFAULT_IND_RD_BUFFER_SIZE = 4 * 1024 * 1024;
const DEFAULT_IND_WR_BUFFER_SIZE = 512 * 1024;
const MODES = ['enable', 'disable', 'automatic'];
const MODE_HINTS = new Set(['romio_cb_read', 'romio_cb_write', 'romio_ds_read', 'romio_ds_write']);
const SIZE_HINTS = new Set(['cb_buffer_size', 'cb_nodes', 'ind_rd_buffer_size', 'ind_wr_buffer_size']);

type Datarep = 'native' | 'external32';
type Kind = 'read' | 'write';

/** An open file of a group of processes (MPI_File). @example const f = await MPI.File.open(MPI.COMM_WORLD, '/tmp/x', MPI.MODE_CREATE | MPI.MODE_RDWR); */
export class File implements CollectiveAccess {
  /** @internal the private dup of the communicator the file was opened on */
  readonly _comm: Comm;
  /** @internal */
  readonly _fh: FileHandle;
  /** the path the file was opened with */
  readonly path: string;
  /** the access mode of File.open (MPI_File_get_amode) */
  readonly amode: number;
  /** @internal */
  _view: ViewMap = byteViewMap();
  /** @internal */
  _datarep: Datarep = 'native';
  /** @internal */
  _aggregators: number[];
  /** @internal */
  _cbBufferSize = DEFAULT_CB_BUFFER_SIZE;
  #rdSieveSize = DEFAULT_IND_RD_BUFFER_SIZE;
  #wrSieveSize = DEFAULT_IND_WR_BUFFER_SIZE;
  #etype: Datatype = BYTE;
  #filetype: Datatype = BYTE;
  /** the individual file pointer, in etypes of the view */
  #position = 0;
  #pointer: SharedPointer;
  #split: SplitCollective;
  #hints = new Map<string, string>();
  #atomic = false;
  #closed = false;
  #errhandler: Errhandler = ERRORS_RETURN;
  /** collective data accesses, one after another in call order */
  #chain: Promise<unknown> = Promise.resolve();

  /** @internal Use File.open. */
  constructor(comm: Comm, fh: FileHandle, path: string, amode: number, aggregators: number[], initialPointer: number) {
    this._comm = comm;
    this._fh = fh;
    this.path = path;
    this.amode = amode;
    this._aggregators = aggregators;
    this.#pointer = new (loaded().SharedPointer)(comm, initialPointer);
    this.#split = new (loaded().SplitCollective)(path);
    this.#position = initialPointer;
  }

  get name(): string {
    return `File(${this.path})`;
  }

  /**
   * Opens `path` on every process of `comm` (MPI_File_open; collective). Hints of `info`:
   * cb_nodes, cb_buffer_size, romio_cb_read, romio_cb_write, romio_ds_read, romio_ds_write,
   * ind_rd_buffer_size, ind_wr_buffer_size.
   * @throws MPIError(ERR_AMODE) for a bad amode; ERR_NO_SUCH_FILE, ERR_FILE_EXISTS, ERR_ACCESS, ERR_BAD_FILE,
   *   ERR_READ_ONLY, ERR_IO with the path and the OS reason (every process gets the error)
   * @example const f = await MPI.File.open(MPI.COMM_WORLD, 'out.dat', MPI.MODE_CREATE | MPI.MODE_WRONLY);
   */
  static async open(comm: Comm, path: string, amode: number, info?: Info): Promise<File> {
    const call = 'File.open';
    if (!(comm instanceof Comm) || comm.isInter) throw mpiError(ERR_COMM, call, `comm is ${describe(comm)}: expected an intracommunicator`);
    if (typeof path !== 'string' || path.length === 0) throw mpiError(ERR_BAD_FILE, call, `path is ${describe(path)}: expected a non-empty string`);
    checkAmode(amode, call);
    const hints = infoEntries(info, call) ?? [];
    // Bad hints fail here, before anything is created.
    for (const [k, v] of hints) checkHint(k, v, call);
    await loadParts();
    const fcomm = await comm.dup();
    let fh: FileHandle | null = null;
    try {
      // The first process creates (CREATE, EXCL); the others open what it made, so EXCL fails once, for everybody.
      let mine: MPIError | null = null;
      if (fcomm.rank === 0) [fh, mine] = await loaded().openOne(path, amode, true, call);
      const first = await fcomm.bcast(mine === null ? null : mine.toWire());
      if (first !== null) throw MPIError.fromWire(first);
      if (fcomm.rank !== 0) [fh, mine] = await loaded().openOne(path, amode, false, call);
      const all = await fcomm.allgather(mine === null ? null : mine.toWire());
      const failed = all.findIndex((w) => w !== null);
      if (failed >= 0) throw mine ?? mpiError(all[failed]!.errorClass, call, `rank ${failed} could not open the file: ${all[failed]!.message}`);
      const aggregators = await loaded().chooseAggregators(fcomm, hints);
      let start = 0;
      if (amode & MODE_APPEND) start = (await fh!.stat()).size;
      const f = new File(fcomm, fh!, path, amode, aggregators, start);
      f.#applyHints(hints, call);
      return f;
    } catch (e) {
      await fh?.close().catch(() => undefined);
      fcomm.free();
      throw e;
    }
  }

  /**
   * Deletes a file (MPI_File_delete).
   * @throws MPIError(ERR_NO_SUCH_FILE) when it does not exist; ERR_ACCESS, ERR_BAD_FILE, ERR_IO with the OS reason
   */
  static async delete(path: string, info?: Info): Promise<void> {
    const call = 'File.delete';
    if (typeof path !== 'string' || path.length === 0) throw mpiError(ERR_BAD_FILE, call, `path is ${describe(path)}: expected a non-empty string`);
    infoEntries(info, call);
    try {
      await unlink(path);
    } catch (e) {
      throw fileError(e, call, path);
    }
  }

  /** Closes the file on every process (MPI_File_close; collective); MODE_DELETE_ON_CLOSE deletes it then. */
  async close(): Promise<void> {
    const call = 'File.close';
    this.#check(call);
    this.#closed = true;
    await this.#chain.catch(() => undefined);
    await this.#pointer.stop();
    try {
      await this._fh.close();
    } catch (e) {
      throw fileError(e, call, this.path);
    }
    if (this.amode & MODE_DELETE_ON_CLOSE) {
      // After the pointer's stop() (a barrier) nobody accesses the file; close returns once it is gone, everywhere.
      let err: MPIError | null = null;
      if (this._comm.rank === 0) await unlink(this.path).catch((e: unknown) => { err = fileError(e, call, this.path); });
      const w = await this._comm.bcast(err === null ? null : (err as MPIError).toWire());
      if (w !== null) {
        this._comm.free();
        throw MPIError.fromWire(w);
      }
    }
    this._comm.free();
  }

  /** The group of the file's communicator (MPI_File_get_group). */
  get group(): Group {
    return this._comm.group;
  }

  // --- hints, errors ----------------------------------------------------------

  /** A new Info with the file's hints (MPI_File_get_info), the defaults included. */
  getInfo(): Info {
    this.#check('File.getInfo');
    return new Info({
      cb_nodes: String(this._aggregators.length), cb_buffer_size: String(this._cbBufferSize),
      romio_cb_read: 'automatic', romio_cb_write: 'automatic', romio_ds_read: 'automatic', romio_ds_write: 'automatic',
      ind_rd_buffer_size: String(this.#rdSieveSize), ind_wr_buffer_size: String(this.#wrSieveSize), ...Object.fromEntries(this.#hints),
    });
  }

  /**
   * Sets hints (MPI_File_set_info): cb_buffer_size, romio_cb_read, romio_cb_write, romio_ds_read, romio_ds_write,
   * ind_rd_buffer_size, ind_wr_buffer_size (cb_nodes only at open).
   * Every process should pass the same hints. @throws MPIError(ERR_INFO) when info is not an Info; ERR_ARG for a bad value
   */
  setInfo(info: Info): void {
    const call = 'File.setInfo';
    this.#check(call);
    this.#applyHints((infoEntries(info, call) ?? []).filter(([k]) => k !== 'cb_nodes'), call);
  }

  #applyHints(entries: [string, string][], call: string): void {
    for (const [k, v] of entries) checkHint(k, v, call);
    for (const [k, v] of entries) {
      if (k === 'cb_buffer_size') this._cbBufferSize = Number(v);
      else if (k === 'ind_rd_buffer_size') this.#rdSieveSize = Number(v);
      else if (k === 'ind_wr_buffer_size') this.#wrSieveSize = Number(v);
      this.#hints.set(k, v);
    }
  }

  #hint(key: string): string {
    return this.#hints.get(key) ?? 'automatic';
  }

  /**
   * The data sieving buffer of an independent access, 0 for none (io/sieve.ts). Reads sieve unless
   * romio_ds_read is disable. A sieved write rewrites the holes between its pieces, so it must exclude
   * every other write of those bytes: while writes sieve, every independent write of the file holds the
   * file's lock (#run). romio_ds_write automatic sieves where that costs no message: in atomic mode (the
   * lock is taken anyway) or on one process (its own lock); enable sieves always.
   */
  #sieveBuffer(kind: Kind): number {
    if (kind === 'read') return this.#hint('romio_ds_read') === 'disable' ? 0 : this.#rdSieveSize;
    const mode = this.#hint('romio_ds_write');
    if (mode === 'enable' || (mode === 'automatic' && (this.#atomic || this._comm.size === 1))) return this.#wrSieveSize;
    return 0;
  }

  /** Sets the file's error handler in this thread (MPI_File_set_errhandler); the default is ERRORS_RETURN. */
  setErrhandler(h: Errhandler): void {
    const handler = checkErrhandler(h, 'File.setErrhandler');
    this.#errhandler = handler;
    routeErrors(this, handler === ERRORS_RETURN ? null : (e) => {
      invokeErrhandler(this.#errhandler, this, e, runtimeOrNull()?.job?.rank ?? 0, (code) => abort(code));
      return e;
    });
  }

  /** The file's error handler in this thread. */
  getErrhandler(): Errhandler {
    return this.#errhandler;
  }

  // --- view -------------------------------------------------------------------

  /**
   * Sets the view (MPI_File_set_view; collective): data starts at byte `disp`, is made of `etype`s,
   * and the process sees the data of `filetype` tiled from there. Resets both file pointers to 0.
   * @throws MPIError(ERR_TYPE) for a bad etype or filetype (not committed, size 0, size not a multiple of etype's);
   *   ERR_UNSUPPORTED_DATAREP for a datarep other than 'native' and 'external32'; ERR_ARG for a bad disp
   * @example await f.setView(0, MPI.FLOAT64, MPI.Datatype.subarray([8, 8], [4, 4], [0, 4], 'C', MPI.FLOAT64).commit());
   */
  async setView(disp: number, etype: Datatype, filetype: Datatype, datarep = 'native', info?: Info): Promise<void> {
    const call = 'File.setView';
    this.#check(call);
    if (!Number.isSafeInteger(disp) || disp < 0) throw mpiError(ERR_ARG, call, `disp is ${describe(disp)}: expected an integer >= 0 (bytes)`);
    checkDatatype(etype, call, 'etype');
    checkDatatype(filetype, call, 'filetype');
    if (etype.size === 0) throw mpiError(ERR_TYPE, call, `etype ${etype.name} has size 0`);
    if (filetype.size === 0 || filetype.size % etype.size !== 0) {
      throw mpiError(ERR_TYPE, call, `filetype ${filetype.name} holds ${filetype.size} bytes: expected a positive multiple of etype ${etype.name} (${etype.size} bytes)`);
    }
    if (datarep !== 'native' && datarep !== 'external32') {
      throw mpiError(ERR_UNSUPPORTED_DATAREP, call, `datarep is ${describe(datarep)}: expected 'native' or 'external32'`);
    }
    this.#applyHints(infoEntries(info, call) ?? [], call);
    await this.#chain.catch(() => undefined);
    this._view = makeViewMap(disp, etype.size, filetype._map);
    this.#etype = etype;
    this.#filetype = filetype;
    this._datarep = datarep;
    this.#position = 0;
    await this.#resetShared(0);
  }

  /** The view (MPI_File_get_view). */
  getView(): { disp: number; etype: Datatype; filetype: Datatype; datarep: string } {
    this.#check('File.getView');
    return { disp: this._view.disp, etype: this.#etype, filetype: this.#filetype, datarep: this._datarep };
  }

  // --- pointers ---------------------------------------------------------------

  /**
   * Moves the individual file pointer (MPI_File_seek), in etypes of the view.
   * @throws MPIError(ERR_ARG) for a bad whence or a position before the start of the view
   */
  seek(offset: number, whence = SEEK_SET): void {
    const call = 'File.seek';
    this.#check(call);
    this.#position = this.#seekTarget(call, offset, whence, this.#position, whence === SEEK_END ? this.#sizeNow(call) : null);
  }

  /**
   * The file's size for seek's SEEK_END: seek is synchronous (API.md), so an fstat of the open
   * descriptor, which answers from the inode without blocking on the disk.
   */
  #sizeNow(call: string): number {
    try {
      return fstatSync(this._fh.fd).size;
    } catch (e) {
      throw fileError(e, call, this.path);
    }
  }

  /** The individual file pointer, in etypes (MPI_File_get_position). */
  getPosition(): number {
    this.#check('File.getPosition');
    return this.#position;
  }

  /** The absolute byte of `offset` etypes into the view (MPI_File_get_byte_offset). */
  getByteOffset(offset: number): number {
    const call = 'File.getByteOffset';
    this.#check(call);
    checkOffset(offset, call);
    return fileByteOf(this._view, offset * this._view.etypeSize);
  }

  /**
   * Moves the shared file pointer (MPI_File_seek_shared; collective, every process the same arguments).
   * SEEK_END counts from the end of the file in etypes of the view.
   */
  async seekShared(offset: number, whence = SEEK_SET): Promise<void> {
    const call = 'File.seekShared';
    this.#check(call);
    const current = whence === SEEK_CUR ? await this.#pointer.get() : 0;
    const size = whence === SEEK_END ? await this.getSize() : null;
    await this.#resetShared(this.#seekTarget(call, offset, whence, current, size));
  }

  /** The shared file pointer, in etypes (MPI_File_get_position_shared). */
  async getPositionShared(): Promise<number> {
    this.#check('File.getPositionShared');
    return this.#pointer.get();
  }

  #seekTarget(call: string, offset: number, whence: number, current: number, size: number | null): number {
    this.#check(call);
    if (!Number.isSafeInteger(offset)) throw mpiError(ERR_ARG, call, `offset is ${describe(offset)}: expected an integer (etypes)`);
    let base: number;
    if (whence === SEEK_SET) base = 0;
    else if (whence === SEEK_CUR) base = current;
    else if (whence === SEEK_END) base = this.#etypesBefore(size ?? 0);
    else throw mpiError(ERR_ARG, call, `whence is ${describe(whence)}: expected MPI.SEEK_SET, MPI.SEEK_CUR or MPI.SEEK_END`);
    const target = base + offset;
    if (target < 0) throw mpiError(ERR_ARG, call, `offset ${offset} from ${whence === SEEK_CUR ? 'SEEK_CUR' : 'SEEK_END'} is before the start of the view (position ${target})`);
    return target;
  }

  /** Etypes of the view that end at or before file byte `size` (for SEEK_END). */
  #etypesBefore(size: number): number {
    const v = this._view;
    if (v.isLinear) return Math.max(0, Math.floor((size - v.disp - v.runOffsets[0]!) / v.etypeSize));
    const bytes = loaded().bytesBefore(runsOf(v, 0, Math.max(0, size - v.disp) + v.tileSize), size);
    return Math.floor(bytes / v.etypeSize);
  }

  async #resetShared(value: number): Promise<void> {
    await this._comm.barrier();
    if (this._comm.rank === 0) this.#pointer.setLocal(value);
    await this._comm.barrier();
  }

  // --- sizes, consistency -------------------------------------------------------

  /** The file's size in bytes (MPI_File_get_size). */
  async getSize(): Promise<number> {
    const call = 'File.getSize';
    this.#check(call);
    try {
      return (await this._fh.stat()).size;
    } catch (e) {
      throw fileError(e, call, this.path);
    }
  }

  /** Truncates or extends the file to `bytes` (MPI_File_set_size; collective). */
  async setSize(bytes: number): Promise<void> {
    await this.#resize('File.setSize', bytes, false);
  }

  /** Makes the file at least `bytes` long (MPI_File_preallocate; collective): extends it with zeros, never shrinks. */
  async preallocate(bytes: number): Promise<void> {
    await this.#resize('File.preallocate', bytes, true);
  }

  async #resize(call: string, bytes: number, growOnly: boolean): Promise<void> {
    this.#check(call);
    this.#checkWritable(call);
    if (!Number.isSafeInteger(bytes) || bytes < 0) throw mpiError(ERR_ARG, call, `bytes is ${describe(bytes)}: expected an integer >= 0`);
    await this._comm.barrier();
    let err: MPIError | null = null;
    if (this._comm.rank === 0) {
      try {
        if (!growOnly || (await this._fh.stat()).size < bytes) await this._fh.truncate(bytes);
      } catch (e) {
        err = fileError(e, call, this.path);
      }
    }
    const w = await this._comm.bcast(err === null ? null : err.toWire());
    if (w !== null) throw MPIError.fromWire(w);
  }

  /** Flushes this process's writes to the storage device (MPI_File_sync; collective in MPI, a local fsync here). */
  async sync(): Promise<void> {
    const call = 'File.sync';
    this.#check(call);
    try {
      await this._fh.sync();
    } catch (e) {
      throw fileError(e, call, this.path);
    }
  }

  /** Sets atomic mode (MPI_File_set_atomicity; collective). */
  async setAtomicity(flag: boolean): Promise<void> {
    const call = 'File.setAtomicity';
    this.#check(call);
    if (typeof flag !== 'boolean') throw mpiError(ERR_ARG, call, `flag is ${describe(flag)}: expected a boolean`);
    await this.#chain.catch(() => undefined);
    await this._comm.barrier();
    this.#atomic = flag;
  }

  /** Whether the file is in atomic mode (MPI_File_get_atomicity). */
  getAtomicity(): boolean {
    return this.#atomic;
  }

  // --- explicit offsets ---------------------------------------------------------

  /** Reads at `offset` etypes into the view (MPI_File_read_at). @example const st = await f.ReadAt(0, buf); st.getCount(MPI.BYTE) */
  ReadAt(offset: number, buf: BufSpec): Promise<Status> {
    return this.#access('read', 'File.ReadAt', offset, buf, false);
  }
  /** Writes at `offset` etypes into the view (MPI_File_write_at). */
  WriteAt(offset: number, buf: BufSpec): Promise<Status> {
    return this.#access('write', 'File.WriteAt', offset, buf, false);
  }
  /** ReadAt, collective (MPI_File_read_at_all): two-phase I/O through the aggregators. */
  ReadAtAll(offset: number, buf: BufSpec): Promise<Status> {
    return this.#access('read', 'File.ReadAtAll', offset, buf, true);
  }
  /** WriteAt, collective (MPI_File_write_at_all): two-phase I/O through the aggregators. */
  WriteAtAll(offset: number, buf: BufSpec): Promise<Status> {
    return this.#access('write', 'File.WriteAtAll', offset, buf, true);
  }
  IreadAt(offset: number, buf: BufSpec): Request<void> {
    return loaded().requestOf(() => this.#access('read', 'File.IreadAt', offset, buf, false), 'File.IreadAt');
  }
  IwriteAt(offset: number, buf: BufSpec): Request<void> {
    return loaded().requestOf(() => this.#access('write', 'File.IwriteAt', offset, buf, false), 'File.IwriteAt');
  }
  IreadAtAll(offset: number, buf: BufSpec): Request<void> {
    return loaded().requestOf(() => this.#access('read', 'File.IreadAtAll', offset, buf, true), 'File.IreadAtAll');
  }
  IwriteAtAll(offset: number, buf: BufSpec): Request<void> {
    return loaded().requestOf(() => this.#access('write', 'File.IwriteAtAll', offset, buf, true), 'File.IwriteAtAll');
  }

  // --- individual file pointer ----------------------------------------------------

  /** Reads at the individual file pointer and advances it (MPI_File_read). */
  Read(buf: BufSpec): Promise<Status> {
    return this.#atPointer('read', 'File.Read', buf, false);
  }
  Write(buf: BufSpec): Promise<Status> {
    return this.#atPointer('write', 'File.Write', buf, false);
  }
  ReadAll(buf: BufSpec): Promise<Status> {
    return this.#atPointer('read', 'File.ReadAll', buf, true);
  }
  WriteAll(buf: BufSpec): Promise<Status> {
    return this.#atPointer('write', 'File.WriteAll', buf, true);
  }
  Iread(buf: BufSpec): Request<void> {
    return loaded().requestOf(() => this.#atPointer('read', 'File.Iread', buf, false), 'File.Iread');
  }
  Iwrite(buf: BufSpec): Request<void> {
    return loaded().requestOf(() => this.#atPointer('write', 'File.Iwrite', buf, false), 'File.Iwrite');
  }
  IreadAll(buf: BufSpec): Request<void> {
    return loaded().requestOf(() => this.#atPointer('read', 'File.IreadAll', buf, true), 'File.IreadAll');
  }
  IwriteAll(buf: BufSpec): Request<void> {
    return loaded().requestOf(() => this.#atPointer('write', 'File.IwriteAll', buf, true), 'File.IwriteAll');
  }

  // --- shared file pointer ----------------------------------------------------------

  /** Reads at the shared file pointer and advances it (MPI_File_read_shared). */
  ReadShared(buf: BufSpec): Promise<Status> {
    return this.#atShared('read', 'File.ReadShared', buf);
  }
  /** Writes at the shared file pointer and advances it (MPI_File_write_shared): concurrent calls get disjoint places. */
  WriteShared(buf: BufSpec): Promise<Status> {
    return this.#atShared('write', 'File.WriteShared', buf);
  }
  /** Collective; the processes read in rank order from the shared file pointer (MPI_File_read_ordered). */
  ReadOrdered(buf: BufSpec): Promise<Status> {
    return this.#ordered('read', 'File.ReadOrdered', buf);
  }
  /** Collective; the processes write in rank order from the shared file pointer (MPI_File_write_ordered). */
  WriteOrdered(buf: BufSpec): Promise<Status> {
    return this.#ordered('write', 'File.WriteOrdered', buf);
  }

  // --- split collectives (MPI 4.0 14.4.5): begin starts the collective access, end waits for it ----------

  /** Starts ReadAtAll (MPI_File_read_at_all_begin); ReadAtAllEnd(buf) completes it. @throws MPIError(ERR_IO) while another split collective is outstanding */
  ReadAtAllBegin(offset: number, buf: BufSpec): void {
    this.#beginSplit('File.ReadAtAllBegin', 'File.ReadAtAllEnd', buf, () => this.#access('read', 'File.ReadAtAllBegin', offset, buf, true));
  }
  /** Completes ReadAtAllBegin (MPI_File_read_at_all_end): the data is in buf. @throws MPIError(ERR_IO) without that begin; ERR_ARG for another buf */
  ReadAtAllEnd(buf: BufSpec): Promise<Status> {
    return this.#endSplit('File.ReadAtAllEnd', buf);
  }
  /** Starts WriteAtAll (MPI_File_write_at_all_begin); WriteAtAllEnd(buf) completes it. */
  WriteAtAllBegin(offset: number, buf: BufSpec): void {
    this.#beginSplit('File.WriteAtAllBegin', 'File.WriteAtAllEnd', buf, () => this.#access('write', 'File.WriteAtAllBegin', offset, buf, true));
  }
  WriteAtAllEnd(buf: BufSpec): Promise<Status> {
    return this.#endSplit('File.WriteAtAllEnd', buf);
  }
  /** Starts ReadAll at the individual file pointer, which moves now (MPI_File_read_all_begin). */
  ReadAllBegin(buf: BufSpec): void {
    this.#beginSplit('File.ReadAllBegin', 'File.ReadAllEnd', buf, () => this.#atPointer('read', 'File.ReadAllBegin', buf, true));
  }
  ReadAllEnd(buf: BufSpec): Promise<Status> {
    return this.#endSplit('File.ReadAllEnd', buf);
  }
  WriteAllBegin(buf: BufSpec): void {
    this.#beginSplit('File.WriteAllBegin', 'File.WriteAllEnd', buf, () => this.#atPointer('write', 'File.WriteAllBegin', buf, true));
  }
  WriteAllEnd(buf: BufSpec): Promise<Status> {
    return this.#endSplit('File.WriteAllEnd', buf);
  }
  /** Starts ReadOrdered (MPI_File_read_ordered_begin). */
  ReadOrderedBegin(buf: BufSpec): void {
    this.#beginSplit('File.ReadOrderedBegin', 'File.ReadOrderedEnd', buf, () => this.#ordered('read', 'File.ReadOrderedBegin', buf));
  }
  ReadOrderedEnd(buf: BufSpec): Promise<Status> {
    return this.#endSplit('File.ReadOrderedEnd', buf);
  }
  WriteOrderedBegin(buf: BufSpec): void {
    this.#beginSplit('File.WriteOrderedBegin', 'File.WriteOrderedEnd', buf, () => this.#ordered('write', 'File.WriteOrderedBegin', buf));
  }
  WriteOrderedEnd(buf: BufSpec): Promise<Status> {
    return this.#endSplit('File.WriteOrderedEnd', buf);
  }

  #beginSplit(call: string, end: string, buf: BufSpec, start: () => Promise<Status>): void {
    this.#check(call);
    this.#split.begin(call, end, buf, start);
  }

  #endSplit(call: string, buf: BufSpec): Promise<Status> {
    this.#check(call);
    return this.#split.end(call, buf);
  }

  // --- the one access path ------------------------------------------------------------

  #atPointer(kind: Kind, call: string, buf: BufSpec, collective: boolean): Promise<Status> {
    this.#checkAccess(kind, call);
    const rb = loaded().resolveAccessBuf(buf, this._view.etypeSize, call);
    const at = this.#position;
    // MPI 4.0 14.4.3: the pointer moves by what the call asks for, when the call starts.
    this.#position += rb.packedBytes / this._view.etypeSize;
    if (!collective) return this.#run(kind, call, at, rb, false);
    return this.#collectively(() => this.#run(kind, call, at, rb, true));
  }

  async #atShared(kind: Kind, call: string, buf: BufSpec): Promise<Status> {
    this.#checkAccess(kind, call);
    const rb = loaded().resolveAccessBuf(buf, this._view.etypeSize, call);
    const at = await this.#pointer.fetchAdd(rb.packedBytes / this._view.etypeSize);
    return this.#run(kind, call, at, rb, false);
  }

  #ordered(kind: Kind, call: string, buf: BufSpec): Promise<Status> {
    this.#checkAccess(kind, call);
    const rb = loaded().resolveAccessBuf(buf, this._view.etypeSize, call);
    const n = rb.packedBytes / this._view.etypeSize;
    // In the chain: the allgather and bcast come in the same order on every process as the other collective accesses.
    return this.#collectively(async () => {
      const counts = await this._comm.allgather(n);
      let before = 0;
      for (let r = 0; r < this._comm.rank; r++) before += counts[r]!;
      const total = counts.reduce((a, b) => a + b, 0);
      const base = await this._comm.bcast(this._comm.rank === 0 ? await this.#pointer.fetchAdd(total) : 0);
      return this.#run(kind, call, base + before, rb, true);
    });
  }

  #collectively(run: () => Promise<Status>): Promise<Status> {
    const p = this.#chain.catch(() => undefined).then(run);
    this.#chain = p;
    return p;
  }

  #checkAccess(kind: Kind, call: string): void {
    this.#check(call);
    if (kind === 'write') this.#checkWritable(call);
    else if (!isReadable(this.amode)) throw mpiError(ERR_ACCESS, call, `${this.path} was opened MODE_WRONLY: it cannot be read`);
  }

  /** Every data access: checks, then the independent or the collective (chained) path. */
  #access(kind: Kind, call: string, offset: number, buf: BufSpec, collective: boolean): Promise<Status> {
    this.#checkAccess(kind, call);
    checkOffset(offset, call);
    const rb = loaded().resolveAccessBuf(buf, this._view.etypeSize, call);
    if (!collective) return this.#run(kind, call, offset, rb, false);
    return this.#collectively(() => this.#run(kind, call, offset, rb, true));
  }

  async #run(kind: Kind, call: string, offset: number, rb: ResolvedBuf, collective: boolean): Promise<Status> {
    const runs = runsOf(this._view, offset * this._view.etypeSize, rb.packedBytes);
    // Atomic mode: each process accesses the file itself under the lock (the aggregators would break the per-access atomicity).
    const ranges = collective && !this.#atomic ? await loaded().twoPhaseRanges(this._comm, this.#hint(kind === 'read' ? 'romio_cb_read' : 'romio_cb_write'), runs) : null;
    const sieve = ranges === null ? this.#sieveBuffer(kind) : 0;
    // A sieved write rewrites its holes: no other write (of any process, or of this one in flight) may land there meanwhile.
    const locked = this.#atomic || (kind === 'write' && sieve > 0);
    if (locked) await this.#pointer.lock();
    try {
      if (kind === 'write') {
        const data = loaded().bytesToWrite(rb, this._datarep);
        if (ranges !== null) await loaded().writeTwoPhase(this, runs, ranges, data, call);
        else await loaded().writeRuns(this, runs, data, call, sieve);
        return loaded().accessStatus(rb.packedBytes);
      }
      const area = loaded().readArea(rb);
      const got = ranges !== null ? await loaded().readTwoPhase(this, runs, ranges, area, call) : await loaded().readRuns(this, runs, area, call, sieve);
      loaded().finishRead(rb, area, got, this._datarep);
      return loaded().accessStatus(got);
    } finally {
      if (locked) await this.#pointer.unlock();
    }
  }

  #check(call: string): void {
    if (this.#closed) throw mpiError(ERR_FILE, call, `${this.path} has been closed`);
  }

  #checkWritable(call: string): void {
    if (!isWritable(this.amode)) throw mpiError(ERR_READ_ONLY, call, `${this.path} was opened MODE_RDONLY: it cannot be written`);
  }

  toString(): string {
    return this.name;
  }
}

/**
 * A hint File understands, checked (others are kept as given).
 * @throws MPIError(ERR_ARG) for a cb_nodes, cb_buffer_size, ind_rd_buffer_size or ind_wr_buffer_size that is not a positive
 *   integer, a romio_cb_* or romio_ds_* not enable/disable/automatic
 */
function checkHint(key: string, value: string, call: string): void {
  if (SIZE_HINTS.has(key)) {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < 1) throw mpiError(ERR_ARG, call, `hint ${key} is '${value}': expected a positive integer`);
  } else if (MODE_HINTS.has(key) && !MODES.includes(value)) {
    throw mpiError(ERR_ARG, call, `hint ${key} is '${value}': expected enable, disable or automatic`);
  }
}
