// The attnlens page: four demos on the package's public API. The lab runs catalogue ops on the main thread
// (microseconds each); the three model demos run in a Web Worker (worker.js) so the page never freezes.
import { init, info } from '../wasm/index.js';
import { setupLab } from './lab.js';
import { setupTranslate } from './translate.js';
import { setupSentiment } from './sentiment.js';
import { setupCaption } from './caption.js';

const status = document.getElementById('status');

// The page itself (HTML, JS, the .wasm) is kept by a service worker so that a reload works offline; models are kept
// by the package in the Cache API. Network first, so a development reload always gets fresh files.
if ('serviceWorker' in navigator && location.protocol.startsWith('http')) {
  navigator.serviceWorker.register(new URL('./sw.js', import.meta.url)).catch((err) => {
    console.warn('attnlens: no offline support:', err.message);
  });
}

setupTranslate();
setupSentiment();
setupCaption();

try {
  await init();
  const { version, simd } = info();
  status.textContent = `attnlens ${version} loaded (kernels: ${simd}). Models run in a Web Worker and are cached after the first download.`;
  setupLab();
  document.body.dataset.ready = 'true';
} catch (err) {
  status.textContent = `Could not start attnlens: ${err.message}`;
  status.className = 'error';
  console.error(err);
}
