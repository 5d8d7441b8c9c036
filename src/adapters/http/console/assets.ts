import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

/*
 * The chart library (uPlot, from node_modules: never a CDN) and the small script that draws every
 * chart of a page from its JSON data block. The console serves them as files; the HTML report inlines
 * them, so it opens with no network at all.
 */

const require = createRequire(import.meta.url)

type Asset = { readonly body: string; readonly type: string }

let cached: { readonly uplotJs: Asset; readonly uplotCss: Asset } | undefined

/** uPlot's minified script and stylesheet, read once from the installed package. */
export const chartLibrary = (): { readonly uplotJs: Asset; readonly uplotCss: Asset } => {
  cached ??= {
    uplotJs: { body: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'), type: 'text/javascript; charset=utf-8' },
    uplotCss: { body: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'), type: 'text/css; charset=utf-8' },
  }
  return cached
}

/** What a chart's JSON data block holds (`<script type="application/json" class="chart-data">`). */
export type ChartSpec = {
  readonly title: string
  /** x values: Unix seconds (days at 00:00 Asia/Bangkok). */
  readonly xs: ReadonlyArray<number>
  readonly series: ReadonlyArray<{ readonly label: string; readonly color: string; readonly values: ReadonlyArray<number | null> }>
  readonly yLabel: string
}

/**
 * Draws each `.chart` element from the JSON in its `.chart-data` child, with uPlot; the charts are kept
 * in `window.satangCharts` (tests read a plotted point back from the canvas). Plain ES5-style script:
 * no build step.
 */
export const CHARTS_JS = `(function () {
  'use strict';
  var charts = [];
  window.satangCharts = charts;
  function draw(el) {
    var dataEl = el.querySelector('script.chart-data');
    if (!dataEl || typeof uPlot === 'undefined') return;
    var spec = JSON.parse(dataEl.textContent);
    var target = el.querySelector('.chart-canvas');
    var width = Math.max(280, Math.min(960, (target.clientWidth || el.clientWidth || 600)));
    var series = [{}];
    var data = [spec.xs];
    var few = spec.xs.length <= 62;
    spec.series.forEach(function (s) {
      series.push({ label: s.label, stroke: s.color, width: 2, points: { show: few, size: 8, fill: s.color, stroke: s.color } });
      data.push(s.values);
    });
    // One day (or none): uPlot would stretch a zero-width range over years; show that day with half a day either side.
    var DAY = 86400;
    function xRange(u, min, max) {
      if (min == null || max == null) return [0, DAY];
      if (max - min < DAY) return [min - DAY / 2, max + DAY / 2];
      return [min, max];
    }
    var opts = {
      width: width,
      height: 240,
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), 'Asia/Bangkok'); },
      scales: { x: { time: true, range: xRange } },
      axes: [{}, { label: spec.yLabel, size: 70 }],
      series: series
    };
    var chart = new uPlot(opts, data, target);
    var xs = spec.xs;
    if (xs.length > 0 && xs[xs.length - 1] - xs[0] < DAY) chart.setScale('x', { min: xs[0] - DAY / 2, max: xs[xs.length - 1] + DAY / 2 });
    charts.push(chart);
    el.setAttribute('data-rendered', 'true');
  }
  function drawAll() {
    var els = document.querySelectorAll('.chart');
    for (var i = 0; i < els.length; i++) draw(els[i]);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', drawAll);
  else drawAll();
})();
`
