import { describe, expect, it } from 'vitest';
import { escapeXml, niceTicks, renderLineChart } from './svg-chart.ts';

/**
 * A small well-formedness check (no XML dependency): one root <svg>, every
 * start tag closed in order, attributes quoted, no raw '<' or '&' in text.
 */
function checkWellFormed(svg: string): string[] {
  const problems: string[] = [];
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/y;
  let i = 0;
  let roots = 0;
  while (i < svg.length) {
    const lt = svg.indexOf('<', i);
    const text = svg.slice(i, lt === -1 ? svg.length : lt);
    if (/&(?!(amp|lt|gt|quot|apos);)/.test(text)) problems.push(`raw & in text near ${i}`);
    if (lt === -1) {
      if (text.trim() !== '') problems.push('text after the root element');
      break;
    }
    tag.lastIndex = lt;
    const m = tag.exec(svg);
    if (m === null) {
      problems.push(`malformed tag at ${lt}: ${svg.slice(lt, lt + 40)}`);
      break;
    }
    const [whole, closing, name, , selfClosing] = m;
    if (closing === '/') {
      const open = stack.pop();
      if (open !== name) problems.push(`</${name}> closes <${open ?? 'nothing'}>`);
    } else {
      if (stack.length === 0) roots++;
      if (selfClosing !== '/') stack.push(name as string);
    }
    i = lt + whole.length;
  }
  if (stack.length > 0) problems.push(`unclosed: ${stack.join(', ')}`);
  if (roots !== 1) problems.push(`expected one root element, found ${roots}`);
  return problems;
}

const series = [
  { name: 'channels 4, parallel', points: [{ x: 1, y: 0.41 }, { x: 4, y: 1.3 }, { x: 2, y: 0.78 }] },
  { name: 'channels 1, global', points: [{ x: 1, y: 0.4 }, { x: 2, y: 0.45 }, { x: 4, y: 0.47 }] },
  { name: 'Open MPI <tcp> & "ob1"', points: [{ x: 1, y: 0.2 }, { x: 2, y: 0.25 }, { x: 4, y: 0.26 }] },
];

