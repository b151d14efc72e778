/**
 * Slurm hostlist expressions (issue 12): what SLURM_JOB_NODELIST, SLURM_NODELIST
 * and `srun --nodelist` hold, e.g. `n[1-3,5],gpu07`, `n[001-010]`,
 * `rack[1-2]-n[01-04]`, `login-1.cluster`. Pure: no I/O.
 *
 * The grammar follows Slurm's own reader (src/common/hostlist.c, 1-dimension
 * clusters):
 *  - hosts are separated by commas (also spaces, tabs, newlines) outside
 *    brackets;
 *  - a bracket holds comma-separated decimal numbers and ranges LO-HI
 *    (LO <= HI); each number is zero-padded to the width of LO as written, so
 *    `n[08-10]` is n08 n09 n10 and `n[8-10]` is n8 n9 n10;
 *  - text may stand before, between and after brackets (`a[1-2]b[3-4]-ib`);
 *    text after the last bracket is read by Slurm since 23.02.5 only (22.05
 *    calls `n[1-2]-ib` invalid), so older Slurms never hand it to us;
 *  - with several brackets Slurm expands the LAST bracket fastest; the ones in
 *    front of it are expanded by peeling the last remaining one off each time,
 *    so for two brackets the first varies slowest (a1b3 a1b4 a2b3 a2b4), and
 *    for three the middle one does. We keep Slurm's order exactly, because
 *    SLURM_TASKS_PER_NODE is listed in the node list's order.
 *  - `{...}` (hostlist functions, expanded by slurmctld) is not supported here.
 * Errors are returned, never thrown, as Error values whose message says what
 * is wrong in the expression; the caller prefixes the variable's name.
 *
 * compressHostlist is the inverse, for `srun --nodelist` and --dry-run: it
 * keeps the hosts' order and merges runs of consecutive numbers.
 */

/** Slurm refuses more hosts than this (MAX_SLURM_NODES, 64 Ki); so do we, which also bounds memory for `n[0-999999999]`. */
export const MAX_HOSTLIST_HOSTS = 65536;

/** Characters allowed in host names outside brackets (RFC 952/1123 letters, digits, '-', '.', plus '_' that sites use). */
const NAME_TEXT = /^[A-Za-z0-9._-]*$/;
const SEPARATOR = /[,\s]/;

interface Range {
  readonly lo: number;
  readonly hi: number;
  /** Digits of LO as written: every number of the range is zero-padded to it. */
  readonly width: number;
}

/** One host expression: literal text and bracket groups, alternating (text.length === groups.length + 1). */
interface Pattern {
  readonly text: readonly string[];
  readonly groups: readonly (readonly Range[])[];
}

/** Splits at separators that are outside brackets; an unbalanced bracket is an error. */
function splitTopLevel(expr: string): string[] | Error {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= expr.length; i++) {
    const c = i < expr.length ? expr[i]! : ',';
    if (c === '[') {
      if (depth > 0) return new Error(`"[" inside brackets at character ${i + 1}`);
      depth = 1;
    } else if (c === ']') {
      if (depth === 0) return new Error(`"]" without "[" at character ${i + 1}`);
      depth = 0;
    } else if (SEPARATOR.test(c) && depth === 0) {
      if (i > start) out.push(expr.slice(start, i));
      start = i + 1;
    }
  }
  if (depth > 0) return new Error('"[" is never closed');
  return out;
}

