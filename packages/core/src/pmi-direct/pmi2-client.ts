/**
 * A PMI-2 client, as Slurm's `srun --mpi=pmi2` serves it: the commands
 * tsmpi's direct launch needs (direct-client.ts), one request at a time over
 * PMI_FD. As MPICH's client does, it opens with a PMI-1 line
 * (`cmd=init pmi_version=2 pmi_subversion=0`, answered by a line), and
 * speaks length-framed PMI-2 commands after it (pmi2-wire.ts).
 *
 * Reference: MPICH's src/pmi/pmi2/pmi2_api.c (PMI2_Init, PMI2_KVS_Put,
 * PMI2_KVS_Fence, PMI2_KVS_Get, PMI2_Info_GetJobAttr, PMI2_Finalize,
 * PMI2_Abort: key `isworld`) and Slurm's src/plugins/mpi/pmi2 (pmi2.c), whose
 * replies were checked against Slurm 22.05. Slurm does not undo ";;" in a
 * value: tsmpi's values never hold ";" (kvs-value.ts).
 */
import { ERR_OTHER, mpiError } from '../util/index.ts';
import { PmiConnection, checkRc, type PmiEndpoint, type PmiFraming } from './pmi-connection.ts';
import { Pmi1LineReader, formatPmi1Command, parsePmi1Line } from './pmi1-wire.ts';
import { Pmi2FrameReader, encodePmi2Command, parsePmi2Body } from './pmi2-wire.ts';
import type { PmiDialect, PmiIdentity } from './direct-client.ts';

/** The first reply is a PMI-1 line; every later one a PMI-2 frame. */
function pmi2Framing(): PmiFraming {
  let lines: Pmi1LineReader | null = new Pmi1LineReader();
  const frames = new Pmi2FrameReader();
  return {
    split(chunk) {
      if (lines === null) return frames.push(chunk);
      const nl = chunk.indexOf(0x0a);
      if (nl < 0) return lines.push(chunk.toString('latin1'));
      const first = lines.push(chunk.subarray(0, nl + 1).toString('latin1'));
      lines = null;
      return [...first.map((l) => `\n${l}`), ...frames.push(chunk.subarray(nl + 1))];
    },
    // The init line is marked by a leading "\n" (a PMI-2 body never starts with one).
    parse: (frame) => (frame.startsWith('\n') ? parsePmi1Line(frame.slice(1)) : parsePmi2Body(frame)),
  };
}

export class Pmi2Dialect implements PmiDialect {
  readonly version = 2;
  #jobId = '';

  readonly connection: PmiConnection;

  private constructor(connection: PmiConnection) {
    this.connection = connection;
  }

  static async open(endpoint: PmiEndpoint): Promise<Pmi2Dialect> {
    return new Pmi2Dialect(await PmiConnection.open(endpoint, pmi2Framing()));
  }

  /** @param env - PMI_RANK and PMI_JOBID as the launcher set them */
  async init(env: { rank: number; jobId: string }): Promise<PmiIdentity> {
    const c = this.connection;
    const init = checkRc('init', await c.request('init', formatPmi1Command('init', [['pmi_version', '2'], ['pmi_subversion', '0']]), 'response_to_init'));
    if (init.fields.get('pmi_version') !== '2') {
      throw mpiError(ERR_OTHER, 'init', `the PMI server speaks PMI version ${init.fields.get('pmi_version') ?? '?'}, this client 2`);
    }
    const full = checkRc('init', await c.request('init', encodePmi2Command('fullinit', [['pmijobid', env.jobId], ['pmirank', String(env.rank)], ['threaded', 'FALSE']]), 'fullinit-response'));
    const rank = Number(full.fields.get('rank') ?? env.rank);
    const size = Number(full.fields.get('size'));
    this.#jobId = full.fields.get('jobid') ?? env.jobId;
    const attr = checkRc('init', await c.request('init', encodePmi2Command('info-getjobattr', [['key', 'PMI_process_mapping']]), 'info-getjobattr-response'));
    return { rank, size, mapping: attr.fields.get('found') === 'TRUE' ? (attr.fields.get('value') ?? null) : null };
  }

  /** Slurm's limit on a value (PMI2_MAX_VALLEN). */
  readonly maxValueBytes = 1024;

  async put(key: string, value: string): Promise<void> {
    checkRc('pmi.fence', await this.connection.request('pmi.fence', encodePmi2Command('kvs-put', [['key', key], ['value', value]]), 'kvs-put-response'));
  }

  async barrier(): Promise<void> {
    checkRc('pmi.fence', await this.connection.request('pmi.fence', encodePmi2Command('kvs-fence'), 'kvs-fence-response'));
  }

  async get(key: string): Promise<string | null> {
    const reply = checkRc('pmi.get', await this.connection.request('pmi.get', encodePmi2Command('kvs-get', [['jobid', this.#jobId], ['srcid', '-1'], ['key', key]]), 'kvs-get-response'));
    return reply.fields.get('found') === 'TRUE' ? (reply.fields.get('value') ?? '') : null;
  }

  async finalize(): Promise<void> {
    checkRc('finalize', await this.connection.request('finalize', encodePmi2Command('finalize'), 'finalize-response'));
  }

  /** Slurm kills the job step (SIGKILL to every task); srun reports it, the code is not passed on. */
  abort(_code: number, message: string): Promise<void> {
    return this.connection.send(encodePmi2Command('abort', [['isworld', 'TRUE'], ['msg', message.replaceAll(';', ',')]]));
  }
}
