// The inference worker: every model runs here, so the page stays responsive while a bundle downloads or a beam
// search runs. It uses the package's public entry exactly as an app would; bundles are looked up by name under
// /models/ (env.modelBaseUrl) and kept in the Cache API by the package, so a reload works offline.
//
// Messages in:  { id, type: 'info' }
//               { id, type: 'load', task, model }
//               { id, type: 'run', task, model, input, options }
//               { id, type: 'align', task, model, source, target, options }  (translation: forced decoding of `target`)
// Messages out: { id, type: 'progress', event }  (download progress of `load`/`run`)
//               { id, type: 'result', value }     { id, type: 'error', message, missing }
import { pipeline, env, init, info } from '../wasm/index.js';

env.modelBaseUrl = new URL('../models/', self.location.href).href;

const pipes = new Map();

function getPipe(task, model, id) {
  const key = `${task}|${model}`;
  if (!pipes.has(key)) {
    const p = pipeline(task, model, {
      progress_callback: (event) => self.postMessage({ id, type: 'progress', event: { ...event, files: undefined } }),
    });
    pipes.set(key, p);
    p.catch(() => pipes.delete(key)); // a failed load may be retried
  }
  return pipes.get(key);
}

// A missing bundle or task module (HTTP 404, failed dynamic import) means "not in this build", not a bug.
function isMissing(err) {
  const m = String(err?.message ?? err);
  return /HTTP 404|not found|Failed to fetch dynamically imported module|Cannot find module|error loading dynamically imported module|Importing a module script failed/i.test(m);
}

// Results are plain objects with Float32Arrays; copy to be safe against getters or methods in them.
function plain(value) {
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? undefined : value;
  if (ArrayBuffer.isView(value)) return value.slice();
  if (Array.isArray(value)) return value.map(plain);
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'function') out[k] = plain(v);
  }
  return out;
}

self.onmessage = async ({ data }) => {
  const { id, type } = data;
  try {
    if (type === 'info') {
      await init();
      self.postMessage({ id, type: 'result', value: info() });
    } else if (type === 'load') {
      const p = await getPipe(data.task, data.model, id);
      self.postMessage({ id, type: 'result', value: { model: p.model, config: plain(p.config) } });
    } else if (type === 'run') {
      const p = await getPipe(data.task, data.model, id);
      const t0 = performance.now();
      const out = await p(data.input, data.options ?? {});
      const ms = performance.now() - t0;
      self.postMessage({ id, type: 'result', value: { output: plain(out), ms } });
    } else if (type === 'align') {
      const p = await getPipe(data.task, data.model, id);
      if (typeof p.align !== 'function') throw new Error(`the ${data.task} pipeline of ${data.model} has no align()`);
      const t0 = performance.now();
      const out = await p.align(data.source, data.target, data.options ?? {});
      const ms = performance.now() - t0;
      self.postMessage({ id, type: 'result', value: { output: plain(out), ms } });
    } else {
      throw new Error(`unknown message type ${type}`);
    }
  } catch (err) {
    self.postMessage({ id, type: 'error', message: String(err?.message ?? err), missing: isMissing(err) });
  }
};