function parseRanges(body: string): Range[] | Error {
  const ranges: Range[] = [];
  for (const part of body.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (m === null) return new Error(`"[${body}]": "${part}" is not a number or a range LO-HI`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (!Number.isSafeInteger(lo) || !Number.isSafeInteger(hi)) return new Error(`"[${body}]": "${part}" is too large`);
    if (lo > hi) return new Error(`"[${body}]": range ${part} runs backwards`);
    if (hi - lo + 1 > MAX_HOSTLIST_HOSTS) return new Error(`"[${body}]": range ${part} has more than ${MAX_HOSTLIST_HOSTS} hosts`);
    ranges.push({ lo, hi, width: m[1]!.length });
  }
  return ranges;
}

function parsePattern(token: string): Pattern | Error {
  if (token.includes('{')) return new Error(`"${token}": hostlist functions {...} are not supported; give the hosts by name`);
  // ssh would read such a name as an option (and the expansion of "[1-2]" alone never starts with one).
  if (token.startsWith('-')) return new Error(`"${token}": a host name may not begin with "-"`);
  const text: string[] = [];
  const groups: Range[][] = [];
  let rest = token;
  for (;;) {
    const open = rest.indexOf('[');
    const literal = open < 0 ? rest : rest.slice(0, open);
    if (!NAME_TEXT.test(literal)) return new Error(`"${token}": "${literal}" holds a character that is not allowed in a host name`);
    text.push(literal);
    if (open < 0) break;
    const close = rest.indexOf(']', open);
    const ranges = parseRanges(rest.slice(open + 1, close));
    if (ranges instanceof Error) return ranges;
    groups.push(ranges);
    rest = rest.slice(close + 1);
  }
  if (groups.length === 0 && text[0] === '') return new Error(`"${token}" is not a host name`);
  return { text, groups };
}

function countPattern(p: Pattern): number {
  let n = 1;
  for (const g of p.groups) {
    let k = 0;
    for (const r of g) k += r.hi - r.lo + 1;
    n *= k;
    if (n > MAX_HOSTLIST_HOSTS) return n;
  }
  return n;
}

function values(group: readonly Range[]): string[] {
  const out: string[] = [];
  for (const r of group) for (let v = r.lo; v <= r.hi; v++) out.push(String(v).padStart(r.width, '0'));
  return out;
}

/**
 * Slurm's order of expansion (see the file comment): the last group is the
 * innermost loop; the loops outside it are, from the outermost, groups
 * k-2, k-3, ..., 0 (k = number of groups).
 */
function expandPattern(p: Pattern, out: string[]): void {
  const k = p.groups.length;
  if (k === 0) {
    out.push(p.text[0]!);
    return;
  }
  const order: number[] = [];
  for (let g = k - 2; g >= 0; g--) order.push(g);
  order.push(k - 1);
  const vals = p.groups.map(values);
  const chosen: string[] = new Array<string>(k).fill('');
  const walk = (depth: number): void => {
    if (depth === order.length) {
      let s = p.text[0]!;
      for (let g = 0; g < k; g++) s += chosen[g]! + p.text[g + 1]!;
      out.push(s);
      return;
    }
    const g = order[depth]!;
    for (const v of vals[g]!) {
      chosen[g] = v;
      walk(depth + 1);
    }
  };
  walk(0);
}

/**
 * Expands a hostlist expression into host names, in Slurm's order
 * (duplicates are kept, as Slurm keeps them).
 * @param expr e.g. `n[1-3,5],gpu07`
 * @returns the hosts, or an Error saying what is wrong (empty list, bad
 * range, unbalanced bracket, more than MAX_HOSTLIST_HOSTS hosts).
 * @example expandHostlist('n[01-03],gpu7') // ['n01', 'n02', 'n03', 'gpu7']
 */
export function expandHostlist(expr: string): string[] | Error {
  const tokens = splitTopLevel(expr);
  if (tokens instanceof Error) return tokens;
  if (tokens.length === 0) return new Error('no host in the list');
  const patterns: Pattern[] = [];
  let total = 0;
  for (const t of tokens) {
    const p = parsePattern(t);
    if (p instanceof Error) return p;
    total += countPattern(p);
    if (total > MAX_HOSTLIST_HOSTS) return new Error(`expands to more than ${MAX_HOSTLIST_HOSTS} hosts`);
    patterns.push(p);
  }
  const out: string[] = [];
  for (const p of patterns) expandPattern(p, out);
  return out;
}

/** Splits a host name into its text and trailing digits: 'n007' -> ['n', '007']; 'login' -> ['login', '']. */
function splitTrailingNumber(host: string): [string, string] {
  const m = /^(.*?)(\d*)$/.exec(host)!;
  // Numbers beyond 15 digits would lose precision as doubles: keep such names whole.
  if (m[2]!.length > 15) return [host, ''];
  return [m[1]!, m[2]!];
}

/**
 * Writes hosts as a compact hostlist expression that expandHostlist turns
 * back into the same list in the same order: consecutive hosts that differ
 * only in a trailing number share one bracket, and runs of consecutive
 * numbers of one width become LO-HI.
 * @param hosts host names made of letters, digits, '.', '-', '_'
 * @example compressHostlist(['n01', 'n02', 'n03', 'n05', 'gpu7']) // 'n[01-03,05],gpu7'
 */
export function compressHostlist(hosts: readonly string[]): string {
  const entries: string[] = [];
  let i = 0;
  while (i < hosts.length) {
    const [prefix, digits] = splitTrailingNumber(hosts[i]!);
    if (digits === '') {
      entries.push(hosts[i]!);
      i++;
      continue;
    }
    // Gather the following hosts with the same prefix and a trailing number.
    const nums: string[] = [digits];
    let j = i + 1;
    while (j < hosts.length) {
      const [p, d] = splitTrailingNumber(hosts[j]!);
      if (p !== prefix || d === '') break;
      nums.push(d);
      j++;
    }
    if (nums.length === 1) {
      entries.push(hosts[i]!);
      i = j;
      continue;
    }
    const parts: string[] = [];
    let a = 0;
    while (a < nums.length) {
      const lo = nums[a]!;
      const width = lo.length;
      let b = a;
      // Extend while the next number is one more and prints the same at LO's width.
      while (b + 1 < nums.length) {
        const next = nums[b + 1]!;
        const want = Number(nums[b]!) + 1;
        if (Number(next) !== want || String(want).padStart(width, '0') !== next) break;
        b++;
      }
      parts.push(b === a ? lo : `${lo}-${String(Number(nums[b]!)).padStart(width, '0')}`);
      a = b + 1;
    }
    entries.push(`${prefix}[${parts.join(',')}]`);
    i = j;
  }
  return entries.join(',');
}
