// The pipelines of converted Hugging Face bundles (config "architecture": "hf-…", written by wasm/convert/): run by
// the converted models' module (wasm/core.js initHf(), wasm/hf/bindings_hf.cpp), loaded on first use so the shipped
// modules keep their size. pipeline.js sends every bundle whose architecture starts with "hf-" here.
//
//   const generate = await pipeline('text-generation', './tests/fixtures/hf/gpt2-tiny/bundle');
//   const out = await generate('Hello', { max_new_tokens: 8 });
//   // { generated_text: 'Hello …', new_text: ' …', prompt_ids: Int32Array, new_ids: Int32Array, tokens: [...],
//   //   stopped: 'length' | 'eos', attentions: AttentionMaps of 'self-attention' [N, N] per layer × head }
//   await generate(Int32Array.of(582, 17), { max_new_tokens: 4 });  // an already-tokenized prompt
//
//   const translate = await pipeline('translation', './opus-mt-de-en/');  // a converted MarianMT bundle: the
//   // 'translation' pipeline itself (wasm/pipelines/translation.js) over this module's Translator
//
//   const classify = await pipeline('text-classification', './my-distilbert/');  // hf-bert / hf-distilbert
//   await classify('a fine film');  // { label, score, scores: [{ label, score }, …], logits, ids, tokens, attentions }
//   const embed = await pipeline('feature-extraction', './my-bert/');  // { features [T·d], dims [T, d], pooled, … }
//   const see = await pipeline('image-classification', './my-vit/');   // an image as every image pipeline takes it
//
// output_qk: true adds `qk`, the query and key vectors behind every map (the neuron view; translation: as the
// translator's). Tasks: 'text-generation' (hf-gpt2; greedy decoding as generate(do_sample=False), api/hf_generation.h),
// 'translation' (hf-marian), 'text-classification' and 'feature-extraction' (hf-bert, hf-distilbert) and
// 'image-classification' (hf-vit) (api/hf_encoders.h). Text tasks take a string or token ids (an Int32Array or
// { input_ids }). Options are the engine's contract (contract.js): unknown names are TypeErrors, bad values
// TypeErrors or RangeErrors naming the option.
import { describe, toWellFormed } from './input.js';
import { bundleFile, bundleWeights, configText, createPipeline } from './base.js';
import { checkContractOptions, contractOf, engineJson } from './contract.js';
import { createTranslationPipeline } from './translation.js';
import { toPixels } from './image.js';
import { AttentionMaps } from '../trace.js';

// What each converted architecture's task runs as; the task name a bundle's config.json declares.
const FACTORIES = {
  'text-generation': { architectures: ['hf-gpt2'], create: createTextGenerationPipeline },
  translation: { architectures: ['hf-marian'], create: (bundle, options, module) => createTranslationPipeline(bundle, options, module) },
  'text-classification': { architectures: ['hf-bert', 'hf-distilbert'], create: (b, o, m) => createEncoderPipeline('text-classification', b, o, m) },
  'feature-extraction': { architectures: ['hf-bert', 'hf-distilbert'], create: (b, o, m) => createEncoderPipeline('feature-extraction', b, o, m) },
  'image-classification': { architectures: ['hf-vit'], create: (b, o, m) => createEncoderPipeline('image-classification', b, o, m) },
};

// The engine class and its methods behind each encoder task (wasm/hf/bindings_hf.cpp).
const ENCODERS = {
  'text-classification': { cls: 'HfTextClassifier', text: 'classify', ids: 'classifyIds' },
  'feature-extraction': { cls: 'HfFeatureExtractor', text: 'extract', ids: 'extractIds' },
  'image-classification': { cls: 'HfImageClassifier', image: 'classify' },
};

/** The tasks a converted bundle can run as here (pipeline.js lists them). */
export const HF_TASKS = Object.freeze(Object.keys(FACTORIES));

/**
 * The pipeline of a converted bundle for `task` (the name its config.json "task" gives), in `module` (initHf()'s).
 * @param {string} task
 * @param {{ name: string, config: object, configText?: string, files: Record<string, Uint8Array> }} bundle
 * @param {object} options the pipeline's creation options (the task's contract)
 * @param {object} module
 */
export async function createHfPipeline(task, bundle, options, module) {
  const arch = bundle.config.architecture;
  const spec = FACTORIES[task];
  if (!spec) {
    throw new Error(`attnlens: model "${bundle.name}" (${arch}) is a ${task} model; converted ${task} models do not ` +
      `run in this version of the package (converted bundles run as: ${HF_TASKS.join(', ')})`);
  }
  if (!spec.architectures.includes(arch)) {
    throw new Error(`attnlens: model "${bundle.name}": the ${task} task runs ${spec.architectures.join(', ')} bundles, ` +
      `not ${arch}`);
  }
  return spec.create(bundle, options, module);
}

