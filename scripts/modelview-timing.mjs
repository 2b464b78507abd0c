// How long the page's model view (web/modelview.js) takes to draw every layer × head of a BERT-base-shaped model
// (12 layers × 12 heads) at 128 and 512 tokens, in headless Chromium (Debian's, through playwright-core):
// ModelView.set() — head statistics and every thumbnail drawn into its canvas — until the next frame.
//
//   node scripts/modelview-timing.mjs [--layers 12] [--heads 12] [--tokens 128,512]
//
// Maps are seeded random rows that sum to 1 (drawing cost does not depend on the values). Prints one line per size:
// the median of three draws after one warm-up draw.
import { fileURLToPath } from 'node:url';
import { serve } from './serve.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const layers = Number(arg('layers', '12'));
const heads = Number(arg('heads', '12'));
const sizes = arg('tokens', '128,512').split(',').map(Number);

const { chromium } = await import('playwright-core');
const { server, url } = await serve(ROOT, { port: 0 });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, serviceWorkers: 'block' });
  const page = await context.newPage();
  await page.goto(`${url}draw.js`); // a plain same-origin document: the page's own app does not run
  const runs = [];
  // A first draw at the smallest size warms the modules and the JIT (not reported); then each size three times.
  for (const n of [Math.min(...sizes), ...sizes.flatMap((x) => [x, x, x])]) {
    const ms = await page.evaluate(async ({ n, layers, heads }) => {
      const { ModelView } = await import('/web/modelview.js');
      const root = document.createElement('div');
      root.style.width = '1400px';
      document.body.replaceChildren(root);
      let seed = 1;
      const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
      const tokens = Array.from({ length: n }, (_, i) => `t${i}`);
      const mapOf = () => {
        const data = new Float32Array(n * n);
        for (let r = 0; r < n; r++) {
          let s = 0;
          for (let c = 0; c < n; c++) s += (data[r * n + c] = rand());
          for (let c = 0; c < n; c++) data[r * n + c] /= s;
        }
        return { rows: n, cols: n, data, rowLabels: tokens, colLabels: tokens };
      };
      const blocks = [{ name: 'self-attention', title: 'self-attention', headName: 'head', self: true,
        layers: Array.from({ length: layers }, (_, layer) => ({ layer, maps: Array.from({ length: heads }, mapOf) })) }];
      const view = new ModelView(root);
      const t0 = performance.now();
      view.set(blocks);
      await new Promise((resolve) => requestAnimationFrame(() => resolve()));
      const t = performance.now() - t0;
      if (root.querySelectorAll('canvas').length < layers * heads) throw new Error('not every map was drawn');
      return t;
    }, { n, layers, heads });
    runs.push([n, ms]);
  }
  for (const n of sizes) {
    const times = runs.slice(1).filter(([x]) => x === n).map(([, t]) => t).sort((a, b) => a - b);
    console.log(`model view, ${layers} layers × ${heads} heads, ${n} tokens: median ${times[1].toFixed(0)} ms to draw ` +
      `(${times.map((t) => t.toFixed(0)).join(', ')})`);
  }
} finally {
  await browser.close();
  server.close();
}