/** The text of every <text> inside the groups whose class contains `cls`, in document order. */
function textsIn(svg: string, cls: string): string[] {
  return [...svg.matchAll(new RegExp(`<g class="[^"]*${cls}[^"]*"[^>]*>((?:<text[^>]*>[^<]*</text>)+)`, 'g'))]
    .flatMap((m) => [...m[1]!.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((t) => t[1]!));
}

describe('renderLineChart (Vega-Lite, headless SVG)', () => {
  it('produces a well-formed standalone SVG document', () => {
    const svg = renderLineChart(series, { title: 'neighbor message rate' });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('width="720" height="440"');
    expect(checkWellFormed(svg)).toEqual([]);
    expect(svg).not.toMatch(/NaN|Infinity|undefined/);
    expect(textsIn(svg, 'role-title-text')).toEqual(['neighbor message rate']);
  });

  it('draws one line per series through its points, sorted by x, with a marker per point', () => {
    const svg = renderLineChart(series);
    const lines = [...svg.matchAll(/class="mark-line role-mark[^"]*"[^>]*><path [^>]*d="([^"]*)"/g)].map((m) => m[1]!);
    expect(lines).toHaveLength(series.length);
    for (const d of lines) {
      const xs = [...d.matchAll(/[ML]([\d.]+),/g)].map((m) => Number(m[1]));
      expect(xs).toHaveLength(3);
      expect([...xs].sort((a, b) => a - b)).toEqual(xs);
    }
    const symbols = /class="mark-symbol role-mark[^"]*"[^>]*>((?:<path [^>]*\/>)+)/.exec(svg);
    expect(symbols?.[1]!.match(/<path /g)).toHaveLength(9);
  });

  it('has ticks at the measured thread counts, axis titles and a legend entry per series', () => {
    const svg = renderLineChart(series, { xLabel: 'threads', yLabel: 'M messages/s' });
    const [xLabels] = [textsIn(svg, 'role-axis-label')];
    expect(xLabels.slice(0, 3)).toEqual(['1', '2', '4']);
    expect(textsIn(svg, 'role-axis-title')).toEqual(['threads', 'M messages/s']);
    expect(textsIn(svg, 'role-legend-label')).toEqual(['channels 4, parallel', 'channels 1, global', 'Open MPI &lt;tcp&gt; &amp; "ob1"']);
  });

  it('starts the y axis at 0 and keeps every point inside the plot', () => {
    const svg = renderLineChart(series);
    const yLabels = textsIn(svg, 'role-axis-label').slice(3).map(Number);
    expect(yLabels[0]).toBe(0);
    expect(Math.max(...yLabels)).toBeGreaterThanOrEqual(1.2);
    const ys = [...svg.matchAll(/class="mark-line role-mark[^"]*"[^>]*><path [^>]*d="([^"]*)"/g)]
      .flatMap((m) => [...m[1]!.matchAll(/[ML][\d.]+,(-?[\d.]+)/g)].map((p) => Number(p[1])));
    expect(Math.min(...ys)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...ys)).toBeLessThanOrEqual(440 - 40 - 56);
  });

  it('spaces decades evenly on a log x scale and ticks the measured run lengths', () => {
    const runs = [{ name: 'tsmpi', points: [{ x: 1000, y: 0.1 }, { x: 10_000, y: 0.3 }, { x: 100_000, y: 0.5 }] }];
    const svg = renderLineChart(runs, { xScale: 'log', xLabel: 'iterations' });
    expect(checkWellFormed(svg)).toEqual([]);
    expect(textsIn(svg, 'role-axis-label').slice(0, 3)).toEqual(['1,000', '10,000', '100,000']);
    const d = /class="mark-line role-mark[^"]*"[^>]*><path [^>]*d="([^"]*)"/.exec(svg)![1]!;
    const xs = [...d.matchAll(/[ML]([\d.]+),/g)].map((m) => Number(m[1]));
    expect(xs).toHaveLength(3);
    expect(Math.abs((xs[1]! - xs[0]!) - (xs[2]! - xs[1]!))).toBeLessThan(1);
  });

  it('gives series beyond the seven colours a dash pattern', () => {
    const many = Array.from({ length: 9 }, (_, i) => ({ name: `s${i}`, points: [{ x: 1, y: i }, { x: 2, y: i + 1 }] }));
    const svg = renderLineChart(many);
    expect(svg.match(/class="mark-line role-mark[^"]*"[^>]*><path [^>]*stroke-dasharray="6,3"/g)).toHaveLength(2);
  });

  it('copes with no data, a single point and non-finite values; a series without points stays in the legend', () => {
    for (const input of [
      [],
      [{ name: 'one', points: [{ x: 2, y: 5 }] }],
      [{ name: 'holes', points: [{ x: 1, y: Number.NaN }, { x: 2, y: 1 }, { x: Infinity, y: 2 }] }, { name: 'empty', points: [] }],
    ]) {
      const svg = renderLineChart(input);
      expect(checkWellFormed(svg)).toEqual([]);
      expect(svg).not.toMatch(/NaN|Infinity/);
      expect(textsIn(svg, 'role-legend-label')).toEqual(input.map((s) => s.name));
    }
  });
});

describe('niceTicks', () => {
  it('uses 1-2-5 steps that cover the range', () => {
    expect(niceTicks(0, 0.87)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(niceTicks(0, 1.3)).toEqual([0, 0.5, 1, 1.5]);
    expect(niceTicks(0, 3, 8, true)).toEqual([0, 1, 2, 3]);
  });
});

describe('escapeXml', () => {
  it('escapes the five XML specials', () => {
    expect(escapeXml(`<a & 'b' "c">`)).toBe('&lt;a &amp; &apos;b&apos; &quot;c&quot;&gt;');
  });
});
