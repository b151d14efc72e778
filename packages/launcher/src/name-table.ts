/**
 * The name server's table (docs/adr/0046-name-server-between-jobs.md, point 4): service names and
 * the port strings published under them, each owned by the link (one mpiexec job) that published it.
 *
 *   - publish of a name already published is ERR_SERVICE: never a silent overwrite, so a second job
 *     cannot take a name over;
 *   - lookup of a name nobody published is ERR_NAME;
 *   - unpublish only by the publishing link, with the port published (another link's is ERR_SERVICE);
 *   - a link's names go when it closes (dropLink): its job's ports closed with it.
 * Bounds: MAX_NAME_CHARS per name and port (as a job's own table), MAX_NAMES_PER_LINK per link.
 * Answers are values or [error class name, message], as mpiexec's dynamic service answers; pure.
 */

/** One answer: its value, or [MPI error class name, message]. */
export type NameAnswer = { readonly value: unknown } | { readonly error: readonly [string, string] };

/** Longest service name or port string (as dynamic-service.ts's MAX_NAME_CHARS). */
export const MAX_NAME_CHARS = 1024;
/** Most names one link may hold at once: bounds what one job can make the server keep. */
export const MAX_NAMES_PER_LINK = 4096;

function isName(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= MAX_NAME_CHARS;
}

function quoted(name: string): string {
  return `"${name.length > 200 ? `${name.slice(0, 200)}...` : name}"`;
}

/** The table of one name server. */
export class NameTable {
  readonly #names = new Map<string, { readonly port: string; readonly link: number }>();
  readonly #byLink = new Map<number, Set<string>>();

  /** Names held now. */
  get size(): number {
    return this.#names.size;
  }

  /** Link `link` publishes `port` under `service`. */
  publish(link: number, service: unknown, port: unknown): NameAnswer {
    if (!isName(service)) return fail('ERR_SERVICE', `service ${JSON.stringify(typeof service === 'string' ? service.slice(0, 40) : service)} is invalid: expected a string of 1..${MAX_NAME_CHARS} characters`);
    if (!isName(port)) return fail('ERR_PORT', `the port of service ${quoted(service)} is invalid: expected a string of 1..${MAX_NAME_CHARS} characters`);
    if (this.#names.has(service)) return fail('ERR_SERVICE', `service ${quoted(service)} is already published at the name server (unpublish it first)`);
    const mine = this.#byLink.get(link) ?? new Set<string>();
    if (mine.size >= MAX_NAMES_PER_LINK) return fail('ERR_SERVICE', `this job already published ${MAX_NAMES_PER_LINK} names at the name server (its limit per job)`);
    mine.add(service);
    this.#byLink.set(link, mine);
    this.#names.set(service, { port, link });
    return { value: null };
  }

  /** The port published under `service`. */
  lookup(service: unknown): NameAnswer {
    if (!isName(service)) return fail('ERR_NAME', `service ${JSON.stringify(typeof service === 'string' ? service.slice(0, 40) : service)} is invalid: expected a string of 1..${MAX_NAME_CHARS} characters`);
    const held = this.#names.get(service);
    return held === undefined ? fail('ERR_NAME', `no service named ${quoted(service)} is published at the name server`) : { value: held.port };
  }

  /** Link `link` withdraws `service` (published by it with `port`). */
  unpublish(link: number, service: unknown, port: unknown): NameAnswer {
    if (!isName(service)) return fail('ERR_SERVICE', `service ${JSON.stringify(typeof service === 'string' ? service.slice(0, 40) : service)} is invalid: expected a string of 1..${MAX_NAME_CHARS} characters`);
    const held = this.#names.get(service);
    if (held === undefined) return fail('ERR_SERVICE', `service ${quoted(service)} is not published at the name server`);
    if (held.link !== link) return fail('ERR_SERVICE', `service ${quoted(service)} was published by another job: only that job may unpublish it`);
    if (held.port !== port) return fail('ERR_SERVICE', `service ${quoted(service)} is not published with that port`);
    this.#names.delete(service);
    this.#byLink.get(link)?.delete(service);
    return { value: null };
  }

  /** Link `link` closed: its names go. @returns how many went */
  dropLink(link: number): number {
    const mine = this.#byLink.get(link);
    if (mine === undefined) return 0;
    this.#byLink.delete(link);
    for (const s of mine) this.#names.delete(s);
    return mine.size;
  }
}

function fail(errorClass: string, message: string): NameAnswer {
  return { error: [errorClass, message] };
}
