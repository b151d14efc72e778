/**
 * A PMI-1 ("simple PMI") client, as MPICH's Hydra and Flux serve it: the
 * commands tsmpi's direct launch needs (direct-client.ts), one request at a
 * time over PMI_FD, or over PMI_PORT with the `initack` handshake when PMI_ID
 * is set. Wire format: pmi1-wire.ts.
 *
 * Reference: MPICH's src/pmi/simple/simple_pmi.c (PMI_Init, PMI_KVS_Put,
 * PMI_Barrier, PMI_KVS_Get, PMI_Finalize, PMI_Abort) and Hydra's pmi_v1
 * handlers, whose replies were checked against Debian's MPICH 4.0.2 Hydra.
 */
import { ERR_OTHER, mpiError } from '../util/index.ts';
import { PmiConnection, checkRc, type PmiEndpoint, type PmiFraming } from './pmi-connection.ts';
import { Pmi1LineReader, formatPmi1Command, parsePmi1Line } from './pmi1-wire.ts';
import type { PmiDialect, PmiIdentity } from './direct-client.ts';

function pmi1Framing(): PmiFraming {
  const reader = new Pmi1LineReader();
  return { split: (chunk) => reader.push(chunk.toString('latin1')), parse: parsePmi1Line };
}

export class Pmi1Dialect implements PmiDialect {
  readonly version = 1;
  #kvsName = '';
  #maxValue = 1024;

  readonly connection: PmiConnection;

  private constructor(connection: PmiConnection) {
    this.connection = connection;
  }

  /** Opens the connection to the server at `endpoint` (nothing is sent yet). */
  static async open(endpoint: PmiEndpoint): Promise<Pmi1Dialect> {
    return new Pmi1Dialect(await PmiConnection.open(endpoint, pmi1Framing()));
  }

  /**
   * init, initack (PMI_PORT with PMI_ID), get_maxes, get_my_kvsname and the process mapping.
   * @param env - PMI_RANK, PMI_SIZE and PMI_ID as the launcher set them
   */
  async init(env: { rank: number; size: number; pmiId: string | null }): Promise<PmiIdentity> {
    const c = this.connection;
    let { rank, size } = env;
    if (env.pmiId !== null) {
      // PMI_PORT: the server learns who this is from PMI_ID and says rank and size itself.
      const sets = [
        c.request('init', formatPmi1Command('initack', [['pmiid', env.pmiId]]), 'initack'),
        c.expect('init', 'set'), c.expect('init', 'set'), c.expect('init', 'set'),
      ];
      for (const reply of (await Promise.all(sets)).slice(1)) {
        if (reply.fields.has('size')) size = Number(reply.fields.get('size'));
        if (reply.fields.has('rank')) rank = Number(reply.fields.get('rank'));
      }
    }
    const init = checkRc('init', await c.request('init', formatPmi1Command('init', [['pmi_version', '1'], ['pmi_subversion', '1']]), 'response_to_init'));
    if (init.fields.get('pmi_version') !== '1') {
      throw mpiError(ERR_OTHER, 'init', `the PMI server speaks PMI version ${init.fields.get('pmi_version') ?? '?'}, this client 1`);
    }
    const maxes = checkRc('init', await c.request('init', formatPmi1Command('get_maxes'), 'maxes'));
    this.#maxValue = Number(maxes.fields.get('vallen_max') ?? 1024) || 1024;
    const name = await c.request('init', formatPmi1Command('get_my_kvsname'), 'my_kvsname');
    this.#kvsName = name.fields.get('kvsname') ?? '';
    if (this.#kvsName === '') throw mpiError(ERR_OTHER, 'init', 'the PMI server named no key/value space');
    const mapping = await this.get('PMI_process_mapping');
    return { rank, size, mapping };
  }

  get maxValueBytes(): number {
    return this.#maxValue;
  }

  async put(key: string, value: string): Promise<void> {
    checkRc('pmi.fence', await this.connection.request('pmi.fence', formatPmi1Command('put', [['kvsname', this.#kvsName], ['key', key], ['value', value]]), 'put_result'));
  }

  async barrier(): Promise<void> {
    await this.connection.request('pmi.fence', formatPmi1Command('barrier_in'), 'barrier_out');
  }

  async get(key: string): Promise<string | null> {
    const reply = await this.connection.request('pmi.get', formatPmi1Command('get', [['kvsname', this.#kvsName], ['key', key]]), 'get_result');
    return reply.fields.get('rc') === '0' ? (reply.fields.get('value') ?? '') : null;
  }

  async finalize(): Promise<void> {
    await this.connection.request('finalize', formatPmi1Command('finalize'), 'finalize_ack');
  }

  /** Hydra ends every process of the job and exits with `code`; PMI-1 carries no message. */
  abort(code: number): Promise<void> {
    return this.connection.send(formatPmi1Command('abort', [['exitcode', String(code)]]));
  }
}
