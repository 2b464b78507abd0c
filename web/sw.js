// Keeps the page's own files (HTML, JS, CSS, the .wasm, example images) for offline reloads. Network first: a
// reachable server always wins, so a development reload never sees stale files; offline, the last copy is served.
// Model bundles (/models/) are not handled here: the package caches them itself (env.cacheName).
const CACHE = 'attnlens-page-v5';

// The app shell, fetched at install time so that the very first visit already works offline on reload. Files a
// build lacks (e.g. a task module) are skipped.
const SHELL = [
  './', './index.html', './style.css', './app.js', './client.js', './draw.js', './maps.js', './lab.js', './translate.js',
  './translate-views.js', './translate-panels.js', './translate-align.js', './demo.js', './overlay.js',
  './sentiment.js', './caption.js', './worker.js', './modelview.js', './headstats.js', './export.js', './state.js',
  './rollout.js', './coverage.js', './neuron.js', './heat.js', './vqa.js', './pointer.js', './open.js', './open-views.js', './open-worker.js', './lab/ui.js', './lab/plane.js', './lab/words.js', './lab/panels-plane.js',
  './lab/panels-text.js', './lab/panels-image.js', '../wasm/pipelines/input.js', '../wasm/pipelines/base.js', '../wasm/pipelines/contract.js',
  '../wasm/index.js', '../wasm/core.js', '../wasm/attention.js', '../wasm/text.js', '../wasm/pipeline.js',
  '../wasm/models.js', '../wasm/trace.js', '../wasm/pipelines/sentiment.js', '../wasm/pipelines/translation.js',
  '../wasm/pipelines/captioning.js', '../wasm/pipelines/vqa.js', '../wasm/pipelines/pointer.js',
  '../wasm/pipelines/image.js', '../wasm/pipelines/png.js', '../wasm/pipelines/jpeg.js', '../wasm/pipelines/jpeg-scan.js',
  '../wasm/pipelines/jpeg-pixels.js', '../wasm/pipelines/orientation.js', '../wasm/dist/attnlens.js', '../wasm/dist/attnlens.wasm',
  '../wasm/dist-mt/attnlens-mt.mjs', '../wasm/dist-mt/attnlens-mt.wasm', '../wasm/dist-mt/attnlens-mt.worker.js',
  '../wasm/pipelines/hf.js', '../wasm/dist/attnlens-hf.js', '../wasm/dist/attnlens-hf.wasm', '../wasm/cli.js',
  '../wasm/convert/architectures.js', '../wasm/convert/card.js', '../wasm/convert/errors.js', '../wasm/convert/index.js',
  '../wasm/convert/int8.js', '../wasm/convert/manifest.js', '../wasm/convert/safetensors.js',
  '../wasm/convert/sentencepiece.js', '../wasm/convert/tokenizer.js', '../wasm/convert/torch-bin.js',
  './examples/shapes-1.png', './examples/shapes-2.png', './examples/dog.jpg',
  './examples/surfer.jpg',
];

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await Promise.all(SHELL.map(async (file) => {
      const url = new URL(file, self.location.href);
      try {
        const response = await fetch(url, { cache: 'no-cache' });
        if (response.ok) await cache.put(url, response);
      } catch {
        // offline during install: the network-first handler fills the cache later
      }
    }));
    await self.skipWaiting();
  })());
});
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== 'GET' || url.origin !== self.location.origin || url.pathname.startsWith('/models/')) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const response = await fetch(event.request);
      if (response.ok) await cache.put(event.request, response.clone());
      return response;
    } catch (err) {
      const hit = await cache.match(event.request, { ignoreSearch: true });
      if (hit) return hit;
      throw err;
    }
  })());
});
