/**
 * mpiexec --dashboard's access token: 128 random bits, printed once in the
 * dashboard's URL on mpiexec's stderr and kept nowhere else (no file, no
 * argv, no cookie), so that another user of the machine, who can reach the
 * port, cannot read the job. Every HTTP request and WebSocket upgrade must
 * carry it as `?token=`; the comparison takes the same time whatever the
 * guess (both sides hashed to equal lengths, then timingSafeEqual).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Bytes of randomness in a token (128 bits). */
export const TOKEN_BYTES = 16;

/** A fresh token: 32 hex digits. */
export function newDashboardToken(): string {
  return randomBytes(TOKEN_BYTES).toString('hex');
}

/** The `token` query parameter of a request's URL (path and query, as Node's IncomingMessage.url gives it), or null. */
export function tokenOfUrl(url: string | undefined): string | null {
  if (url === undefined) return null;
  let parsed: URL;
  try {
    parsed = new URL(url, 'http://localhost');
  } catch {
    return null;
  }
  return parsed.searchParams.get('token');
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/** True when `given` is the token, compared in constant time (a missing token never matches). */
export function tokenMatches(token: string, given: string | null): boolean {
  if (given === null) return false;
  // Hashing first gives equal lengths (timingSafeEqual needs them) without revealing the token's length.
  return timingSafeEqual(digest(token), digest(given)) && given.length === token.length;
}
