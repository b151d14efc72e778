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

describe('renderLineChart', () => {
  it('produces a well-formed standalone SVG document', () => {
    const svg = renderLineChart(series, { title: 'neighbor message rate' });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(checkWellFormed(svg)).toEqual([]);
    expect(svg).not.toMatch(/NaN|Infinity|undefined/);
  });

  it('draws one path per series, points sorted by x', () => {
    const svg = renderLineChart(series);
    const paths = [...svg.matchAll(/<path class="series" data-series="([^"]*)" d="([^"]*)"/g)];
    expect(paths).toHaveLength(series.length);
    for (const [, , d] of paths) {
      const xs = [...(d as string).matchAll(/[ML]([\d.]+) /g)].map((m) => Number(m[1]));
      expect(xs).toHaveLength(3);
      expect([...xs].sort((a, b) => a - b)).toEqual(xs);
    }
    expect(svg.match(/<circle /g)).toHaveLength(9);
  });

  it('has axes, ticks at the measured thread counts, axis labels and a legend entry per series', () => {
    const svg = renderLineChart(series, { xLabel: 'threads', yLabel: 'M messages/s' });
    expect(svg).toContain('class="axes"');
    const xLabels = [...svg.matchAll(/<text [^>]*y="\d+(?:\.\d+)?" text-anchor="middle" [^>]*>(\d+)<\/text>/g)].map((m) => m[1]);
    expect(xLabels).toEqual(['1', '2', '4']);
    expect(svg).toContain('>threads</text>');
    expect(svg).toContain('>M messages/s</text>');
    expect(svg.match(/<line class="legend"/g)).toHaveLength(series.length);
    expect(svg).toContain('>Open MPI &lt;tcp&gt; &amp; &quot;ob1&quot;</text>');
  });

  it('starts the y axis at 0 and covers the largest value', () => {
    const svg = renderLineChart(series);
    const yLabels = [...svg.matchAll(/text-anchor="end" [^>]*>([\d.]+)<\/text>/g)].map((m) => Number(m[1]));
    expect(yLabels[0]).toBe(0);
    expect(Math.max(...yLabels)).toBeGreaterThanOrEqual(1.3);
  });

  it('copes with no data, a single point and non-finite values', () => {
    for (const input of [
      [],
      [{ name: 'one', points: [{ x: 2, y: 5 }] }],
      [{ name: 'holes', points: [{ x: 1, y: Number.NaN }, { x: 2, y: 1 }, { x: Infinity, y: 2 }] }, { name: 'empty', points: [] }],
    ]) {
      const svg = renderLineChart(input);
      expect(checkWellFormed(svg)).toEqual([]);
      expect(svg).not.toMatch(/NaN|Infinity/);
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
