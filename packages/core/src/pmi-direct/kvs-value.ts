/**
 * How tsmpi's wire-up values travel through a PMI key/value space: PMI-1 lines
 * cannot hold a space or "=" (pmi1-wire.ts), and a published transport address
 * holds a space (" unix:" before its same-host path). Every byte outside
 * [A-Za-z0-9._:/@,+-] is written %XX, so a value is a single wire token under
 * both PMI-1 and PMI-2, and decodes back exactly.
 */

const SAFE = /^[A-Za-z0-9._:/@,+-]$/;
/** SAFE as a table over bytes. */
const IS_SAFE_BYTE = Uint8Array.from({ length: 256 }, (_, b) => (b < 0x80 && SAFE.test(String.fromCharCode(b)) ? 1 : 0));

/** The wire-safe form of `value`. */
export function encodeKvsValue(value: string): string {
  const parts: string[] = [];
  for (const byte of Buffer.from(value, 'utf8')) {
    parts.push(IS_SAFE_BYTE[byte] === 1 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`);
  }
  return parts.join('');
}

/** The value encodeKvsValue made; null when `text` is not such an encoding. */
export function decodeKvsValue(text: string): string | null {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '%') {
      const hex = text.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) return null;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (SAFE.test(ch)) bytes.push(ch.charCodeAt(0));
    else return null;
  }
  const decoded = Buffer.from(bytes).toString('utf8');
  return encodeKvsValue(decoded) === text ? decoded : null;
}
