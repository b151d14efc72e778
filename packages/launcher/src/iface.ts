/**
 * Which address of a host the ranks listen on, and which names mean "this
 * machine". Pure functions over an os.networkInterfaces() table, so that
 * mpiexec and every proxy resolve `--iface` the same way, each on its own
 * host, and tests can feed made-up tables.
 *
 * Host-name resolution is never used to find an address: on Debian the host
 * name often resolves to 127.0.1.1, and several namespaced hosts may share a
 * name.
 */
import type { NetworkInterfaceInfo } from 'node:os';

export type InterfaceTable = NodeJS.Dict<NetworkInterfaceInfo[]>;

/** True for 127.0.0.0/8, ::1 and "localhost". */
export function isLoopbackAddress(a: string): boolean {
  return /^127\./.test(a) || a === '::1' || a === 'localhost' || a === '::ffff:127.0.0.1';
}

function ipv4ToInt(a: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(a);
  if (m === null) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

/** "198.18.0.0/15" -> a matcher; null when `text` is not an IPv4 CIDR. */
export function parseCidr(text: string): ((address: string) => boolean) | null {
  const m = /^([\d.]+)\/(\d{1,2})$/.exec(text);
  if (m === null) return null;
  const base = ipv4ToInt(m[1]!);
  const bits = Number(m[2]);
  if (base === null || bits > 32) return null;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (a) => {
    const n = ipv4ToInt(a);
    return n !== null && ((n & mask) >>> 0) === ((base & mask) >>> 0);
  };
}

/** Every address of the table, IPv4 first, interfaces in table order. */
function allAddresses(table: InterfaceTable): { name: string; info: NetworkInterfaceInfo }[] {
  const out: { name: string; info: NetworkInterfaceInfo }[] = [];
  for (const [name, infos] of Object.entries(table)) for (const info of infos ?? []) out.push({ name, info });
  return [...out.filter((a) => a.info.family === 'IPv4'), ...out.filter((a) => a.info.family !== 'IPv4' && !a.info.address.startsWith('fe80'))];
}

/** The non-loopback IPv4 addresses of the table (where mpiexec may be reached from other hosts). */
export function externalAddresses(table: InterfaceTable): string[] {
  return allAddresses(table).filter((a) => !a.info.internal && a.info.family === 'IPv4').map((a) => a.info.address);
}

/**
 * Resolves --iface NAME|CIDR|ADDRESS on the host that owns `table`.
 * @returns the address to listen on, or an Error whose message names what the host has
 */
export function resolveIface(spec: string, table: InterfaceTable): string | Error {
  const all = allAddresses(table);
  const byName = all.filter((a) => a.name === spec);
  if (byName.length > 0) return byName[0]!.info.address;
  const inCidr = parseCidr(spec);
  if (inCidr !== null) {
    const hit = all.find((a) => inCidr(a.info.address));
    if (hit !== undefined) return hit.info.address;
  } else {
    const hit = all.find((a) => a.info.address === spec);
    if (hit !== undefined) return hit.info.address;
  }
  const have = all.map((a) => `${a.name} ${a.info.address}`).join(', ');
  return new Error(`--iface ${spec} matches no interface, network or address of this host (it has: ${have === '' ? 'none' : have})`);
}

/** True when `text` could be an --iface value at all (a name, an address or an IPv4 CIDR). */
export function isIfaceSyntax(text: string): boolean {
  return /^[A-Za-z0-9_.:\-@]+$/.test(text) || parseCidr(text) !== null;
}

/**
 * True when `host` names this machine: "localhost", a loopback address, its
 * host name (or the name's first label), or one of its addresses.
 */
export function isThisMachine(host: string, hostname: string, table: InterfaceTable): boolean {
  const h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (h === 'localhost' || isLoopbackAddress(h)) return true;
  if (h === hostname || h === hostname.split('.')[0]) return true;
  return allAddresses(table).some((a) => a.info.address === h);
}

/** Parses "LO-HI" (1024 <= LO <= HI <= 65535, or LO >= 1 for root); an Error says what is allowed. */
export function parsePortRange(text: string): { lo: number; hi: number } | Error {
  const m = /^(\d{1,5})-(\d{1,5})$/.exec(text.trim());
  const lo = m === null ? NaN : Number(m[1]);
  const hi = m === null ? NaN : Number(m[2]);
  if (m === null || lo < 1 || hi > 65535 || lo > hi) return new Error(`--port-range ${text}: expected LO-HI with 1 <= LO <= HI <= 65535`);
  return { lo, hi };
}

/**
 * Where mpiexec's wire-up service binds, and the address its own ranks listen on (null: the
 * local end of the first proxy link, known once it linked). A job on this machine alone stays
 * on loopback; a job that spans hosts binds --iface's address or every address, and its ranks
 * here use the only non-loopback address when there is one.
 * @param hasProxies - ranks start on other hosts now (their proxies' links tell this host's address)
 * @returns ifaceError when --iface names no address of this machine (fatal only when ranks run here)
 */
export function wireupBinding(spansHosts: boolean, hasProxies: boolean, iface: string | null, table: InterfaceTable): { bindHost: string; localListen: string | null; ifaceError: Error | null } {
  if (!spansHosts) return { bindHost: '127.0.0.1', localListen: '127.0.0.1', ifaceError: null };
  if (iface !== null) {
    const a = resolveIface(iface, table);
    return a instanceof Error ? { bindHost: '0.0.0.0', localListen: null, ifaceError: a } : { bindHost: a, localListen: a, ifaceError: null };
  }
  // One non-loopback address: the only one other hosts can reach this one by, so no need to wait for a link.
  // Without proxies (only spawned processes may run elsewhere) no link will tell the address: the first one (--iface picks another).
  const external = externalAddresses(table);
  const localListen = external.length === 1 ? external[0]! : hasProxies ? null : external[0] ?? '127.0.0.1';
  return { bindHost: '0.0.0.0', localListen, ifaceError: null };
}
