// The job's TLS configuration (job-tls.ts): the PSK is a function of the key alone, differs
// between keys and from the key, and a real TLS 1.3 handshake with it succeeds only with the
// same key (sockets on loopback; no job).
import net from 'node:net';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { JOB_TLS_IDENTITY, couplingTls, couplingTlsClientOptions, jobTlsClientOptions, jobTlsFailure, jobTlsPsk, jobTlsServerOptions } from './job-tls.ts';

const A = 'aa'.repeat(32);
const B = 'bb'.repeat(32);

/**
 * One handshake between a server keyed `serverKey` and a client keyed `clientKey`: the protocol and suite, or the failure.
 * With `coupling`, the server also takes the couplingTls identity of the `coupling` key and the client offers that of `clientKey`.
 */
function handshake(serverKey: string, clientKey: string, coupling?: { readonly kind: 'port' | 'pair'; readonly serverKey: string }): Promise<string> {
  return new Promise((resolve) => {
    const served = coupling === undefined ? undefined : couplingTls(coupling.kind, coupling.serverKey);
    const server = net.createServer((raw) => {
      const s = new tls.TLSSocket(raw, jobTlsServerOptions(serverKey, (identity) => (identity === served?.identity ? served.psk : null)));
      s.on('error', () => undefined);
      s.on('secure', () => s.end('hi'));
    });
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      const c = tls.connect({ host: '127.0.0.1', port, ...(coupling === undefined ? jobTlsClientOptions(clientKey) : couplingTlsClientOptions(coupling.kind, clientKey)) });
      let result = '';
      c.on('secureConnect', () => { result = `${c.getProtocol()} ${c.getCipher().name} ${c.getEphemeralKeyInfo() && (c.getEphemeralKeyInfo() as { type?: string }).type}`; });
      c.on('error', (e) => { result ||= `failed: ${e.message}`; });
      c.on('close', () => {
        server.close();
        resolve(result || 'failed: closed');
      });
      c.resume();
    });
  });
}

describe('job TLS', () => {
  it('derives a 32-byte PSK from the key alone, another per key, never the key itself', () => {
    expect(jobTlsPsk(A)).toHaveLength(32);
    expect(jobTlsPsk(A).equals(jobTlsPsk(A))).toBe(true);
    expect(jobTlsPsk(A).equals(jobTlsPsk(B))).toBe(false);
    expect(jobTlsPsk(A).toString('hex')).not.toContain(A.slice(0, 16));
  });

  it('the server takes only the job identity', () => {
    const cb = jobTlsServerOptions(A).pskCallback!;
    expect(Buffer.from(cb({} as tls.TLSSocket, JOB_TLS_IDENTITY) as Uint8Array).equals(jobTlsPsk(A))).toBe(true);
    expect(cb({} as tls.TLSSocket, 'someone')).toBe(null);
  });

  it('a handshake with the same key is TLS 1.3 with an ECDH exchange; another key fails it', async () => {
    expect(await handshake(A, A)).toBe('TLSv1.3 TLS_AES_128_GCM_SHA256 ECDH');
    expect(await handshake(A, B)).toMatch(/^failed/);
    expect(await handshake(B, A)).toMatch(/^failed/);
  });

  it('a coupling\'s identity names a hash of its key, never the key; another per key and per kind', () => {
    const port = couplingTls('port', A);
    expect(port.identity).toMatch(/^tsmpi-port [0-9a-f]{24}$/);
    expect(port.identity).not.toContain(A.slice(0, 8));
    expect(port.psk).toHaveLength(32);
    expect(port.psk.equals(jobTlsPsk(A))).toBe(false);
    expect(couplingTls('port', B).identity).not.toBe(port.identity);
    expect(couplingTls('pair', A).identity).not.toBe(port.identity.replace('port', 'pair'));
    expect(couplingTls('pair', A).psk.equals(port.psk)).toBe(false);
  });

  it('a coupling\'s handshake succeeds only with the same key: another secret, or the job key, fails it (a man in the middle holds neither)', async () => {
    expect(await handshake(B, A, { kind: 'port', serverKey: A })).toBe('TLSv1.3 TLS_AES_128_GCM_SHA256 ECDH');
    expect(await handshake(B, B, { kind: 'port', serverKey: A })).toMatch(/^failed/);
    expect(await handshake(B, A, { kind: 'pair', serverKey: A })).toBe('TLSv1.3 TLS_AES_128_GCM_SHA256 ECDH');
    // A server that holds another port (and a job key equal to the client's secret) refuses it.
    expect(await handshake(A, A, { kind: 'port', serverKey: B })).toMatch(/^failed/);
  });

  it('names the peer in a failure', () => {
    expect(jobTlsFailure('10.0.0.2:4000', new Error('boom\nstack'))).toBe(
      'TLS handshake with 10.0.0.2:4000 failed (boom): the peer does not hold this job\'s key, or does not run with --secure',
    );
  });
});
