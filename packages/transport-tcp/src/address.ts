/**
 * The address a TCP transport instance publishes: "host:port" of its one
 * listening server ("[v6-host]:port" for IPv6 literals). The handshake names
 * the channel, so one listener serves every channel the instance owns.
 *
 * When the instance also bound its same-host socket (same-host.ts) it says so,
 * and where, after one space: "host:port unix:/path". A peer on the same host
 * dials only a path published this way, so only a socket that was bound
 * (docs/adr/0029). Core passes the string on untouched.
 */
import os from 'node:os';

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/**
 * Formats the published address. A wildcard listen host (0.0.0.0, ::) is not
 * reachable as such, so the machine's host name is published instead.
 */
export function formatAddress(listenHost: string, port: number): string {
  const host = listenHost === '0.0.0.0' || listenHost === '::' || listenHost === '' ? os.hostname() : listenHost;
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Parses "host:port" or "[v6]:port"; null when malformed. */
export function parseAddress(address: string): HostPort | null {
  const colon = address.lastIndexOf(':');
  if (colon <= 0) return null;
  let host = address.slice(0, colon);
  const portText = address.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText)) return null;
  const port = Number(portText);
  if (port < 1 || port > 65535) return null;
  if (host.startsWith('[')) {
    if (!host.endsWith(']')) return null;
    host = host.slice(1, -1);
  } else if (host.includes(':')) {
    return null;
  }
  return host.length > 0 ? { host, port } : null;
}

/** What a transport published: its TCP address (as text and parsed) and its same-host socket's path, if it bound one. */
export interface PublishedAddress {
  /** "host:port" exactly as published: the handshake of a TCP connection binds it (handshake.ts). */
  readonly tcpText: string;
  readonly tcp: HostPort;
  readonly unixPath: string | null;
}

const UNIX_MARK = ' unix:';

/** The address to publish for TCP address `tcpAddress` and same-host socket `unixPath` (null: none bound). */
export function formatPublished(tcpAddress: string, unixPath: string | null): string {
  return unixPath === null ? tcpAddress : `${tcpAddress}${UNIX_MARK}${unixPath}`;
}

/** Parses what formatPublished made; null when malformed (a relative path counts as malformed). */
export function parsePublished(published: string): PublishedAddress | null {
  const at = published.indexOf(' ');
  const tcpText = at < 0 ? published : published.slice(0, at);
  const tcp = parseAddress(tcpText);
  if (tcp === null) return null;
  if (at < 0) return { tcpText, tcp, unixPath: null };
  if (!published.startsWith(UNIX_MARK, at)) return null;
  const unixPath = published.slice(at + UNIX_MARK.length);
  return unixPath.startsWith('/') ? { tcpText, tcp, unixPath } : null;
}
