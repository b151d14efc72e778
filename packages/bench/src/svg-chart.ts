/**
 * An SVG line chart for benchmark sweeps: x = threads, y = aggregate message
 * rate, one line per configuration (e.g. "channels 4, parallel matching"
 * against "channels 1, global matching"), with axes, grid, title and legend.
 *
 * Drawn by Vega-Lite (the chart described as data) and rendered to a
 * standalone SVG document by Vega's headless SVG renderer, without a browser
 * or canvas. Rendering stays synchronous (View.run, then the scenegraph
 * through SVGStringRenderer: the same output as View.toSVG) so that callers
 * keep writing the string straight to a file. What stays ours (ADR 0009):
 * the series shape, the choice of x ticks (the measured thread counts) and
 * the colours; niceTicks and escapeXml remain for callers that format their
 * own axes or text.
 *
 * The y axis starts at 0 unless the data go below it, so that the height of a
 * line reads as a rate and two lines' heights as a ratio.
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

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
  /** 'log' for x values spanning decades (run lengths 1,000 to 100,000); default 'linear'. */
  readonly xScale?: 'linear' | 'log';
}

/** Okabe–Ito colours: distinguishable with the common colour-vision deficiencies. */
const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'] as const;
/** After the palette is used up, lines also differ by dash pattern. */
const DASHES = [[1, 0], [6, 3], [2, 3], [8, 3, 2, 3]] as const;

/** Room around the plot (axes, title, legend on the right), in pixels. */
const PADDING = { top: 40, right: 200, bottom: 56, left: 72 } as const;
/** Up to this many distinct integral x values are each given a tick. */
const MAX_EXACT_X_TICKS = 12;

/**
 * Renders series as an SVG line chart.
 *
 * @param series - one entry per line; a series without finite points appears only in the legend
 * @param opts - title (none), xLabel ('threads'), yLabel ('aggregate message rate (M messages/s)'), width (720), height (440), xScale ('linear')
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
  const names = series.map((s) => s.name);
  const rows = series.flatMap((s) =>
    s.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y)).map((p) => ({ series: s.name, x: p.x, y: p.y })),
  );
  // Thread counts are few and often powers of two: tick exactly the measured ones.
  const distinctX = [...new Set(rows.map((r) => r.x))].sort((a, b) => a - b);
  const exactX = distinctX.length > 0 && distinctX.length <= MAX_EXACT_X_TICKS && distinctX.every(Number.isInteger);
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: Math.max(10, width - PADDING.left - PADDING.right),
    height: Math.max(10, height - PADDING.top - PADDING.bottom),
    autosize: { type: 'none' },
    padding: PADDING,
    background: '#ffffff',
    ...(opts.title === undefined ? {} : { title: { text: opts.title, fontSize: 15 } }),
    data: { values: rows },
    mark: { type: 'line', point: { filled: true, size: 30 } },
    encoding: {
      x: {
        field: 'x', type: 'quantitative', title: opts.xLabel ?? 'threads',
        // One x value (or none) gives the scale no width: widen it around the value.
        scale: { nice: false, ...(opts.xScale === 'log' ? { type: 'log' as const } : { zero: false }), ...(distinctX.length <= 1 ? { domain: [(distinctX[0] ?? 1) - 1, (distinctX[0] ?? 1) + 1] } : {}) },
        axis: exactX ? { values: distinctX, format: opts.xScale === 'log' ? ',d' : 'd' } : { tickMinStep: distinctX.every(Number.isInteger) ? 1 : 0 },
      },
      y: {
        field: 'y', type: 'quantitative', title: opts.yLabel ?? 'aggregate message rate (M messages/s)',
        scale: { zero: true, nice: true, ...(rows.length === 0 ? { domain: [0, 1] } : {}) },
      },
      color: {
        field: 'series', type: 'nominal', title: null, sort: names,
        scale: { domain: names, range: names.map((_, i) => PALETTE[i % PALETTE.length]!) },
      },
      strokeDash: {
        field: 'series', type: 'nominal', title: null, sort: names,
        scale: { domain: names, range: names.map((_, i) => [...DASHES[Math.floor(i / PALETTE.length) % DASHES.length]!]) },
      },
    },
    config: { font: 'sans-serif', title: { font: 'sans-serif' }, axis: { labelFontSize: 12, titleFontSize: 12 }, legend: { labelFontSize: 12, orient: 'right', labelLimit: 0, symbolType: 'stroke' } },
  };
  return renderSvg(compile(spec).spec);
}

/** Vega's headless SVG renderer, as far as it is used here (vega's typings do not declare it). */
interface SvgStringRenderer {
  initialize(el: null, width: number, height: number, origin: readonly [number, number]): SvgStringRenderer;
  background(colour: unknown): SvgStringRenderer;
  render(scene: unknown): SvgStringRenderer;
  svg(): string;
}
const SvgRenderer = (vega as unknown as { SVGStringRenderer: new (loader: unknown) => SvgStringRenderer }).SVGStringRenderer;

/** Renders a Vega spec to an SVG document synchronously (the steps of View.toSVG without its await). */
function renderSvg(spec: vega.Spec): string {
  const view = new vega.View(vega.parse(spec), { renderer: 'none' });
  view.run();
  const p = view.padding() as { top: number; right: number; bottom: number; left: number };
  const svg = new SvgRenderer(view.loader())
    .initialize(null, view.width() + p.left + p.right, view.height() + p.top + p.bottom, [p.left, p.top])
    .background(view.background())
    .render((view.scenegraph() as unknown as { root: unknown }).root)
    .svg();
  view.finalize();
  return svg;
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
