/**
 * A dependency-free SVG line chart for benchmark sweeps: x = threads, y =
 * aggregate message rate, one line per configuration (e.g. "channels 4,
 * parallel matching" against "channels 1, global matching"), with axes, ticks,
 * grid lines and a legend.
 *
 * The output is a standalone SVG 1.1 document (xmlns set, every text escaped)
 * that browsers, GitHub's Markdown renderer and image viewers display as is.
 * Layout, in user units:
 *
 * ```
 *  ┌──────────────────────────────────────────────────────┐
 *  │                     title                            │
 *  │  y ┤ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ┐   ── series 1     │
 *  │  l ┤        ●────●               │   ── series 2     │
 *  │  a ┤   ●───╱                     │      (legend)     │
 *  │  b ┼───┬────┬────┬────┬──────────┘                   │
 *  │        1    2    3    4   x label                    │
 *  └──────────────────────────────────────────────────────┘
 * ```
 *
 * The y axis starts at 0 unless the data go below it, so that the height of a
 * line reads as a rate and two lines' heights as a ratio.
 */

/** One measured point. */
export interface ChartPoint {
  readonly x: number;
  readonly y: number;
}

/** One line of the chart. */
export interface ChartSeries {
  /** Legend text. */
  readonly name: string;
  /** Points in any order; they are drawn sorted by x. Non-finite points are skipped. */
  readonly points: readonly ChartPoint[];
}

/** Options of {@link renderLineChart}. */
export interface LineChartOptions {
  /** Title above the plot; none by default. */
  readonly title?: string;
  /** Default 'threads'. */
  readonly xLabel?: string;
  /** Default 'aggregate message rate (M messages/s)'. */
  readonly yLabel?: string;
  /** Width in pixels; default 720. */
  readonly width?: number;
  /** Height in pixels; default 440. */
  readonly height?: number;
}

/** Okabe–Ito colours: distinguishable with the common colour-vision deficiencies. */
const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'] as const;
/** After the palette is used up, lines also differ by dash pattern. */
const DASHES = ['', '6 3', '2 3', '8 3 2 3'] as const;

const MARGIN = { top: 40, right: 200, bottom: 56, left: 72 } as const;
const FONT = 'font-family="sans-serif" font-size="12"';
/** Up to this many distinct integral x values are each given a tick. */
const MAX_EXACT_X_TICKS = 12;

/**
 * Renders series as an SVG line chart.
 *
 * @param series - one entry per line; a series without finite points appears only in the legend
 * @param opts - title (none), xLabel ('threads'), yLabel ('aggregate message rate (M messages/s)'), width (720), height (440)
 * @returns the SVG document as a string
 * @example
 * const svg = renderLineChart([
 *   { name: 'channels 4', points: [{ x: 1, y: 0.41 }, { x: 2, y: 0.78 }] },
 *   { name: 'channels 1', points: [{ x: 1, y: 0.40 }, { x: 2, y: 0.45 }] },
 * ], { title: 'neighbor message rate' });
 * writeFileSync('msgrate.svg', svg);
 */
