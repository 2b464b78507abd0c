// The 'visual-question-answering' pipeline: questions about shapes scenes, answered by co-attention (Lu et al. 2016,
// shapes-vqa-coattn) or attention-over-attention (Cui et al. 2017, shapes-vqa-aoa) between the question's words and
// the 7×7 image grid. pipeline.js calls createVqaPipeline(bundle, options) after `await init()`.
//
//   const vqa = await pipeline('visual-question-answering', 'shapes-vqa-coattn');
//   const out = await vqa(imageData, 'what colour is the triangle?');
//   // { answer: 'green', score: 0.99, answers: ['red', …], scores: Float32Array, logits: Float32Array,
//   //   tokens: ['what', 'colour', 'is', 'the', 'triangle', '?'], token_ids: Int32Array, unknown_words: [],
//   //   count: 1.02, attention: 'parallel-co-attention',
//   //   attentions: AttentionMaps (wasm/trace.js) of [{ name: 'affinity', layer: 0, head: -1, dims: [6, 49], data: Float32Array }, …] }
//
// Maps (layer 0 = word level, 1 = question level): 'region_attention' [7, 7], 'word_attention' [T], 'affinity'
// [T, 49] (co-attention) or 'aoa_matching' / 'aoa_alpha' / 'aoa_beta' [T, 49] (word × region), and
// 'count_density' [7, 7] (layer 1). Images as for 'image-to-text' (wasm/pipelines/image.js: raw pixels, PNG/JPEG
// paths, URLs and bytes, in browsers also elements). Run options: output_attentions (default true).
// Errors: a question that is not a string, or a wrong option type → TypeError, before WebAssembly runs; an empty
// question, one with no known word or with more than vqa.maxQuestionWords words → Error from the engine; the image
// as for 'image-to-text'.
import { getModule } from '../core.js';
import { describe, toWellFormed } from './input.js';
import { bundleFile, bundleWeights, configText, createPipeline, encoderBundle } from './base.js';
import { toPixels } from './image.js';
import { checkContractOptions, contractOf, engineJson } from './contract.js';
import { AttentionMaps } from '../trace.js';

const TASK = 'visual-question-answering';

export async function createVqaPipeline(bundle, options = {}) {
  const contract = contractOf(TASK);
  checkContractOptions(contract, options, 'creation', `${TASK} pipeline`);
  const config = bundle.config;
  const need = (name, what) => bundleFile(bundle, name, TASK, { what, copyShared: false });
  const vocabName = config.tokenizer?.vocab ?? 'vocab.txt';
  const answersName = config.vqa?.answers ?? 'answers.txt';
  const weights = bundleWeights(bundle, TASK, { copyShared: false });
  const files = { [vocabName]: need(vocabName, 'vocabulary'), [answersName]: need(answersName, 'answer list') };
  const enc = encoderBundle(bundle, TASK);
  const engine = getModule().VisualQA.fromBundles(configText(bundle), weights, files, enc.configText, enc.weights,
    String(bundle.name ?? ''));

  const paramsOf = (runOptions) => engineJson(contract, checkContractOptions(contract, runOptions, 'call', TASK));
  const questionOf = (question) => {
    if (typeof question !== 'string') {
      throw new TypeError(`attnlens: ${TASK}: the question must be a string, got ${describe(question)}`);
    }
    return toWellFormed(question);
  };
  const shape = (r) => ({ ...r, attentions: new AttentionMaps(r.attentions) });
  const call = async (live, image, question, runOptions = {}) => {
    const q = questionOf(question);
    const params = paramsOf(runOptions);
    const px = await toPixels(image, TASK);
    return shape(live().answer(px.data, px.width, px.height, px.channels, q, params));
  };
  const methods = {
    /** Lower level: pixels → the grid Float32Array [7·7·1285] the model reads (copies the image into the heap). */
    encode: async (live, image) => {
      const px = await toPixels(image, TASK);
      return live().encode(px.data, px.width, px.height, px.channels);
    },
    /** A grid (from encode(), or the goldens) and a question → the same result as a call. */
    answerGrid: (live, grid, question, runOptions = {}) => {
      if (!(grid instanceof Float32Array)) throw new TypeError(`attnlens: ${TASK}: answerGrid() takes the grid as a Float32Array`);
      const q = questionOf(question);
      return shape(live().answerGrid(grid, 7, q, paramsOf(runOptions)));
    },
  };
  return createPipeline({
    task: TASK, bundle, engine, call, methods,
    fields: (e) => ({ encoder: enc.name, answerList: e.answerList(), vocabulary: e.vocabulary(),
      maxQuestionWords: e.maxQuestionWords() }),
  });
}
