// The 'image-to-text' pipeline: MobileNetV2 + Show-Attend-Tell captioners (flickr8k-mobilenet, shapes) that return
// the attention over the image grid (g × g cells, g = the bundle's input size / 32: 11 for flickr8k-mobilenet,
// 7 for shapes) for every generated word. pipeline.js calls
// createCaptioningPipeline(bundle, options) after `await init()`.
//
//   const caption = await pipeline('image-to-text', 'flickr8k-mobilenet');
//   const out = await caption(imageData, { num_beams: 3 });
//   // { text: 'a dog runs through the grass', tokens: ['a', 'dog', …, '<end>'], token_ids: Int32Array,
//   //   attentions: AttentionMaps (wasm/trace.js) of [{ name: 'visual', layer: -1, head: -1, dims: [T, g, g] (g = 11: the 352×352 input), data: Float32Array }],
//   //   betas: Float32Array [T], finished: true, score: -6.1, num_beams: 3 }
//
// Inputs (wasm/pipelines/image.js): ImageData or { data: Uint8Array | Uint8ClampedArray, width, height, channels? }
// (channels 4 = RGBA, the default, 3 = RGB, 1 = grey; data.length exactly width·height·channels); a PNG or JPEG as a
// file path (Node), a file:, http(s): or data: URL, or the file's bytes (Buffer, Uint8Array, ArrayBuffer, Blob) —
// decoded in Node by png.js / jpeg.js, in browsers by createImageBitmap, EXIF orientation applied; in browsers also
// an HTMLImageElement, ImageBitmap or canvas; or an array of those (→ an array of results). Errors name the task.
// The engine composites alpha over white and resizes to the bundle's input size s × s itself (bilinear, half-pixel
// centres), so any size from 1×1 to 65536 pixels per side works (an encoded file: 16384); only the ≤ 2s source rows
// the resize needs are copied into WebAssembly, so large ImageData (8000×8000 = 256 MB) costs no second copy.
// Browser-decoded images above 16 777 216 pixels are first drawn at a smaller size (aspect kept) to bound the canvas
// memory.
// Run options: num_beams (default: the bundle's, 3; 1 = greedy), max_new_tokens (default: the bundle's max_len,
// counting the <end> step), output_attentions (default true), allow_unk (default false: the search never emits
// '<unk>' — greedy takes the best other word, beam search never keeps it; true = the reference search exactly).
// Errors, before WebAssembly runs (wasm/pipelines/input.js): a wrong type (data not a Uint8Array /
// Uint8ClampedArray, width '10', num_beams '3') is a TypeError, and so are pixels whose ArrayBuffer was detached
// (transferred); a width/height that is NaN, ±Infinity, negative, not an integer, 0 or above 65536, channels other
// than 1/3/4, data.length ≠ width·height·channels, or num_beams / max_new_tokens out of range (1..64 / 1..1000,
// NaN, Infinity) is a RangeError. SharedArrayBuffer-backed pixels are read in place.
// `tokens` has one entry per decoder step — the words, then '<end>' when the caption finished — and
// attentions.at(0).dims[0] === tokens.length: row t is where the model looked while choosing tokens[t].
//
// caption.attend(image, text, options): forced caption (teacher forcing) — the decoder runs over the given caption
// instead of searching. The text is lowercased and split like the training captions (\w+|[^\w\s]); tokens are its
// words then '<end>', words outside the vocabulary become '<unk>' and are listed in unknown_words
// [{ word, position }] (position indexes tokens). Same result shape, plus token_logprobs (Float32Array: each
// token's log-probability given the image and the words before it; score = their sum) and forced: true;
// num_beams is 0. Options: output_attentions only. Errors: text not a string → TypeError; an empty caption or one of
// more than 1000 words → Error from the engine; the image as for a caption.
import { getModule } from '../core.js';
import { describe as describeValue, toWellFormed } from './input.js';
import { checkPixels, toPixels } from './image.js';
import { bundleFile, bundleWeights, configText, createPipeline, encoderBundle } from './base.js';
import { checkContractOptions, contractOf, engineJson } from './contract.js';
import { AttentionMaps } from '../trace.js';

