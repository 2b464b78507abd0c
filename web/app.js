// The attnlens page: the model demos and the lab on the package's public API. The lab runs catalogue ops on the main
// thread (microseconds each); the model demos run in a Web Worker (worker.js) so the page never freezes. Every demo
// has the same shape, written down in demo.js: inputs → run in the worker → render into the shared view components.
import { init, info } from '../wasm/index.js';
import { call } from './client.js';
import { setupLab } from './lab.js';
import { setupTranslate } from './translate.js';
import { setupSentiment } from './sentiment.js';
import { setupCaption } from './caption.js';
import { setupVqa } from './vqa.js';
import { setupPointer } from './pointer.js';
import { setupOpen } from './open.js';
import { wireExportButtons } from './export.js';
import { INITIAL_STATE } from './state.js';
import { expandTemplates } from './demo.js';

const status = document.getElementById('status');

// The page itself (HTML, JS, the .wasm) is kept by a service worker so that a reload works offline; models are kept
// by the package in the Cache API. Network first, so a development reload always gets fresh files.
if ('serviceWorker' in navigator && location.protocol.startsWith('http')) {
  navigator.serviceWorker.register(new URL('./sw.js', import.meta.url)).catch((err) => {
    console.warn('attnlens: no offline support:', err.message);
  });
}

expandTemplates();
const demos = [
  [document.getElementById('translate'), setupTranslate()],
  [document.getElementById('caption'), setupCaption()],
  [document.getElementById('sentiment'), setupSentiment()],
  [document.getElementById('vqa'), setupVqa()],
  [document.getElementById('pointer'), setupPointer()],
  [document.getElementById('open'), setupOpen()], // runs nothing until the person opens a model
];
wireExportButtons();

// A link to another demo than the translator (?demo=sentiment&…): scroll there first, so that this demo is the one
// that runs on first sight (with the link's model and text, which its setup has put into the form).
if (INITIAL_STATE.demo && INITIAL_STATE.demo !== 'translate') {
  document.getElementById(INITIAL_STATE.demo)?.scrollIntoView({ block: 'start' });
}

// First sight: each model demo runs its example without a click, with its own progress bar. Each bundle is several
// MB, so a demo runs when its section first comes into view (the translator at once, as it is on top), one demo at
// a time, top to bottom; a demo the user has already run is left alone. A demo that scrolled out of view while
// waiting for its turn waits for the next time it is seen.
const MARGIN = 120; // px of the section that must be on screen, above the bottom edge
const inView = (el) => {
  const r = el.getBoundingClientRect();
  return r.top < innerHeight - MARGIN && r.bottom > 0;
};
let queue = Promise.resolve();
const waiting = new Map(demos);
// The demo a link names runs first, whatever else shows at the edge of the screen.
const linked = demos.find(([section]) => section.id === INITIAL_STATE.demo);
if (linked) {
  waiting.delete(linked[0]);
  queue = queue.then(() => linked[1].autorun()).catch((err) => console.warn('attnlens: first run:', err));
}
const observer = new IntersectionObserver((entries) => {
  for (const { target, isIntersecting } of entries) {
    if (!isIntersecting || !waiting.has(target)) continue;
    const demo = waiting.get(target);
    waiting.delete(target);
    observer.unobserve(target);
    queue = queue.then(() => {
      if (inView(target)) return demo.autorun();
      waiting.set(target, demo);
      observer.observe(target);
      return undefined;
    }).catch((err) => console.warn('attnlens: first run:', err)); // each demo shows its own errors
  }
}, { rootMargin: `0px 0px -${MARGIN}px 0px` });
for (const [section] of demos) observer.observe(section);

try {
  // The lab's ops run here, on the page's own thread: the single-threaded module is enough for them. The models run
  // in the Web Worker, which loads the threaded module when the page is cross-origin isolated (the dev server sends
  // COOP/COEP); the status line says what the worker got.
  await init({ threads: 1 });
  const { version, simd } = info();
  status.textContent = `attnlens ${version} loaded (kernels: ${simd}). Models run in a Web Worker and are cached after the first download.`;
  setupLab();
  document.body.dataset.ready = 'true';
  call('info').then((w) => {
    document.body.dataset.workerThreads = String(w.threads);
    status.textContent = `attnlens ${version} loaded (kernels: ${simd}, ${w.threads === 1 ? 'one thread' : `${w.threads} threads`}). ` +
      'Models run in a Web Worker and are cached after the first download.';
  }).catch((err) => console.warn('attnlens: worker info:', err));
} catch (err) {
  status.textContent = `Could not start attnlens: ${err.message}`;
  status.className = 'error';
  console.error(err);
}
