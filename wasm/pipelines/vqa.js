// The 'visual-question-answering' pipeline: questions about shapes scenes, answered by co-attention (Lu et al. 2016,
// shapes-vqa-coattn) or attention-over-attention (Cui et al. 2017, shapes-vqa-aoa) between the question's words and
// the 7×7 image grid. pipeline.js calls createVqaPipeline(bundle, options) after `await init()`.
//
//   const vqa = await pipeline('visual-question-answering', 'shapes-vqa-coattn');
//   const out = await vqa(imageData, 'what colour is the triangle?');
//   // { answer: 'green', score: 0.99, answers: ['red', …], scores: Float32Array, logits: Float32Array,
//   //   tokens: ['what', 'colour', 'is', 'the', 'triangle', '?'], token_ids: Int32Array, unknown_words: [],
//   //   count: 1.02, attention: 'parallel-co-attention',
//   //   attentions: [{ name: 'affinity', layer: 0, head: -1, dims: [6, 49], data: Float32Array }, …] }
//
// Maps (layer 0 = word level, 1 = question level): 'region_attention' [7, 7], 'word_attention' [T], 'affinity'
// [T, 49] (co-attention) or 'aoa_matching' / 'aoa_alpha' / 'aoa_beta' [T, 49] (word × region), and
// 'count_density' [7, 7] (layer 1). Images as for 'image-to-text' (ImageData, { data, width, height, channels? },
// in browsers also elements, Blobs and URLs). Run options: output_attentions (default true).
// Errors: a question that is not a string, or a wrong option type → TypeError, before WebAssembly runs; an empty
// question, one with no known word or with more than vqa.maxQuestionWords words → Error from the engine; the image
// as for 'image-to-text'.
import { getModule } from '../core.js';
import { checkBool, checkBytes, checkOptions, describe, ownEngine, toWellFormed } from './input.js';
import { toPixels } from './captioning.js';
import { AttentionMaps } from '../trace.js';

const TASK = 'visual-question-answering';
const RUN_OPTIONS = ['output_attentions'];

export async function createVqaPipeline(bundle, options = {}) {
  checkOptions(options, [], `${TASK} pipeline`);
  const config = bundle.config;
  const need = (name, what) => {
    const bytes = bundle.files?.[name];
    if (!(bytes instanceof Uint8Array)) throw new Error(`attnlens: ${TASK} model ${bundle.name}: the bundle lacks ${name} (${what})`);
    checkBytes(bytes, `${TASK} model ${bundle.name}: ${name}`, { copyShared: false });
    return bytes;
  };
  const weightsName = config.weights ?? 'weights.safetensors';
  const vocabName = config.tokenizer?.vocab ?? 'vocab.txt';
  const answersName = config.vqa?.answers ?? 'answers.txt';
  const weights = need(weightsName, 'weights');
  const files = { [vocabName]: need(vocabName, 'vocabulary'), [answersName]: need(answersName, 'answer list') };
  const enc = bundle.encoder;
  if (!enc || typeof enc !== 'object' || typeof enc.config !== 'object') {
    throw new Error(`attnlens: ${TASK} model ${bundle.name} needs its encoder bundle "${config.encoder?.bundle}" ` +
      '(loadBundle() fetches it from the sibling folder; a preloaded bundle must carry it as bundle.encoder)');
  }
  const encWeights = enc.files?.[enc.config.weights ?? 'weights.safetensors'];
  if (!(encWeights instanceof Uint8Array)) throw new Error(`attnlens: encoder bundle ${enc.name}: the weights file is missing`);
  checkBytes(encWeights, `encoder ${enc.name} weights`, { copyShared: false });
  const own = ownEngine(getModule().VisualQA.fromBundles(bundle.configText ?? JSON.stringify(config), weights, files,
    enc.configText ?? JSON.stringify(enc.config), encWeights, String(bundle.name ?? '')), TASK, bundle.name);

  const run = async (image, question, runOptions = {}) => {
    own.check();
    if (typeof question !== 'string') {
      throw new TypeError(`attnlens: ${TASK}: the question must be a string, got ${describe(question)}`);
    }
    const o = checkOptions(runOptions, RUN_OPTIONS, TASK);
    const outputAttentions = checkBool(o.output_attentions, 'output_attentions') ?? true;
    const px = await toPixels(image);
    return shape(own.engine.answer(px.data, px.width, px.height, px.channels, toWellFormed(question),
      JSON.stringify({ output_attentions: outputAttentions })));
  };
  const shape = (r) => ({
    answer: r.answer,
    score: r.score,
    answers: r.answers,
    scores: r.scores,
    logits: r.logits,
    tokens: r.tokens,
    token_ids: r.tokenIds,
    unknown_words: r.unknownWords,
    count: r.count,
    where: r.where,
    attention: r.attention,
    attentions: new AttentionMaps(r.attentions),
  });
  /** Lower level: pixels → the grid Float32Array [7·7·1285] the model reads (copies the image into the heap). */
  run.encode = async (image) => {
    own.check();
    const px = await toPixels(image);
    return own.engine.encode(px.data, px.width, px.height, px.channels);
  };
  /** A grid (from encode(), or the goldens) and a question → the same result as a call. */
  run.answerGrid = (grid, question, runOptions = {}) => {
    own.check();
    if (!(grid instanceof Float32Array)) throw new TypeError(`attnlens: ${TASK}: answerGrid() takes the grid as a Float32Array`);
    if (typeof question !== 'string') {
      throw new TypeError(`attnlens: ${TASK}: the question must be a string, got ${describe(question)}`);
    }
    const o = checkOptions(runOptions, RUN_OPTIONS, TASK);
    const outputAttentions = checkBool(o.output_attentions, 'output_attentions') ?? true;
    return shape(own.engine.answerGrid(grid, 7, toWellFormed(question), JSON.stringify({ output_attentions: outputAttentions })));
  };
  run.task = TASK;
  run.model = bundle.name;
  run.config = config;
  run.encoder = enc.name;
  run.answerList = own.engine.answerList();
  run.vocabulary = own.engine.vocabulary();
  run.maxQuestionWords = own.engine.maxQuestionWords();
  return own.attach(run);
}