// The files of a converted bundle's tokenizer, by name (config "tokenizer": {"type": "hf", "file", "vocab"?}).
function hfTokenizerFiles(bundle, task) {
  const tok = bundle.config.tokenizer;
  if (tok?.type !== 'hf' || typeof tok.file !== 'string') {
    throw new Error(`attnlens: ${task} model ${bundle.name}: config.json has no "tokenizer": {"type": "hf", "file": …}`);
  }
  const names = typeof tok.vocab === 'string' ? [tok.file, tok.vocab] : [tok.file];
  return Object.fromEntries(names.map((n) => [n, bundleFile(bundle, n, task, { text: true })]));
}

// A prompt as the engine takes it: text (a string; lone surrogates replaced) or token ids (an Int32Array, or a
// plain array of integers given as { input_ids }).
function promptOf(input, what) {
  if (typeof input === 'string') return { text: toWellFormed(input) };
  const ids = input instanceof Int32Array ? input : input?.input_ids;
  if (ids instanceof Int32Array || (Array.isArray(ids) && ids.every((x) => Number.isInteger(x)))) {
    return { ids: Int32Array.from(ids) };
  }
  throw new TypeError(`attnlens: ${what} must be a string, an Int32Array of token ids or { input_ids: number[] }, ` +
    `got ${describe(input)}`);
}

// A result with its maps as AttentionMaps: `attentions` (empty with output_attentions false) and, with output_qk,
// `qk` — '<kind>.query' [rows, d_head] and '<kind>.key' [columns, d_head] per layer and head, kind 'self-attention'.
function withMaps(r, o) {
  const out = { ...r, attentions: new AttentionMaps((o.output_attentions ?? true) ? r.attentions : undefined) };
  if (r.qk) out.qk = new AttentionMaps(r.qk);
  return out;
}

/**
 * 'text-generation' over a converted GPT-2 bundle: greedy decoding (api::TextGenerator).
 * Options at creation become this pipeline's defaults; per call they override them (max_new_tokens, do_sample,
 * output_attentions, output_qk).
 */
async function createTextGenerationPipeline(bundle, options, module) {
  const TASK = 'text-generation';
  const contract = contractOf(TASK, '', module);
  const defaults = checkContractOptions(contract, options, 'any', `${TASK} pipeline`);
  const engine = module.TextGenerator.fromBundle(configText(bundle), bundleWeights(bundle, TASK),
    hfTokenizerFiles(bundle, TASK), String(bundle.name ?? ''));
  const run = (live, input, o, what) => {
    const prompt = promptOf(input, what);
    const json = engineJson(contract, o);
    const r = prompt.text !== undefined ? live().generate(prompt.text, json) : live().generateIds(prompt.ids, json);
    return withMaps(r, o);
  };
  const call = async (live, input, runOptions = {}) => {
    const o = { ...defaults, ...checkContractOptions(contract, runOptions, 'call', TASK) };
    if (Array.isArray(input)) return input.map((x, i) => run(live, x, o, `${TASK} input [${i}]`));
    return run(live, input, o, `${TASK} input`);
  };
  return createPipeline({
    task: TASK, bundle, engine, call,
    fields: () => ({ architecture: bundle.config.architecture }),
  });
}

/**
 * The encoders' tasks over converted BERT, DistilBERT (text) and ViT (image) bundles: one forward per input, every
 * layer × head map. Options (output_attentions, output_qk) at creation become defaults; per call they override them.
 */
async function createEncoderPipeline(task, bundle, options, module) {
  const contract = contractOf(task, '', module);
  const defaults = checkContractOptions(contract, options, 'any', `${task} pipeline`);
  const spec = ENCODERS[task];
  const files = spec.image ? {} : hfTokenizerFiles(bundle, task);
  const engine = module[spec.cls].fromBundle(configText(bundle), bundleWeights(bundle, task), files,
    String(bundle.name ?? ''));
  const labels = spec.cls === 'HfFeatureExtractor' ? undefined : [...engine.labels()];
  const run = async (live, input, o, what) => {
    const json = engineJson(contract, o);
    let r;
    if (spec.image) {
      const px = await toPixels(input, task);
      r = live()[spec.image](px.data, px.width, px.height, px.channels, json);
    } else {
      const prompt = promptOf(input, what);
      r = prompt.text !== undefined ? live()[spec.text](prompt.text, json) : live()[spec.ids](prompt.ids, json);
    }
    return withMaps(r, o);
  };
  const call = async (live, input, runOptions = {}) => {
    const o = { ...defaults, ...checkContractOptions(contract, runOptions, 'call', task) };
    if (Array.isArray(input)) {
      const out = [];
      for (const [i, x] of input.entries()) out.push(await run(live, x, o, `${task} input [${i}]`));
      return out;
    }
    return run(live, input, o, `${task} input`);
  };
  return createPipeline({
    task, bundle, engine, call,
    fields: () => ({ architecture: bundle.config.architecture, ...(labels ? { labels } : {}) }),
  });
}
