// pipeline(task, model, options): the transformers.js-shaped entry of docs/DESIGN.md §9.
//
//   const classify = await pipeline('sentiment-analysis', 'sst2-selfattn', { progress_callback });
//   const out = await classify('a charming and often affecting journey');
//   classify.dispose();
//
// This file only resolves the task and the bundle; each task lives in wasm/pipelines/<task>.js, loaded on first use
// (a static import() string, so bundlers split it out), and turns the bundle's bytes into an engine object.
import { init, initHf } from './core.js';
import { loadBundle, env, withPrecision, missingBundleUrl } from './models.js';

const PACKAGE_MODELS = new URL('../models/', import.meta.url).href;
const isDefaultBase = (options) => (options.model_base_url ?? env.modelBaseUrl) === PACKAGE_MODELS;

export const TASKS = Object.freeze({
  'sentiment-analysis': {
    defaultModel: 'sst2-selfattn',
    models: ['sst2-selfattn', 'sst2-relation'],
    // In the repository (and the page) but not in the npm tarball, to keep the package within 25 MB.
    notPackaged: ['sst2-relation'],
    load: async () => (await import('./pipelines/sentiment.js')).createSentimentPipeline,
  },
  translation: {
    defaultModel: 'de-en-general',
    models: ['de-en-general', 'de-en-transformer', 'de-en-rnn-general', 'de-en-rnn-additive'],
    // In the repository (and the page) but not in the npm tarball, to keep the package small; package.json "files".
    notPackaged: ['de-en-transformer', 'de-en-rnn-general', 'de-en-rnn-additive'],
    load: async () => (await import('./pipelines/translation.js')).createTranslationPipeline,
  },
  'image-to-text': {
    defaultModel: 'flickr8k-mobilenet',
    models: ['flickr8k-mobilenet', 'shapes'],
    load: async () => (await import('./pipelines/captioning.js')).createCaptioningPipeline,
  },
  'number-sorting': {
    defaultModel: 'pointer-sort',
    models: ['pointer-sort'],
    load: async () => (await import('./pipelines/pointer.js')).createPointerSortPipeline,
  },
  'visual-question-answering': {
    defaultModel: 'shapes-vqa-coattn',
    models: ['shapes-vqa-coattn', 'shapes-vqa-aoa'],
    load: async () => (await import('./pipelines/vqa.js')).createVqaPipeline,
  },
  // Converted Hugging Face models only (wasm/convert/; no bundled model: pass a converted bundle's folder).
  'text-generation': { defaultModel: null, models: [], load: async () => null },
  'feature-extraction': { defaultModel: null, models: [], load: async () => null },
  'image-classification': { defaultModel: null, models: [], load: async () => null },
});

// The task a converted bundle's config.json names for each task name a caller may give ('text-classification' is
// the shipped SST-2 models' alias of 'sentiment-analysis' and a converted classifier's own task).
const HF_TASK_NAMES = { 'sentiment-analysis': 'text-classification', sentiment: 'text-classification', 'text-classification': 'text-classification' };
const isHfBundle = (bundle) => typeof bundle.config.architecture === 'string' && bundle.config.architecture.startsWith('hf-');

const ALIASES = { 'pointer-sort': 'number-sorting', 'sort': 'number-sorting', 'text-classification': 'sentiment-analysis', 'sentiment': 'sentiment-analysis', 'image-captioning': 'image-to-text', vqa: 'visual-question-answering' };

// Options pipeline() itself reads; the rest are passed to the task's factory, which rejects names it does not know.
const LOAD_OPTIONS = ['progress_callback', 'local_files_only', 'model_base_url', 'cache', 'wasm', 'precision'];
const PRECISIONS = ['f32', 'int8'];

/**
 * @param {string} task 'sentiment-analysis' | 'translation' | 'image-to-text'
 * @param {string | URL | object} [model] a bundle name, a bundle folder (URL or path), or a bundle from loadBundle()
 * @param {object} [options] { progress_callback, local_files_only, model_base_url, cache, wasm: { wasmUrl, wasmBinary },
 *   precision: 'f32' | 'int8' (how the weights a decoding step reads are kept: int8 codes with per-row scales are
 *   about 4× smaller to stream; default: the bundle's own "weight_precision", f32 when it has none) }
 */