export function renderLineChart(series: readonly ChartSeries[], opts: LineChartOptions = {}): string {
  const width = opts.width ?? 720;
  const height = opts.height ?? 440;
  const xLabel = opts.xLabel ?? 'threads';
  const yLabel = opts.yLabel ?? 'aggregate message rate (M messages/s)';
  const plotW = Math.max(10, width - MARGIN.left - MARGIN.right);
  const plotH = Math.max(10, height - MARGIN.top - MARGIN.bottom);

  const clean = series.map((s) => ({
    name: s.name,
    points: s.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y)).sort((a, b) => a.x - b.x),
  }));
  const all = clean.flatMap((s) => s.points);
  const xs = all.map((p) => p.x);
  const ys = all.map((p) => p.y);

  const isIntegralX = xs.every(Number.isInteger);
  let [xMin, xMax] = xs.length === 0 ? [0, 1] : [Math.min(...xs), Math.max(...xs)];
  if (xMin === xMax) [xMin, xMax] = [xMin - 1, xMax + 1];
  // Thread counts are few and often powers of two: tick exactly the measured ones.
  const distinctX = [...new Set(xs)].sort((a, b) => a - b);
  const xTicks =
    isIntegralX && distinctX.length > 0 && distinctX.length <= MAX_EXACT_X_TICKS
      ? distinctX
      : niceTicks(xMin, xMax, 8, isIntegralX).filter((t) => t >= xMin && t <= xMax);

  const yLow = Math.min(0, ...ys);
  let yHigh = ys.length === 0 ? 1 : Math.max(...ys);
  if (yHigh <= yLow) yHigh = yLow + 1;
  const yTicks = niceTicks(yLow, yHigh, 6, false);
  const yMin = Math.min(yLow, yTicks[0] ?? yLow);
  const yMax = Math.max(yHigh, yTicks[yTicks.length - 1] ?? yHigh);

  const sx = (x: number): number => MARGIN.left + ((x - xMin) / (xMax - xMin)) * plotW;
  const sy = (y: number): number => MARGIN.top + plotH - ((y - yMin) / (yMax - yMin)) * plotH;
  const x0 = MARGIN.left;
  const y0 = MARGIN.top + plotH;

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(opts.title ?? `${yLabel} by ${xLabel}`)}">`,
  );
  out.push(`<title>${escapeXml(opts.title ?? `${yLabel} by ${xLabel}`)}</title>`);
  out.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`);
  if (opts.title !== undefined) {
    out.push(
      `<text x="${fmt(MARGIN.left + plotW / 2)}" y="24" text-anchor="middle" font-family="sans-serif" font-size="15" font-weight="bold">${escapeXml(opts.title)}</text>`,
    );
  }

  // Grid and ticks.
  out.push('<g class="y-axis">');
  const yStep = yTicks.length > 1 ? (yTicks[1] ?? 0) - (yTicks[0] ?? 0) : 1;
  for (const t of yTicks) {
    const y = fmt(sy(t));
    out.push(`<line x1="${x0}" y1="${y}" x2="${fmt(x0 + plotW)}" y2="${y}" stroke="#e0e0e0" stroke-width="1"/>`);
    out.push(`<line x1="${x0 - 5}" y1="${y}" x2="${x0}" y2="${y}" stroke="#333333" stroke-width="1"/>`);
    out.push(`<text x="${x0 - 8}" y="${y}" dy="0.35em" text-anchor="end" ${FONT}>${formatTick(t, yStep)}</text>`);
  }
  out.push('</g>');
  out.push('<g class="x-axis">');
  const xStep = xTicks.length > 1 ? (xTicks[1] ?? 0) - (xTicks[0] ?? 0) : 1;
  for (const t of xTicks) {
    const x = fmt(sx(t));
    out.push(`<line x1="${x}" y1="${y0}" x2="${x}" y2="${y0 + 5}" stroke="#333333" stroke-width="1"/>`);
    out.push(`<text x="${x}" y="${y0 + 18}" text-anchor="middle" ${FONT}>${formatTick(t, xStep)}</text>`);
  }
  out.push('</g>');

  // Axes and their labels.
  out.push(
    `<path class="axes" d="M${x0} ${MARGIN.top}V${y0}H${fmt(x0 + plotW)}" fill="none" stroke="#333333" stroke-width="1"/>`,
  );
  out.push(`<text x="${fmt(x0 + plotW / 2)}" y="${height - 14}" text-anchor="middle" ${FONT}>${escapeXml(xLabel)}</text>`);
  const yLabelY = fmt(MARGIN.top + plotH / 2);
  out.push(
    `<text x="18" y="${yLabelY}" transform="rotate(-90 18 ${yLabelY})" text-anchor="middle" ${FONT}>${escapeXml(yLabel)}</text>`,
  );

  // Lines, markers and legend.
  const legendX = x0 + plotW + 20;
  clean.forEach((s, i) => {
    const colour = PALETTE[i % PALETTE.length] ?? '#000000';
    const dash = DASHES[Math.floor(i / PALETTE.length) % DASHES.length] ?? '';
    const dashAttr = dash === '' ? '' : ` stroke-dasharray="${dash}"`;
    const name = escapeXml(s.name);
    out.push(`<g class="series-group">`);
    if (s.points.length > 0) {
      const d = s.points.map((p, j) => `${j === 0 ? 'M' : 'L'}${fmt(sx(p.x))} ${fmt(sy(p.y))}`).join('');
      out.push(
        `<path class="series" data-series="${name}" d="${d}" fill="none" stroke="${colour}" stroke-width="2"${dashAttr}/>`,
      );
      for (const p of s.points) {
        out.push(`<circle cx="${fmt(sx(p.x))}" cy="${fmt(sy(p.y))}" r="3" fill="${colour}"><title>${name}: ${p.x}, ${p.y}</title></circle>`);
      }
    }
    const ly = MARGIN.top + 10 + i * 20;
    out.push(
      `<line class="legend" x1="${legendX}" y1="${ly}" x2="${legendX + 24}" y2="${ly}" stroke="${colour}" stroke-width="2"${dashAttr}/>`,
    );
    out.push(`<text x="${legendX + 30}" y="${ly}" dy="0.35em" ${FONT}>${name}</text>`);
    out.push('</g>');
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/**
 * Evenly spaced "nice" tick values (steps of 1, 2 or 5 times a power of ten)
 * covering [min, max]: the first tick is <= min and the last >= max.
 *
 * @param min - low end of the data
 * @param max - high end of the data (> min)
 * @param maxCount - about how many ticks to aim for; default 6
 * @param isIntegral - when true the step is at least 1 (thread counts)
 * @returns the tick values, ascending
 * @example
 * niceTicks(0, 0.87); // [0, 0.2, 0.4, 0.6, 0.8, 1]
 */
export function niceTicks(min: number, max: number, maxCount = 6, isIntegral = false): number[] {
  if (!(max > min)) return [min];
  const rough = (max - min) / Math.max(1, maxCount - 1);
  const power = 10 ** Math.floor(Math.log10(rough));
  const unit = rough / power;
  let step = (unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10) * power;
  if (isIntegral) step = Math.max(1, Math.round(step));
  const first = Math.floor(min / step + 1e-9) * step;
  const ticks: number[] = [];
  // Round each tick to the step's precision so 0.1 + 0.2 prints as 0.3.
  const digits = Math.max(0, -Math.floor(Math.log10(step)) + 1);
  for (let t = first; t < max + step * 0.999; t += step) ticks.push(Number(t.toFixed(digits)));
  return ticks;
}

/** A tick label with no more decimals than the step needs (0.2 -> "0.2", 2 -> "2"). */
function formatTick(value: number, step: number): string {
  const decimals = step > 0 && step < 1 ? Math.min(6, Math.ceil(-Math.log10(step) - 1e-9)) : 0;
  return value.toFixed(decimals);
}

/** Coordinates with at most two decimals keep the SVG small. */
function fmt(v: number): string {
  return String(Math.round(v * 100) / 100);
}

/**
 * Escapes text for use in SVG element content and attribute values.
 *
 * @param text - any string
 * @returns the string with & < > " ' replaced by entities
 * @example
 * escapeXml('a < b'); // 'a &lt; b'
 */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
