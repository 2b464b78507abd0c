// How a model folder fares in the page's "Your model" section (web/open.js), in headless Chromium (Debian's, through
// playwright-core): the time to open it (read, convert when it is a Hugging Face folder, load into the engine), the
// memory it takes, and one run at each input length with the time its views take to draw (the model view of every
// layer × head, rollout, head view, head statistics: until the next frame).
//
//   node scripts/open-timing.mjs FOLDER [--tokens 128,512] [--int8] [--word the]
//
// Memory: the engine's WebAssembly memory after the open (it never shrinks, so it is its peak), and the peak
// resident memory of Chromium's renderer process (VmHWM in /proc; the page and its worker run there), Linux only.
// Inputs: `--word` repeated; the line says how many tokens the model read. One browser per call, so the peak is
// this model's.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from './serve.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const argv = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const folder = argv.find((a, i) => !a.startsWith('--') && !argv[i - 1]?.match(/^--(tokens|word)$/));
if (!folder) {
  console.error('usage: node scripts/open-timing.mjs FOLDER [--tokens 128,512] [--int8] [--word the]');
  process.exit(2);
}
const sizes = arg('tokens', '128,512').split(',').map(Number);
const word = arg('word', 'the');
const int8 = argv.includes('--int8');

// A switch of our own on the browser's command line tells its processes from other browsers' on the machine.
const TAG = `--attnlens-open-timing=${process.pid}`;
const read = (pid, file) => readFileSync(`/proc/${pid}/${file}`, 'utf8');
/** Whether a process descends from the browser started here. */
function ours(pid) {
  for (let p = pid, hops = 0; p > 1 && hops < 8; hops++) {
    if (read(p, 'cmdline').includes(TAG)) return true;
    p = Number(/^PPid:\s+(\d+)/m.exec(read(p, 'status'))?.[1] ?? 0);
  }
  return false;
}

/** Peak resident memory (MB) of the browser's renderer processes, from /proc (0 where there is none). */
function rendererPeakMb() {
  let peak = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (!read(pid, 'cmdline').includes('--type=renderer') || !ours(Number(pid))) continue;
      const status = read(pid, 'status');
      const kb = Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      peak = Math.max(peak, kb / 1024);
    } catch { /* the process ended */ }
  }
  return peak;
}

const { chromium } = await import('playwright-core');
const { server, url } = await serve(ROOT, { port: 0 });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: ['--no-sandbox', TAG] });
const settled = (page) => page.waitForFunction(() => {
  const s = document.getElementById('op-status');
  return s.textContent && !s.classList.contains('busy');
}, null, { timeout: 900_000 }).then(() => page.$eval('#op-status', (s) => ({ text: s.textContent, error: s.classList.contains('error') })));
try {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, serviceWorkers: 'block' });
  const page = await context.newPage();
  await page.goto(`${url}?worker-timeout=900#open`);
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 60_000 });
  if (int8) await page.check('#op-int8');
  await page.$eval('#op-status', (s) => { s.textContent = ''; });
  await page.setInputFiles('#op-folder', path.resolve(folder));
  const opened = await settled(page);
  if (opened.error) throw new Error(opened.text);
  // The engine's memory: the converted models' module as the worker loaded it (the same module instance: initHf()
  // keeps one), read inside the worker.
  const heapMb = async () => {
    const w = page.workers().find((x) => x.url().includes('/web/worker.js'));
    const bytes = await w.evaluate(async () => (await (await import('/wasm/core.js')).initHf()).HEAP8.buffer.byteLength);
    return (bytes / 1e6).toFixed(0);
  };
  console.log(`${await page.textContent('#op-model')} Engine memory: ${await heapMb()} MB.`);
  for (const n of sizes) {
    await page.fill('#op-input', Array.from({ length: Math.max(1, n - 2) }, () => word).join(' '));
    await page.$eval('#op-status', (s) => { s.textContent = ''; });
    await page.click('#op-run');
    const s = await settled(page);
    if (s.error) throw new Error(s.text);
    const thumbs = await page.$$eval('#op-mv canvas', (c) => c.length);
    console.log(`${s.text} (${thumbs} model-view maps)`);
  }
  console.log(`engine memory after the runs: ${await heapMb()} MB; peak resident memory of the renderer: ${rendererPeakMb().toFixed(0)} MB`);
} finally {
  await browser.close();
  server.close();
}
