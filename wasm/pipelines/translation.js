// The 'translation' pipeline: de→en translators (de-en-transformer, de-en-rnn-general, de-en-rnn-additive) that
// return every attention map they compute. pipeline.js calls createTranslationPipeline(bundle, options) after
// `await init()`.
//
//   const translate = await pipeline('translation', 'de-en-transformer');
//   const out = await translate('Ein Hund rennt über die Wiese.', { num_beams: 4 });
//   // { text: 'A dog runs across the grass.',
//   //   source_tokens: ['▁Ein', '▁Hund', …, '</s>'], target_tokens: ['▁A', '▁dog', …, '</s>'],
//   //   attentions: [{ name: 'cross', layer: 0, head: 0, dims: [T, S], data: Float32Array }, …],
//   //   truncated: false, source_ids: Int32Array, target_ids: Int32Array, score: -2.9, num_beams: 4 }
//
// Options (at creation they become this pipeline's defaults; per call they override them):
//   num_beams          1 = greedy, up to 64 (default: the bundle's decoding.num_beams, 4 for the shipped models)
//   max_new_tokens     at most this many target tokens (default: 2·|source ids| + 10, within the model's positions)
//   output_attentions  true (default): every map; false: attentions = [] (faster)
//   alpha              GNMT length penalty exponent of beam search (default: the bundle's, 0.6)
//   coverage_beta      GNMT coverage penalty weight (default: the bundle's, 0 = off)
// Attention maps: Transformer — 'encoder_self' [S,S], 'decoder_self' [T,T] (causal), 'cross' [T,S] for every layer
// and head; RNNs — one 'cross' [T,S] (layer −1, head −1). Row t belongs to target_tokens[t], column s to
// source_tokens[s]; every row sums to 1.
// Input: a string (or an array of strings → an array of results). Empty text gives an empty translation; text
// longer than the model's positions is cut (`truncated: true`); unknown characters appear as '<unk>' tokens.
import { getModule } from '../core.js';

const TASK = 'translation';
const OPTIONS = ['num_beams', 'max_new_tokens', 'output_attentions', 'alpha', 'coverage_beta'];

function checkOptions(options, where) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`attnlens: ${where} options must be an object`);
  }
  const unknown = Object.keys(options).filter((k) => !OPTIONS.includes(k));
  if (unknown.length > 0) {
    throw new TypeError(`attnlens: unknown ${where} option${unknown.length > 1 ? 's' : ''} ` +
      `${unknown.map((k) => `"${k}"`).join(', ')} (known: ${OPTIONS.join(', ')})`);
  }
  const o = options;
  const intIn = (name, lo, hi) => {
    const v = o[name];
    if (v !== undefined && (!Number.isInteger(v) || v < lo || v > hi)) {
      throw new TypeError(`attnlens: ${name} must be an integer in [${lo}, ${hi}], got ${String(v)}`);
    }
  };
  intIn('num_beams', 1, 64);
  intIn('max_new_tokens', 1, 65536);
  for (const name of ['alpha', 'coverage_beta']) {
    if (o[name] !== undefined && (typeof o[name] !== 'number' || !Number.isFinite(o[name]))) {
      throw new TypeError(`attnlens: ${name} must be a finite number, got ${String(o[name])}`);
    }
  }
  if (o.output_attentions !== undefined && typeof o.output_attentions !== 'boolean') {
    throw new TypeError('attnlens: output_attentions must be a boolean');
  }
  return o;
}

function fileAsText(bundle, fileName) {
  const bytes = bundle.files?.[fileName];
  if (typeof bytes === 'string') return bytes;
  if (!(bytes instanceof Uint8Array)) {
    throw new Error(`attnlens: translation model ${bundle.name}: the bundle lacks ${fileName}`);
  }
  return new TextDecoder('utf-8').decode(bytes);
}

/**
 * @param {{ name: string, config: object, configText?: string, files: Record<string, Uint8Array> }} bundle
 * @param {{ num_beams?: number, max_new_tokens?: number, output_attentions?: boolean, alpha?: number,
 *           coverage_beta?: number }} [options]
 */
export async function createTranslationPipeline(bundle, options = {}) {
  const defaults = { ...checkOptions(options, `${TASK} pipeline`) };
  const config = bundle.config;
  const weightsName = config.weights ?? 'weights.safetensors';
  const vocabName = config.tokenizer?.vocab;
  const mergesName = config.tokenizer?.merges;
  if (typeof vocabName !== 'string' || typeof mergesName !== 'string') {
    throw new Error(`attnlens: translation model ${bundle.name}: config.json has no tokenizer.vocab/merges files`);
  }
  const weights = bundle.files?.[weightsName];
  if (!(weights instanceof Uint8Array)) {
    throw new Error(`attnlens: translation model ${bundle.name}: the bundle lacks ${weightsName}`);
  }
  const files = { [vocabName]: fileAsText(bundle, vocabName), [mergesName]: fileAsText(bundle, mergesName) };
  const configText = bundle.configText ?? JSON.stringify(config);
  let engine = getModule().Translator.fromBundle(configText, weights, files, String(bundle.name ?? ''));

  const translateOne = (input, o) => {
    if (typeof input !== 'string') {
      throw new TypeError(`attnlens: translation input must be a string, got ${input === null ? 'null' : typeof input}`);
    }
    const r = engine.translate(input, o.num_beams ?? 0, o.max_new_tokens ?? 0, o.alpha ?? NaN, o.coverage_beta ?? NaN,
      o.output_attentions ?? true);
    return {
      text: r.text,
      source_tokens: r.sourceTokens,
      target_tokens: r.targetTokens,
      attentions: r.attentions,
      truncated: r.truncated,
      source_ids: r.sourceIds,
      target_ids: r.targetIds,
      score: r.score,
      num_beams: r.numBeams,
    };
  };

  const run = async (input, runOptions = {}) => {
    if (engine === null) throw new Error(`attnlens: this ${TASK} pipeline (${bundle.name}) has been disposed`);
    const o = { ...defaults, ...checkOptions(runOptions, TASK) };
    if (Array.isArray(input)) return input.map((x) => translateOne(x, o));
    return translateOne(input, o);
  };
  run.task = TASK;
  run.model = bundle.name;
  run.config = config;
  run.architecture = engine.architecture();
  run.maxSourceTokens = engine.maxSourceTokens();
  run.dispose = () => {
    if (engine !== null) {
      engine.delete();
      engine = null;
    }
  };
  Object.defineProperty(run, 'disposed', { get: () => engine === null, enumerable: true });
  return run;
}
