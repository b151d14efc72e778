/**
 * TLS keyed by the job (mpiexec --secure, docs/adr/0034-secure-option-tls-psk.md): the one
 * configuration every encrypted connection of a job uses, the ranks' TCP channels
 * (transport-tcp), the wire-up service and its clients (launcher, pmi/client.ts) and the
 * per-host proxies' links.
 *
 * TLS 1.3 with an external pre-shared key and no certificates: PSK = HKDF-SHA256(job key,
 * info "tsmpi tls psk"), 32 bytes, under the fixed identity JOB_TLS_IDENTITY. Both sides must
 * hold the job key to finish the handshake (the PSK binder proves it), so a stranger, or a
 * process of another job, fails it before a byte of the job's traffic is sent; OpenSSL's
 * default PSK key exchange mode for TLS 1.3 is psk_dhe_ke, so every connection also runs an
 * ECDHE exchange (forward secrecy). Only SHA-256 suites: an external PSK set through the
 * callbacks Node uses is tied to SHA-256 in OpenSSL; AES-128-GCM first (AES-NI), ChaCha20-
 * Poly1305 for machines without it.
 *
 * The HMAC challenge-response (key-proof.ts) still runs inside: it binds what a connection
 * claims to be (rank, channel, listener); TLS adds confidentiality and integrity.
 *
 * Two secure jobs coupled at a port (docs/adr/0043-connect-two-jobs.md, "--secure") hold no common
 * job key: their mpiexecs' port link runs TLS keyed by the port's secret, and their processes'
 * connections TLS keyed by the pair key, each under an identity that names a hash of its key
 * (couplingTls): a listener picks the key by the identity (the extra `pskOf` of
 * jobTlsServerOptions) and the binder proves it, so a stranger without the port name or the
 * pair key fails the handshake as one without the job key does.
 */
import { hkdfSync } from 'node:crypto';
import { createRequire } from 'node:module';
import type { ConnectionOptions, SecureContext, TlsOptions } from 'node:tls';

/**
 * Node's tls module, loaded at the first secure connection: a job without --secure never loads it
 * (1.2 MB of an idle rank's resident memory, issue 38). A synchronous require because the options
 * below are built synchronously; the module is Node's own, so nothing is resolved from disk.
 */
let tls: typeof import('node:tls') | undefined;
export function tlsModule(): typeof import('node:tls') {
  return (tls ??= createRequire(import.meta.url)('node:tls') as typeof import('node:tls'));
}

/** The PSK identity every job uses: it names the scheme, never the job (it travels in clear). */
export const JOB_TLS_IDENTITY = 'tsmpi-job';
/** TLS 1.3 suites, SHA-256 only (see the header). */
export const JOB_TLS_CIPHERS = 'TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256';
/** HKDF info of the PSK: a key for TLS only, unrelated to the HMAC proofs made with the job key. */
const PSK_INFO = 'tsmpi tls psk';

/** The job's TLS PSK (32 bytes) for the job key `jobKey` (hex, as mpiexec hands it out). */
export function jobTlsPsk(jobKey: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(jobKey, 'utf8'), Buffer.alloc(0), PSK_INFO, 32));
}

/** One secure context per job and side: creating one costs far more than a handshake. */
const contexts = new Map<string, SecureContext>();

function jobContext(): SecureContext {
  let c = contexts.get('job');
  if (c === undefined) {
    c = tlsModule().createSecureContext({ minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3', ciphers: JOB_TLS_CIPHERS });
    contexts.set('job', c);
  }
  return c;
}

/** What a coupling's TLS is keyed by: a port's secret (the mpiexecs' port link) or a pair key (the two jobs' processes). */
export type CouplingTlsKind = 'port' | 'pair';

/** A coupling's PSK and the identity that names it: a hash of the key, never the key (the identity travels in clear). */
export interface CouplingTls {
  readonly identity: string;
  readonly psk: Buffer;
}

/** The TLS PSK and identity of a coupling keyed by `key` (a port's secret or a pair key, hex). */
export function couplingTls(kind: CouplingTlsKind, key: string): CouplingTls {
  const k = Buffer.from(key, 'utf8');
  const id = Buffer.from(hkdfSync('sha256', k, Buffer.alloc(0), `tsmpi ${kind} tls id`, 12)).toString('hex');
  return { identity: `tsmpi-${kind} ${id}`, psk: Buffer.from(hkdfSync('sha256', k, Buffer.alloc(0), `tsmpi ${kind} tls psk`, 32)) };
}

/**
 * What a listening side passes to `new tls.TLSSocket(socket, ...)` or `tls.createServer(...)`.
 * @param pskOf - the PSK of another identity (a coupling's: couplingTls), or null; absent: the job's identity only
 */
export function jobTlsServerOptions(jobKey: string, pskOf?: (identity: string) => Buffer | null): TlsOptions & { isServer: true } {
  const psk = jobTlsPsk(jobKey);
  return {
    isServer: true,
    secureContext: jobContext(),
    minVersion: 'TLSv1.3',
    maxVersion: 'TLSv1.3',
    ciphers: JOB_TLS_CIPHERS,
    // Another identity is refused (null fails the handshake); the binder then proves the key.
    pskCallback: (_socket, identity) => (identity === JOB_TLS_IDENTITY ? psk : (pskOf?.(identity) ?? null)),
  };
}

/** What a connecting side passes to `tls.connect(...)` (or ws's client options): no certificate to check. */
export function jobTlsClientOptions(jobKey: string): ConnectionOptions {
  return pskClientOptions({ identity: JOB_TLS_IDENTITY, psk: jobTlsPsk(jobKey) });
}

/** A connecting side's options for a coupling's TLS (couplingTls): the other job's listener must hold the same key. */
export function couplingTlsClientOptions(kind: CouplingTlsKind, key: string): ConnectionOptions {
  return pskClientOptions(couplingTls(kind, key));
}

function pskClientOptions({ identity, psk }: CouplingTls): ConnectionOptions {
  return {
    secureContext: jobContext(),
    minVersion: 'TLSv1.3',
    maxVersion: 'TLSv1.3',
    ciphers: JOB_TLS_CIPHERS,
    pskCallback: () => ({ psk, identity }),
    // The PSK authenticates the server; there is no certificate or name to check.
    checkServerIdentity: () => undefined,
  };
}

/**
 * The message of a TLS handshake with `peer` that failed with `err`: what a user can act on
 * (both sides must run with the same job and both with or both without --secure).
 */
export function jobTlsFailure(peer: string, err: Error): string {
  return `TLS handshake with ${peer} failed (${err.message.split('\n')[0]}): the peer does not hold this job's key, or does not run with --secure`;
}
