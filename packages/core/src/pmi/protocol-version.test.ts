// A rank and an mpiexec of different tsmpi versions (PMI_PROTOCOL_VERSION) say so at the first step where they
// meet, with the raw text each side reads: the wire-up URL (an older mpiexec's ws://), the link's opening in both
// directions (link-frames.ts), and the challenge's version (client.ts, through versionMismatch).
import { describe, expect, it } from 'vitest';
import {
  LINK_REQUEST, LINK_RESPONSE, LINK_UPGRADE, LINK_VERSION_HEADER, LINK_VERSION_REFUSAL, linkRequestError, linkResponseError,
} from './link-frames.ts';
import { PMI_PROTOCOL_VERSION, versionMismatch, wireupUrlError } from './protocol.ts';

const V = PMI_PROTOCOL_VERSION;
const MISMATCH = /^mpiexec and the rank are from different tsmpi versions: wire-up protocol \S+ vs \d+ /;

/** A head as the process reads it: the bytes before the blank line. */
function headOf(response: string): string {
  return response.slice(0, response.indexOf('\r\n\r\n'));
}

describe('the wire-up protocol version', () => {
  it('is 3 since the rank link left WebSockets (97682ac), and both opening heads name it', () => {
    expect(V).toBe(3);
    for (const head of [LINK_REQUEST, LINK_RESPONSE, LINK_VERSION_REFUSAL]) expect(head).toContain(`\r\n${LINK_VERSION_HEADER}: ${V}\r\n`);
  });

  it('says which versions differ, mpiexec\'s first', () => {
    expect(versionMismatch(2)).toBe(`mpiexec and the rank are from different tsmpi versions: wire-up protocol 2 vs ${V} (mpiexec's vs the rank's); run both from one installation`);
    expect(versionMismatch(4, 3)).toMatch(/: wire-up protocol 4 vs 3 /);
    // What stood in a version's place is cut: a peer cannot fill the line.
    expect(versionMismatch('9'.repeat(500)).length).toBeLessThan(200);
  });

  it('an older mpiexec\'s ws:// or wss:// URL is protocol 2; any other bad URL is just not one', () => {
    expect(wireupUrlError('ws://127.0.0.1:4000')).toBe(versionMismatch(2));
    expect(wireupUrlError('wss://10.0.0.1:4000')).toBe(versionMismatch(2));
    expect(wireupUrlError('http://x:1')).toBe('the wire-up URL "http://x:1" is not tcp://host:port or tls://host:port');
  });

  it('mpiexec accepts a link opening of its own version only (the header as Node\'s http hands it over)', () => {
    expect(linkRequestError(String(V))).toBeNull();
    expect(linkRequestError(` ${V} `)).toBeNull();
    expect(linkRequestError(String(V + 1))).toBe(`a rank link of another tsmpi version: wire-up protocol ${V + 1}, this mpiexec's ${V}`);
    expect(linkRequestError(undefined)).toMatch(/wire-up protocol \(not named\)/);
    expect(linkRequestError([String(V), String(V)])).toMatch(/another tsmpi version/);
  });

  it('the rank goes on after its own version\'s 101 only', () => {
    expect(linkResponseError(headOf(LINK_RESPONSE))).toBeNull();
    // Header names in any case, as HTTP allows.
    expect(linkResponseError(`HTTP/1.1 101 Switching Protocols\r\nupgrade: ${LINK_UPGRADE}\r\ntsmpi-pmi-version: ${V}`)).toBeNull();
  });

  it('the rank reads an mpiexec of another version from its refusal or its 101, and names both versions', () => {
    const refusal = `HTTP/1.1 426 Upgrade Required\r\nConnection: close\r\nUpgrade: ${LINK_UPGRADE}\r\n${LINK_VERSION_HEADER}: ${V + 1}`;
    expect(linkResponseError(refusal)).toBe(versionMismatch(V + 1));
    expect(linkResponseError(refusal)).toMatch(MISMATCH);
    const newer101 = `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${LINK_UPGRADE}\r\n${LINK_VERSION_HEADER}: ${V + 1}`;
    expect(linkResponseError(newer101)).toBe(versionMismatch(V + 1));
  });

  it('any other answer is not the service\'s (a plain HTTP server, a 101 without the version)', () => {
    expect(linkResponseError('HTTP/1.1 400 Bad Request\r\nConnection: close')).toBe('the wire-up service did not accept the link (HTTP/1.1 400 Bad Request)');
    expect(linkResponseError(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${LINK_UPGRADE}`)).toMatch(/^the wire-up service did not accept the link/);
    expect(linkResponseError(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n${LINK_VERSION_HEADER}: ${V}`)).toMatch(/^the wire-up service did not accept the link/);
  });
});