export async function pipeline(task, model, options = {}) {
  if (typeof task !== 'string') throw new TypeError('attnlens: pipeline(task, model, options): task must be a string');
  const name = ALIASES[task] ?? task;
  const spec = TASKS[name];
  if (!spec) {
    const near = closest(task, [...Object.keys(TASKS), ...Object.keys(ALIASES)]);
    throw new Error(`attnlens: unknown task "${task}"${near.length ? `; did you mean ${quoteList(near)}?` : '.'} ` +
      `The tasks: ${Object.keys(TASKS).join(', ')} (aliases: ${Object.keys(ALIASES).join(', ')})`);
  }
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError('attnlens: pipeline options must be an object');
  }
  if (options.progress_callback !== undefined && typeof options.progress_callback !== 'function') {
    throw new TypeError('attnlens: progress_callback must be a function');
  }
  if (options.precision !== undefined && !PRECISIONS.includes(options.precision)) {
    throw new TypeError(`attnlens: precision must be one of ${PRECISIONS.map((p) => `'${p}'`).join(', ')}, got ${String(options.precision)}`);
  }
  const factoryOptions = Object.fromEntries(Object.entries(options).filter(([k]) => !LOAD_OPTIONS.includes(k)));
  await init(options.wasm ?? {});
  const loadFactory = spec.load().catch((err) => {
    throw new Error(`attnlens: the ${name} task is not available in this build of the package (${err.message})`);
  });
  loadFactory.catch(() => {}); // reported below, after the bundle's own checks
  const modelName = model ?? spec.defaultModel;
  if (modelName === null) {
    throw new TypeError(`attnlens: the ${name} task has no bundled model: pass a converted bundle (npx attnlens convert)`);
  }
  const bundle = await loadBundle(modelName, options).catch((err) => {
    throw modelNotFound(name, modelName, options, err) ?? err;
  });
  if (isHfBundle(bundle)) return serialised(await hfPipeline(HF_TASK_NAMES[task] ?? name, bundle, options, factoryOptions));
  if (typeof bundle.config.task === 'string' && bundle.config.task !== name) {
    throw new Error(`attnlens: model "${bundle.name}" is a ${bundle.config.task} model, not ${name}`);
  }
  const factory = await loadFactory;
  return serialised(await factory(withPrecision(bundle, options.precision), factoryOptions));
}

/**
 * The pipeline of a converted Hugging Face bundle (wasm/pipelines/hf.js), run by the converted models' module
 * (initHf(), loaded on first use; options.wasm.hf: { wasmUrl, jsUrl } where it is not beside this file).
 */
async function hfPipeline(task, bundle, options, factoryOptions) {
  // Any converted BERT or DistilBERT bundle also gives features (its classification head, if any, is not used).
  const features = task === 'feature-extraction' && ['hf-bert', 'hf-distilbert'].includes(bundle.config.architecture);
  if (bundle.config.task !== task && !features) {
    throw new Error(`attnlens: model "${bundle.name}" is a ${bundle.config.task} model, not ${task}`);
  }
  const [module, { createHfPipeline }] = await Promise.all([initHf(options.wasm?.hf ?? {}), import('./pipelines/hf.js')]);
  return createHfPipeline(task, withPrecision(bundle, options.precision), factoryOptions, module);
}

/**
 * The one error for a bundle name that has no bundle where it was looked up (config.json not found), or undefined
 * for any other failure: a model the package does not carry (why, and what to do), a known model whose folder is
 * not under the base, or an unknown name with the closest known names. Each says "not found" (the page's worker
 * tells a bundle missing from a build by it).
 */
