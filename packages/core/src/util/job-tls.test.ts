// The job's TLS configuration (job-tls.ts): the PSK is a function of the key alone, differs
// between keys and from the key, and a real TLS 1.3 handshake with it succeeds only with the
// same key (sockets on loopback; no job).
import net from 'node:net';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { JOB_TLS_IDENTITY, jobTlsClientOptions, jobTlsFailure, jobTlsPsk, jobTlsServerOptions } from './job-tls.ts';

const A = 'aa'.repeat(32);
const B = 'bb'.repeat(32);

/** One handshake between a server keyed `serverKey` and a client keyed `clientKey`: the protocol and suite, or the failure. */
function handshake(serverKey: string, clientKey: string): Promise<string> {
  return new Promise((resolve) => {
    const server = net.createServer((raw) => {
      const s = new tls.TLSSocket(raw, jobTlsServerOptions(serverKey));
      s.on('error', () => undefined);
      s.on('secure', () => s.end('hi'));
    });
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      const c = tls.connect({ host: '127.0.0.1', port, ...jobTlsClientOptions(clientKey) });
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

  it('names the peer in a failure', () => {
    expect(jobTlsFailure('10.0.0.2:4000', new Error('boom\nstack'))).toBe(
      'TLS handshake with 10.0.0.2:4000 failed (boom): the peer does not hold this job\'s key, or does not run with --secure',
    );
  });
});
