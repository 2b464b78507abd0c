// The page's side of the inference worker (worker.js): promise-returning calls with progress events, and the
// progress bar / status line each demo shows while a model downloads or runs.

const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const pending = new Map();
let nextId = 1;

worker.onmessage = ({ data }) => {
  const call = pending.get(data.id);
  if (!call) return;
  if (data.type === 'progress') {
    call.onProgress?.(data.event);
    return;
  }
  pending.delete(data.id);
  if (data.type === 'result') call.resolve(data.value);
  else {
    const err = new Error(data.message);
    err.missing = Boolean(data.missing);
    call.reject(err);
  }
};
worker.onerror = (ev) => {
  ev.preventDefault?.();
  const err = new Error(`the inference worker failed: ${ev.message || 'could not start'}`);
  for (const call of pending.values()) call.reject(err);
  pending.clear();
};

/** Sends a message to the worker; resolves with its result. */
export function call(type, payload = {}, onProgress) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, onProgress });
    worker.postMessage({ id, type, ...payload });
  });
}

const MB = (n) => `${(n / 1e6).toFixed(1)} MB`;

/**
 * Status handling for one demo: `ui.busy(text)`, `ui.progress(event)`, `ui.done(text)`, `ui.fail(err, missingText)`.
 * The progress row is a <div class="progress-row"><progress/><span/></div> shown while downloading.
 */
export function statusUi({ progress, status, button }) {
  const row = progress.parentElement;
  const label = row.querySelector('span');
  return {
    busy(text) {
      status.textContent = text;
      status.className = 'msg busy';
      if (button) button.disabled = true;
    },
    progress(event) {
      if (event.status === 'progress') {
        row.hidden = false;
        progress.value = Math.min(100, event.progress || 0);
        label.textContent = `downloading ${event.name}: ${MB(event.loaded)}${event.total ? ` of ${MB(event.total)}` : ''}`;
      } else if (event.status === 'ready') {
        progress.value = 100;
        row.hidden = true;
      }
    },
    done(text) {
      row.hidden = true;
      status.textContent = text;
      status.className = 'msg';
      if (button) button.disabled = false;
    },
    fail(err, missingText) {
      row.hidden = true;
      status.textContent = err.missing && missingText ? missingText : `Error: ${err.message}`;
      status.className = err.missing ? 'msg missing' : 'msg error';
      if (button) button.disabled = false;
      if (!err.missing) console.warn(err);
    },
  };
}

/** Runs a task in the worker with progress shown by `ui`. */
export function runTask(ui, task, model, input, options) {
  return call('run', { task, model, input, options }, (e) => ui.progress(e));
}

/** Forced decoding in the worker: how `model` aligns a given translation `target` of `source`. */
export function runAlign(ui, task, model, source, target, options) {
  return call('align', { task, model, source, target, options }, (e) => ui.progress(e));
}
