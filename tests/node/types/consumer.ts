// A TypeScript consumer of the package, type-checked by tests/node/types.test.mjs (`tsc --noEmit`): it must
// compile against wasm/index.d.ts, and the @ts-expect-error lines must be rejected.
import { init, info, attention, tensor, MultiHeadKvCache, BpeTokenizer, tokenizeWords, OP_NAMES, pipeline, AttentionMaps, convert } from '../../../wasm/index.js';
import type { Tensor, OpInfo, OpName, TranslationSentence, WordSpan, AttentionMap, ImageSource, SentimentPipeline, SentimentResult,
  TextClassificationResult, FeatureExtractionResult } from '../../../wasm/index.js';

export async function demo(): Promise<number> {
  await init({ wasmUrl: new URL('https://example.org/attnlens.wasm') });
  const simd: string = info().simd;
  const q: Tensor = tensor([1, 0], [1, 2]);
  const keys = tensor(new Float32Array([1, 2, 3, 4]), [2, 2]);
  const { scores } = attention.scoreScaledDot({ q, keys });
  const { weights } = attention.alignSoft({ scores }, { causal: true });
  const ops: OpInfo[] = attention.listOps();
  const first: OpName = OP_NAMES[0];
  const cache = new MultiHeadKvCache({ in_proj_weight: keys, out_proj_weight: keys }, { num_heads: 1, capacity: 8 });
  cache.append(q, q);
  const step: Tensor = cache.attend(q, { causal: true }).weights;
  cache.dispose();
  const bpe = BpeTokenizer.learn(['ein Hund'], { num_merges: 4 });
  const ids: Int32Array = bpe.encode('ein Hund').ids;
  const text: string = bpe.decode(ids);
  bpe.dispose();
  const words: string[] = tokenizeWords("it's");
  // @ts-expect-error data must be a Float32Array
  attention.scoreDot({ q: { dims: [2], data: [1, 2] }, keys });
  // @ts-expect-error not an op of the catalogue
  attention.scoreBogus({ q, keys });
  return weights.data[0] + ops.length + first.length + step.data.length + text.length + words.length + simd.length;
}

// Translation results: one result per sentence, with its place in the caller's input.
export async function sentences(): Promise<number> {
  const translate = await pipeline('translation');
  const out = await translate('Ein Hund rennt. Eine Katze schläft.');
  const spans: Array<[number, number]> = (out.sentences ?? []).map((s) => [s.source_start, s.source_end]);
  const first: TranslationSentence | undefined = out.sentences?.[0];
  const words: WordSpan[] = first?.source_words ?? [];
  // The maps: one AttentionMaps per result (views by index, by coordinates, or a kind as one tensor).
  const maps: AttentionMaps = out.attentions;
  const cross: { dims: number[]; data: Float32Array } = maps.stack('cross');
  const firstMap: AttentionMap | undefined = maps.at(0) ?? maps.get('cross', { layer: 0, head: 0 });
  const copy: AttentionMaps = AttentionMaps.from([...maps]);
  translate.dispose();
  return spans.length + words.length + cross.dims.length + (firstMap?.data.length ?? 0) + copy.length;
}

// Sorting numbers with the pointer network: the pointer distribution of every output step.
export async function sortNumbers(): Promise<number> {
  const sort = await pipeline('number-sorting');
  const out = await sort('5, 3, 9, 1');
  const again = await sort(Float64Array.of(2, 1), { encoder_attentions: false });
  const order: number[] = out.order;
  const pointer = out.attentions.find((m) => m.name === 'pointer');
  const step: Float32Array = out.step_probabilities;
  const ok: boolean = out.sorted_ok && again.sorted_ok;
  // @ts-expect-error not an option of number-sorting
  await sort([1, 2], { num_beams: 2 });
  sort.dispose();
  return order.length + (pointer?.data.length ?? 0) + step.length + sort.maxLength + (ok ? 1 : 0);
}

// Images as people have them: a path, a URL, the file's bytes, a Blob, or raw pixels.
export async function images(bytes: Uint8Array): Promise<number> {
  const caption = await pipeline('image-to-text');
  const source: ImageSource = bytes.buffer;
  const results = await caption(['photos/dog.jpg', new URL('file:///tmp/dog.png'), bytes, source, new Blob([new Uint8Array(bytes)]),
    { data: new Uint8Array(4), width: 1, height: 1 }]);
  const vqa = await pipeline('visual-question-answering');
  const answer = await vqa('scene.png', 'what colour is the circle ?');
  // @ts-expect-error a number is not an image
  await caption(42);
  caption.dispose();
  vqa.dispose();
  return results.length + answer.answer.length;
}

// A Hugging Face folder converted: from a path (Node) or from dropped files (a page).
export async function convertModels(bytes: Uint8Array, blob: Blob): Promise<number> {
  const fromFolder = await convert('./distilbert-sst2', { out: './bundle', int8: true, task: 'text-classification', name: 'sst2' });
  const fromFiles = await convert(new Map<string, Uint8Array | Blob>([['config.json', bytes], ['model.safetensors', blob]]));
  const weights: Uint8Array = fromFolder.files['weights.safetensors'];
  const architecture: string = fromFiles.config.architecture;
  // @ts-expect-error not a task a converted model does
  await convert('./x', { task: 'summarization' });
  // @ts-expect-error int8 is a boolean
  await convert('./x', { int8: 'yes' });
  return weights.length + architecture.length;
}

// 'text-classification': a bundled SST-2 model by name is the SST-2 pipeline; any other model may be a converted
// classifier or an SST-2 folder, told apart by `architecture`.
export async function classifiers(text: string): Promise<number> {
  const bundled: SentimentPipeline = await pipeline('text-classification', 'sst2-relation');
  const byDefault: SentimentPipeline = await pipeline('text-classification');
  // @ts-expect-error a folder may hold a converted classifier: not necessarily the SST-2 pipeline
  const assumed: SentimentPipeline = await pipeline('text-classification', './my-bundle/');
  const classify = await pipeline('text-classification', './my-bundle/');
  let n = 0;
  if (classify.architecture === 'hf-bert' || classify.architecture === 'hf-distilbert') {
    const out: TextClassificationResult = await classify(new Int32Array([101, 7, 102]), { output_attentions: true });
    n += out.logits.length + classify.labels.length;
  }
  switch (classify.architecture) {
    case 'hf-bert':
    case 'hf-distilbert':
      n += (await classify(text)).logits.length;
      break;
    default: {
      const out: SentimentResult = await classify(text);
      n += out.label_index + classify.maxTokens;
      // @ts-expect-error the SST-2 pipeline takes text or bytes, not token ids
      await classify(new Int32Array([101, 7, 102]));
    }
  }
  // @ts-expect-error the union is not callable before it is narrowed
  await classify(text);
  const features = await pipeline('feature-extraction', './my-bundle/', { wasm: { hf: { wasmUrl: new URL('https://example.org/attnlens-hf.wasm'), jsUrl: '/attnlens-hf.js' } } });
  // @ts-expect-error the module's location is a URL or a string
  await pipeline('feature-extraction', './my-bundle/', { wasm: { hf: { wasmUrl: 42 } } });
  const f: FeatureExtractionResult = await features(text);
  for (const p of [bundled, byDefault, assumed, classify, features]) p.dispose();
  return n + f.dims.length;
}
