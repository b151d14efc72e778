/**
 * The address a TCP transport instance publishes: "host:port" of its one
 * listening server ("[v6-host]:port" for IPv6 literals). The handshake names
 * the channel, so one listener serves every channel the instance owns.
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
