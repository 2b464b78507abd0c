// The 'sentiment-analysis' pipeline: SST-2 classifiers (sst2-selfattn, sst2-relation) that return the attention map
// they compute. pipeline.js calls createSentimentPipeline(bundle, options) after `await init()`.
//
//   const classify = await pipeline('sentiment-analysis', 'sst2-selfattn');
//   const out = await classify("It's a charming, often affecting journey.");
//   // { label: 'POSITIVE', score: 0.99…, tokens: ['it', "'s", 'a', 'charming', ',', …],
//   //   attentions: AttentionMaps (wasm/trace.js) of [{ name: 'self-attention', layer: -1, head: -1, dims: [4, 10], data: Float32Array }],
//   //   probabilities: Float32Array [p_NEGATIVE, p_POSITIVE], labels: ['NEGATIVE', 'POSITIVE'], ids: Int32Array,
//   //   truncated: false, num_input_tokens: 10 }
//
// Text is tokenized the way SST-2 was (src/text/words.h): lowercased; punctuation split off; clitics split ("don't"
// → do n't, "it's" → it 's). Words outside the model's vocabulary appear as "<unk>" in `tokens`.
// Input: a string (lone UTF-16 surrogates become U+FFFD), UTF-8 bytes (Uint8Array; ill-formed sequences become
// U+FFFD; a detached buffer is a TypeError; SharedArrayBuffer-backed bytes are copied first), or an array of those
// (→ an array of results). Wrong types are TypeErrors; max_tokens that is NaN, ±Infinity, not an integer or
// outside 1..1024 is a RangeError (wasm/pipelines/input.js). Empty or all-space text throws an Error ("empty
// input"); only the first max_tokens tokens (default 256, option max_tokens at creation, 1..1024) are classified,
// and `truncated` says when text was cut (200,000 characters take milliseconds: tokenizing stops there).
// Attention: 'self-attention' dims [hops, T] (sst2-selfattn), 'pair-attention' dims [T, T] (sst2-relation); every
// row sums to 1.
import { getModule } from '../core.js';
import { checkBytes, describe, toWellFormed } from './input.js';
import { bundleFile, bundleWeights, configText, createPipeline } from './base.js';
import { checkContractOptions, contractOf, engineJson } from './contract.js';
import { AttentionMaps } from '../trace.js';

const TASK = 'sentiment-analysis';

/**
 * @param {{ name: string, config: object, configText: string, files: Record<string, Uint8Array> }} bundle
 * @param {{ max_tokens?: number }} [options]
 */
export async function createSentimentPipeline(bundle, options = {}) {
  const contract = contractOf(TASK);
  const params = checkContractOptions(contract, options, 'creation', `${TASK} pipeline`);
  const vocabName = bundle.config.tokenizer?.vocab;
  if (typeof vocabName !== 'string') {
    throw new Error(`attnlens: sentiment model ${bundle.name}: config.json has no tokenizer.vocab file`);
  }
  const files = { [vocabName]: bundleFile(bundle, vocabName, 'sentiment', { text: true }) };
  const engine = getModule().SentimentClassifier.fromBundle(configText(bundle), bundleWeights(bundle, 'sentiment'),
    files, engineJson(contract, params), String(bundle.name ?? ''));
  const labels = engine.labels();

  const textOf = (input, what) => {
    if (typeof input !== 'string' && !(input instanceof Uint8Array)) {
      throw new TypeError(`attnlens: ${what} must be a string (or UTF-8 bytes as a Uint8Array), got ${describe(input)}`);
    }
    return typeof input === 'string' ? toWellFormed(input) : checkBytes(input, `the ${what}`);
  };
  // The engine's result (fields as src/api/sentiment.h declares them), its maps wrapped, plus the labels.
  const shape = (r, outputAttentions) => ({
    ...r, attentions: new AttentionMaps(outputAttentions ? r.attentions : undefined), labels: [...labels],
  });

  const call = async (live, input, runOptions = {}) => {
    const o = checkContractOptions(contract, runOptions, 'call', TASK);
    const outputAttentions = o.output_attentions ?? true;
    if (Array.isArray(input)) {
      // One engine call for the list: shared among the engine's threads (the threaded module).
      const texts = input.map((x, i) => textOf(x, `${TASK} input [${i}]`));
      return live().classifyMany(texts).map((r) => shape(r, outputAttentions));
    }
    return shape(live().classify(textOf(input, `${TASK} input`)), outputAttentions);
  };
  return createPipeline({
    task: TASK, bundle, engine, call,
    fields: (e) => ({ architecture: e.architecture(), labels: [...labels], maxTokens: e.maxTokens() }),
  });
}