const TASK = 'image-to-text';

const isPixelArray = (d) => d instanceof Uint8ClampedArray || d instanceof Uint8Array;

/**
 * @param {{ name: string, config: object, configText: string, files: Record<string, Uint8Array>,
 *           encoder?: { config: object, configText: string, files: Record<string, Uint8Array> } }} bundle
 */
export async function createCaptioningPipeline(bundle, options = {}) {
  const contract = contractOf(TASK);
  const attendContract = contractOf(TASK, 'attend');
  checkContractOptions(contract, options, 'creation', `${TASK} pipeline`);
  const vocabName = bundle.config.tokenizer?.vocab ?? 'vocab.txt';
  const weights = bundleWeights(bundle, 'captioning', { copyShared: false });
  const vocab = bundleFile(bundle, vocabName, 'captioning', { what: 'vocabulary', copyShared: false });
  const enc = encoderBundle(bundle, 'captioning');
  // The grid side: config.json "image.input_size" [s, s] / 32 (the engine checks s; 224 → 7 when absent).
  const gridSide = Math.max(1, Math.round((bundle.config?.image?.input_size?.[0] ?? 224) / 32));
  const engine = getModule().Captioner.fromBundles(configText(bundle), weights, { [vocabName]: vocab },
    enc.configText, enc.weights, String(bundle.name ?? ''));

  // The engine's result (fields as src/api/captioning.h declares them) with its maps wrapped.
  const shape = (r, outputAttentions, forced = false) => ({
    ...r, attentions: new AttentionMaps(outputAttentions ? r.attentions : undefined), ...(forced ? { forced } : {}),
  });

  const call = async (live, input, runOptions = {}) => {
    const params = checkContractOptions(contract, runOptions, 'call', TASK);
    const outputAttentions = params.output_attentions ?? true;
    const paramsJson = engineJson(contract, params);
    if (Array.isArray(input)) {
      // One engine call for the list: the images are shared among the engine's threads (the threaded module).
      const images = [];
      for (const x of input) images.push(await toPixels(x, TASK));
      return live().captionMany(images.map((px) => ({ data: px.data, width: px.width, height: px.height,
        channels: px.channels })), paramsJson).map((r) => shape(r, outputAttentions));
    }
    const px = await toPixels(input, TASK);
    return shape(live().caption(px.data, px.width, px.height, px.channels, paramsJson), outputAttentions);
  };
  const methods = {
    /** Forced caption: teacher forcing of `text` on `input` (see the header). */
    attend: async (live, input, text, attendOptions = {}) => {
      if (typeof text !== 'string') {
        throw new TypeError(`attnlens: attend() caption must be a string, got ${describeValue(text)}`);
      }
      const o = checkContractOptions(attendContract, attendOptions, 'call', `${TASK} attend`);
      const px = await toPixels(input, TASK);
      return shape(live().attend(px.data, px.width, px.height, px.channels, toWellFormed(text),
        engineJson(attendContract, o)), o.output_attentions ?? true, true);
    },
    /** Lower level, for benchmarks: RGBA pixels → grid Float32Array [g·g·D] (g = s/32: 11 at flickr8k-mobilenet's 352×352 input, 7 at 224×224;
     * D = 1280 + the bundle's cell channels; copies the image into the heap). */
    encode: (live, px) => {
      if (px === null || typeof px !== 'object' || !isPixelArray(px.data)) {
        throw new TypeError('attnlens: encode() takes { data: Uint8ClampedArray | Uint8Array, width, height, channels? }');
      }
      const p = checkPixels(px, TASK);
      return live().encode(p.data, p.width, p.height, p.channels);
    },
    /** Grid (from encode) → the caption object of the engine, for benchmarks. */
    captionGrid: (live, grid, opts = {}) => live().captionGrid(grid, gridSide, gridSide,
      engineJson(contract, checkContractOptions(contract, opts, 'call', `${TASK} captionGrid`))),
  };
  return createPipeline({
    task: TASK, bundle, engine, call, methods,
    fields: (e) => ({ encoder: enc.name, vocabSize: e.vocabSize() }),
  });
}