function modelNotFound(task, model, options, err) {
  const folder = missingBundleUrl(err);
  if (typeof model !== 'string' || folder === undefined || /[/\\]|^[a-z][a-z0-9+.-]*:/i.test(model)) return undefined;
  const shown = (url) => (url.protocol === 'file:' ? decodeURIComponent(url.pathname) : url.href);
  const where = shown(new URL('../', folder));
  const setBase = 'point env.modelBaseUrl (or the model_base_url option) at the folder that holds it';
  const taskOf = (m) => Object.keys(TASKS).find((t) => TASKS[t].models.includes(m));
  const inPackage = (t) => TASKS[t].models.filter((m) => !TASKS[t].notPackaged?.includes(m)).join(', ');
  const own = taskOf(model);
  let message;
  if (own && TASKS[own].notPackaged?.includes(model)) {
    message = `attnlens: model "${model}" is not shipped in the npm package, which carries only ${inPackage(own)} of the ` +
      `${own} models to stay small, and was not found in ${where}. To use it, copy models/${model}/ from the ` +
      `attnlens repository and pass that folder as the model (pipeline('${own}', './models/${model}/')), or ${setBase}`;
  } else if (own) {
    message = `attnlens: model "${model}" not found in ${where}` +
      `${isDefaultBase(options) ? '' : ` (the package's own models are in ${shown(new URL(PACKAGE_MODELS))})`}; ${setBase}`;
  } else {
    const near = closest(model, Object.values(TASKS).flatMap((t) => t.models))
      .map((m) => (taskOf(m) === task ? `"${m}"` : `"${m}" (a ${taskOf(m)} model)`)).join(' or ');
    message = `attnlens: model "${model}" not found in ${where}${near ? `; did you mean ${near}?` : '.'} ` +
      `The ${task} models: ${TASKS[task].models.join(', ')} (in the npm package: ${inPackage(task)}); ` +
      'a model may also be a bundle folder (a URL, or a path in Node)';
  }
  return new Error(message, { cause: err });
}

/** The candidates nearest to `word` by edit distance (at most a third of its length, and at least 1 apart). */
function closest(word, candidates) {
  const limit = Math.max(2, Math.floor(word.length / 3));
  const scored = [...new Set(candidates)].map((c) => [c, editDistance(word.toLowerCase(), c.toLowerCase())]);
  const best = Math.min(...scored.map(([, d]) => d));
  return best > limit ? [] : scored.filter(([, d]) => d === best).map(([c]) => c);
}

function editDistance(a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const next = [i];
    for (let j = 1; j <= b.length; j += 1) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length];
}

const quoteList = (names) => names.map((n) => `"${n}"`).join(' or ');

/**
 * One call at a time per pipeline: calls made while another is running (`Promise.all([t('a'), t('b')])`, or a
 * second request while an image is still being decoded) wait in a queue and run in the order they were made, each
 * to its end before the next starts, so no two calls ever interleave (not even the items of two array inputs). A
 * call made while none is running starts at once, exactly as before. A call still queued when dispose() is called
 * rejects with the pipeline's "has been disposed" Error when its turn comes. `align()` (translation) and
 * `attend()` (image-to-text) share the queue. Every property of the task's function (task, model, dispose, disposed, …) is kept.
 */
function serialised(run) {
  let pending = 0; // calls made and not yet settled
  let tail = Promise.resolve(); // settles when the last queued call has settled
  const queue = (fn) => function queuedCall(...args) {
    const start = () => fn.apply(this, args);
    let result;
    if (pending === 0) {
      try {
        result = Promise.resolve(start());
      } catch (err) {
        result = Promise.reject(err);
      }
    } else {
      result = tail.then(start);
    }
    pending += 1;
    tail = result.then(() => { pending -= 1; }, () => { pending -= 1; });
    return result;
  };
  const out = queue(run);
  for (const key of Reflect.ownKeys(run)) {
    if (key === 'length' || key === 'name' || key === 'prototype') continue;
    const d = Object.getOwnPropertyDescriptor(run, key);
    if ((key === 'align' || key === 'attend') && typeof d.value === 'function') d.value = queue(d.value);
    Object.defineProperty(out, key, d);
  }
  return out;
}

/**
 * Task names and their bundled models, for choosers in apps; inPackage: those the npm tarball carries. The tasks
 * of converted models only (no bundled model: text-generation, feature-extraction, image-classification) are in
 * TASKS, not here.
 */
export function listTasks() {
  return Object.entries(TASKS).filter(([, spec]) => spec.defaultModel !== null).map(([task, spec]) => ({
    task, defaultModel: spec.defaultModel, models: [...spec.models],
    inPackage: spec.models.filter((m) => !spec.notPackaged?.includes(m)),
  }));
}
