// What every task's pipeline shares (docs/DESIGN.md §9): reading the bundle's files, the engine object's lifetime
// and the shape of the function pipeline() returns. A task's module (sentiment.js, translation.js, captioning.js,
// vqa.js, pointer.js) builds its engine from the bundle and says what a call does:
//
//   return createPipeline({
//     task: TASK, bundle, engine,
//     call: async (live, input, options) => … live().translate(…) …,  // the pipeline itself
//     methods: { align: async (live, source, target, options) => … },     // more entry points
//     fields: (engine) => ({ architecture: engine.architecture() }),
//     release: () => tokenizer?.delete(),                           // anything else the pipeline holds
//   });
//
// The function it returns checks, on every call and every method, that the pipeline was not disposed (an Error
// naming the task and the model otherwise) before the engine is handed over; `dispose()` frees the engine's WASM
// memory (safe to call twice) and `disposed` says whether it was. Its fields: task, model, config, then `fields`.
import { checkBytes } from './input.js';

/**
 * A file of the bundle, checked: a Uint8Array (or, with `text`, its UTF-8 text — a string file is taken as it is);
 * a missing file is an Error naming the model, the file and `what` it is.
 */
export function bundleFile(bundle, name, task, { text = false, what = '', copyShared = true } = {}) {
  const bytes = bundle.files?.[name];
  if (text && typeof bytes === 'string') return bytes;
  if (!(bytes instanceof Uint8Array)) {
    throw new Error(`attnlens: ${task} model ${bundle.name}: the bundle lacks ${name}${what ? ` (${what})` : ''}`);
  }
  const checked = checkBytes(bytes, `${task} model ${bundle.name}: ${name}`, { copyShared: text || copyShared });
  return text ? new TextDecoder('utf-8').decode(checked) : checked;
}

/** The bundle's weights file (config "weights", default weights.safetensors). */
export function bundleWeights(bundle, task, options = {}) {
  return bundleFile(bundle, bundle.config.weights ?? 'weights.safetensors', task, { what: 'weights', ...options });
}

/** config.json as text, as the engine parses it. */
export function configText(bundle) {
  return bundle.configText ?? JSON.stringify(bundle.config);
}

/**
 * The image encoder bundle a captioning or VQA bundle names (loadBundle() fetches it from the sibling folder):
 * { name, configText, weights }.
 */
export function encoderBundle(bundle, task) {
  const enc = bundle.encoder;
  if (!enc || typeof enc !== 'object' || typeof enc.config !== 'object') {
    throw new Error(`attnlens: ${task} model ${bundle.name} needs its encoder bundle "${bundle.config.encoder?.bundle}" ` +
      '(loadBundle() fetches it from the sibling folder; a preloaded bundle must carry it as bundle.encoder)');
  }
  const weights = enc.files?.[enc.config.weights ?? 'weights.safetensors'];
  if (!(weights instanceof Uint8Array)) throw new Error(`attnlens: encoder bundle ${enc.name}: the weights file is missing`);
  checkBytes(weights, `encoder ${enc.name} weights`, { copyShared: false });
  return { name: enc.name, configText: configText(enc), weights };
}

/**
 * The pipeline function around `engine` (an Embind object with delete()).
 * @param {{ task: string, bundle: object, engine: object, call: Function, methods?: Record<string, Function>,
 *           fields?: (engine: object) => object, release?: () => void }} spec
 */
export function createPipeline({ task, bundle, engine, call, methods = {}, fields = () => ({}), release = () => {} }) {
  let live = engine;
  const model = bundle.name;
  const use = () => {
    if (live === null) throw new Error(`attnlens: this ${task} pipeline (${model}) has been disposed`);
    return live;
  };
  // Each callback gets `live`: live() is the engine, or the "has been disposed" Error — asked again after every
  // await, since dispose() may run while a call waits (an image decode). Checked once on entry too: an async
  // function rejects when the pipeline was disposed, a plain one throws.
  const guard = (fn) => (fn.constructor.name === 'AsyncFunction'
    ? async (...args) => (use(), fn(use, ...args))
    : (...args) => (use(), fn(use, ...args)));
  const wrapped = guard(call);
  for (const [name, fn] of Object.entries(methods)) wrapped[name] = guard(fn);
  Object.assign(wrapped, { task, model, config: bundle.config }, fields(engine));
  wrapped.dispose = () => {
    if (live !== null) {
      live.delete();
      live = null;
    }
    release();
  };
  Object.defineProperty(wrapped, 'disposed', { get: () => live === null, enumerable: true });
  return wrapped;
}
