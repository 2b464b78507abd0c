// Types for the attnlens package (wasm/index.js). The op docs were written from listOps(); tests/node checks that
// this file declares exactly the ops of OP_NAMES.

/** A dense row-major float32 tensor; data.length equals the product of dims ([] or [1] for a scalar). */
export interface Tensor {
  dims: number[];
  data: Float32Array;
}

/** Named tensors, with the names of the golden files tests/goldens/attention/<op>.json. */
export type Tensors = Record<string, Tensor>;

/** JSON-serialisable op params (sizes, flags, seeds). Unknown keys are an error. */
export type Params = Record<string, number | boolean | string | number[]>;

export interface InitOptions {
  /** Where to fetch attnlens.wasm from (default: new URL('./dist/attnlens.wasm', import.meta.url)). */
  wasmUrl?: string | URL;
  /** The module's bytes, when the caller already has them (takes precedence over wasmUrl). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /**
   * 'auto' (default) or 1–16. Where threads can run (Node, or a cross-origin-isolated page: threadsAvailable()) and
   * more than one is asked for, the threaded module (wasm/dist-mt/) starts with that many threads ('auto': the
   * hardware's, at most 4); otherwise the single-threaded module. Results are the same either way. wasmUrl /
   * wasmBinary choose the single-threaded module.
   */
  threads?: 'auto' | number;
  /**
   * pipeline() with a converted bundle: where the converted models' module is, when it is not served beside the
   * package's wasm/core.js (default: new URL('./dist/attnlens-hf.wasm' and './dist/attnlens-hf.js', import.meta.url)).
   */
  hf?: { wasmUrl?: string | URL; jsUrl?: string | URL };
}

/** Loads the WebAssembly module once; call (and await) before any attention op. */
export function init(options?: InitOptions): Promise<unknown>;
export function isReady(): boolean;
/** Library version, the kernels' SIMD path ("wasm-simd128"), the WASM heap size in bytes, the threads in use,
 * whether the threaded module is loaded, and why it is not when it was wanted and failed to load. */
export function info(): { version: string; simd: string; heapBytes: number; threads: number; threaded: boolean;
  threadedLoadError?: string };
/** Threads the engine uses (1 in the single-threaded module). */
export function threads(): number;
/** Changes the threads in use, from 1 up to what init() started; returns the count in force. RangeError beyond. */
export function setThreads(n: number): number;
/** Whether the threaded module can run here (Node, or SharedArrayBuffer in a cross-origin-isolated page). */
export function threadsAvailable(): boolean;

/** Memory of the WebAssembly module (a diagnostic; memoryStats() needs init() first). */
export interface MemoryStats {
  /** Size of the WebAssembly memory in bytes; it only ever grows. */
  heapBytes: number;
  /** Bytes malloc has taken from that memory; it only ever grows. */
  arenaBytes: number;
  /** Bytes in live malloc blocks: back to its level once a call's objects are freed, so a leak shows here. */
  usedBytes: number;
  /** Bytes free inside the arena. */
  freeBytes: number;
}
export function memoryStats(): MemoryStats;

export interface OpInfo {
  name: string;
  family: 'score' | 'alignment' | 'context' | 'composite' | 'analysis';
  formula: string;
  paper: string;
  inputs: string[];
  optionalInputs: string[];
  outputs: string[];
  /** JSON text describing the params the op reads, with their defaults. */
  params: string;
}

export type OpName =
  | 'score_dot'
  | 'score_scaled_dot'
  | 'score_general'
  | 'score_additive'
  | 'score_cosine'
  | 'score_location'
  | 'align_soft'
  | 'align_local_m'
  | 'align_local_p'
  | 'align_hard_argmax'
  | 'align_hard_sample'
  | 'soft_context'
  | 'key_value_attention'
  | 'multi_head_attention'
  | 'structured_self_attention'
  | 'relation_self_attention'
  | 'co_attention_parallel'
  | 'co_attention_max_pooled'
  | 'co_attention_alternating'
  | 'attention_over_attention'
  | 'hierarchical_attention'
  | 'pointer_attention'
  | 'coverage_attention'
  | 'coverage_penalty'
  | 'position_weighted_memory'
  | 'visual_soft_attention'
  | 'doubly_stochastic_penalty'
  | 'attention_rollout'
  | 'attention_flow';

export const OP_NAMES: readonly OpName[];
export function listOps(): OpInfo[];
/** Builds a tensor; dims default to [data.length]. */
export function tensor(data: Float32Array | ArrayLike<number>, dims?: number[]): Tensor;

export interface MultiHeadKvCacheWeights {
  in_proj_weight: Tensor;   // [3E, E]
  in_proj_bias?: Tensor;    // [3E]
  out_proj_weight: Tensor;  // [E, E]
  out_proj_bias?: Tensor;   // [E]
}

/** Multi-head attention with an incremental key/value cache. Holds WASM memory: call dispose(). */
export class MultiHeadKvCache {
  constructor(weights: MultiHeadKvCacheWeights, params?: { num_heads?: number; capacity?: number });
  /** key, value: [n, E] or [E]. */
  append(key: Tensor, value: Tensor): void;
  /** query [n_q, E] → out [n_q, E], weights [H, n_q, length]. */
  attend(query: Tensor, options?: { causal?: boolean }): { out: Tensor; weights: Tensor };
  readonly length: number;
  readonly capacity: number;
  readonly disposed: boolean;
  clear(): void;
  dispose(): void;
}

export interface AttentionCatalogue {
  /** Runs any op by its snake_case name. */
  run(op: OpName | string, inputs: Tensors, params?: Params): Tensors;
  listOps(): OpInfo[];
  tensor: typeof tensor;
  MultiHeadKvCache: typeof MultiHeadKvCache;
  /** s(q,k) = qᵀk (Luong et al. 2015).
   *  inputs: q[n_q,d], keys[n_k,d] → scores[n_q,n_k]; params: {} */
  scoreDot(inputs: Tensors, params?: Params): Tensors;
  /** s(q,k) = qᵀk / √d (Vaswani et al. 2017).
   *  inputs: q[n_q,d], keys[n_k,d] → scores[n_q,n_k]; params: {} */
  scoreScaledDot(inputs: Tensors, params?: Params): Tensors;
  /** s(q,k) = qᵀ W k (Luong et al. 2015).
   *  inputs: q[n_q,d_q], w[d_q,d_k], keys[n_k,d_k] → scores[n_q,n_k]; params: {} */
  scoreGeneral(inputs: Tensors, params?: Params): Tensors;
  /** s(q,k) = vᵀ tanh(W q + U k + b) (Bahdanau et al. 2014).
   *  inputs: q[n_q,d_q], keys[n_k,d_k], w[d_att,d_q], u[d_att,d_k], v[d_att]; optional: bias[d_att] → scores[n_q,n_k], keys_proj[n_k,d_att]; params: {} */
  scoreAdditive(inputs: Tensors, params?: Params): Tensors;
  /** s(q,k) = qᵀk / (max(‖q‖,ε)·max(‖k‖,ε)) (Graves et al. 2014).
   *  inputs: q[n_q,d], keys[n_k,d] → scores[n_q,n_k]; params: {"eps": 1e-8} */
  scoreCosine(inputs: Tensors, params?: Params): Tensors;
  /** a = softmax(W_a q)  (no keys are read) (Luong et al. 2015).
   *  inputs: q[n_q,d_q], w_a[n_max,d_q] → scores[n_q,n_k], weights[n_q,n_k]; params: {"n_k": "rows of w_a"} */
  scoreLocation(inputs: Tensors, params?: Params): Tensors;
  /** α_ij = exp(s_ij) / Σ_j' exp(s_ij')  over unmasked keys (Bahdanau et al. 2014; Luong et al. 2015).
   *  inputs: scores[n_q,n_k]; optional: key_keep[n_k], keep[n_q,n_k] → weights[n_q,n_k]; params: {"causal": false} */
  alignSoft(inputs: Tensors, params?: Params): Tensors;
  /** α = softmax(s) over [t − D, t + D], 0 elsewhere (Luong et al. 2015).
   *  inputs: scores[n_k]; optional: key_keep[n_k] → weights[n_k]; params: {"t": "required", "D": "required"} */
  alignLocalM(inputs: Tensors, params?: Params): Tensors;
  /** p = S·σ(v_pᵀ tanh(W_p q));  α_s = softmax(s)_s · exp(−(s − p)² / 2σ²), σ = D/2 (Luong et al. 2015).
   *  inputs: scores[n_k]; optional: q[d_q], w_p[d_att,d_q], v_p[d_att], key_keep[n_k] → weights[n_k], p[1]; params: {"D": "required", "p": "only without q, w_p, v_p"} */
  alignLocalP(inputs: Tensors, params?: Params): Tensors;
  /** α = onehot(argmax_i α_i) (Xu et al. 2015).
   *  inputs: weights[n] → one_hot[n], index[1]; params: {} */
  alignHardArgmax(inputs: Tensors, params?: Params): Tensors;
  /** s ~ Multinoulli(α)  (SplitMix64 RNG, inverse CDF) (Xu et al. 2015).
   *  inputs: weights[n] → samples[draws]; params: {"seed": 0, "draws": 1} */
  alignHardSample(inputs: Tensors, params?: Params): Tensors;
  /** c_i = Σ_j α_ij v_j (Bahdanau et al. 2014).
   *  inputs: weights[n_q,n_k], values[n_k,d_v] → context[n_q,d_v]; params: {} */
  softContext(inputs: Tensors, params?: Params): Tensors;
  /** α_i = softmax_j s(q_i, k_j);  c_i = Σ_j α_ij v_j (Daniluk et al. 2017).
   *  inputs: q[n_q,d_k], keys[n_k,d_k], values[n_k,d_v]; optional: key_keep[n_k], keep[n_q,n_k] → weights[n_q,n_k], context[n_q,d_v]; params: {"score": "scaled_dot", "causal": false} */
  keyValueAttention(inputs: Tensors, params?: Params): Tensors;
  /** Concat(head_1..h) Wᴼ,  head_i = softmax(Q W_iᵠ (K W_iᴷ)ᵀ / √d_h) V W_iⱽ (Vaswani et al. 2017).
   *  inputs: query[n_q,E], key[n_k,E], value[n_k,E], in_proj_weight[3E,E], out_proj_weight[E,E]; optional: in_proj_bias[3E], out_proj_bias[E], key_keep[n_k], keep[n_q,n_k] → out[n_q,E], weights[H,n_q,n_k]; params: {"num_heads": "required", "causal": false} */
  multiHeadAttention(inputs: Tensors, params?: Params): Tensors;
  /** A = softmax(W_s2 tanh(W_s1 Hᵀ)),  M = A H,  P = ‖A Aᵀ − I‖²_F (Lin et al. 2017).
   *  inputs: h[T,d_h], w_s1[d_a,d_h], w_s2[r,d_a]; optional: key_keep[T] → a[r,T], m[r,d_h], penalty[1]; params: {} */
  structuredSelfAttention(inputs: Tensors, params?: Params): Tensors;
  /** A_i· = softmax_j σ(g_ij), g_ij = tanh(w_gᵀ[x_i;x_j] + b_g) or w_a2ᵀ tanh(W_a1[x_i;x_j] + b_a1) + b_a2,  r_i = Σ_j A_ij f([x_i;x_j]),  s = mean_i r_i (Kim 2018 (seed 003); Santoro et al. 2017).
   *  inputs: x[T,d], w_f1[d_f,2d], w_f2[d_f,d_f]; optional: b_f1[d_f], b_f2[d_f], w_g[2d], b_g[1], w_a1[d_a,2d], b_a1[d_a], w_a2[d_a], b_a2[1] (one score: w_g, or w_a1 and w_a2) → a[T,T], word[T,d_f], sentence[d_f]; params: {} */
  relationSelfAttention(inputs: Tensors, params?: Params): Tensors;
  /** C = tanh(Qᵀ W_b V);  H_v = tanh(W_v V + (W_q Q) C);  a_v = softmax(w_hvᵀ H_v)  (and for Q) (Lu et al. 2016).
   *  inputs: v[N,d], q[T,d], w_b[d,d], w_v[k,d], w_q[k,d], w_hv[k], w_hq[k] → affinity[T,N], a_v[N], a_q[T], v_hat[d], q_hat[d]; params: {} */
  coAttentionParallel(inputs: Tensors, params?: Params): Tensors;
  /** C = tanh(Qᵀ W_b V);  a_v = softmax(max over T of C);  a_q = softmax(max over N of C) (dos Santos et al. 2016 (attentive pooling)).
   *  inputs: v[N,d], q[T,d], w_b[d,d] → affinity[T,N], a_v[N], a_q[T], v_hat[d], q_hat[d]; params: {} */
  coAttentionMaxPooled(inputs: Tensors, params?: Params): Tensors;
  /** H = tanh(W_x X + (W_g g) 1ᵀ);  a_x = softmax(w_hxᵀ H);  x̂ = Σ a_x x  (3 steps: Q, V, Q) (Lu et al. 2016).
   *  inputs: v[N,d], q[T,d], w_x1[k,d], w_hx1[k], w_x2[k,d], w_g2[k,d], w_hx2[k], w_x3[k,d], w_g3[k,d], w_hx3[k]; optional: w_g1[k,d] → a_s[T], s_hat[d], a_v[N], v_hat[d], a_q[T], q_hat[d]; params: {} */
  coAttentionAlternating(inputs: Tensors, params?: Params): Tensors;
  /** M = D Qᵀ;  α = column-softmax(M);  β = row-softmax(M), averaged over rows;  s = α β (Cui et al. 2017).
   *  inputs: doc[n,d], query[m,d] → matching[n,m], alpha[n,m], beta[n,m], beta_avg[m], s[n]; params: {} */
  attentionOverAttention(inputs: Tensors, params?: Params): Tensors;
  /** u_it = tanh(W_w h_it + b_w);  α_it = softmax_t(u_itᵀ u_w);  s_i = Σ_t α_it h_it;  then the same over sentences with u_s (Yang et al. 2016).
   *  inputs: words[ΣT,d], w_word[d_att,d], u_word[d_att], w_sent[d_att,d], u_sent[d_att]; optional: b_word[d_att], b_sent[d_att] → word_alpha[ΣT], sentence_vectors[L,d], sentence_alpha[L], document[d]; params: {"sentence_lengths": "required, e.g. [5, 3]"} */
  hierarchicalAttention(inputs: Tensors, params?: Params): Tensors;
  /** p(c_i) = softmax_j(vᵀ tanh(W x_j + U h_i)) (Vinyals et al. 2015).
   *  inputs: decoder[n_q,d_q], encoder[n,d_k], w[d_att,d_q], u[d_att,d_k], v[d_att]; optional: bias[d_att], key_keep[n] → probs[n_q,n], pointers[n_q]; params: {} */
  pointerAttention(inputs: Tensors, params?: Params): Tensors;
  /** s_tj = vᵀ tanh(W q_t + U k_j + w_c c_tj + b),  c_t = Σ_{t'<t} α_t' (Tu et al. 2016).
   *  inputs: queries[T,d_q], keys[n_k,d_k], w[d_att,d_q], u[d_att,d_k], v[d_att], w_c[d_att]; optional: bias[d_att], key_keep[n_k] → weights[T,n_k], coverage[n_k]; params: {} */
  coverageAttention(inputs: Tensors, params?: Params): Tensors;
  /** cp = β Σ_j log(min(Σ_t α_tj, 1)) (Wu et al. 2016 (GNMT); Tu et al. 2016).
   *  inputs: weights[T,S] → penalty[1]; params: {"beta": 0} */
  coveragePenalty(inputs: Tensors, params?: Params): Tensors;
  /** m_i = e_i ⊙ l_i (Models 1, 2), e_i + l_i (3), e_i ⊙ σ(l_i) (4);  α = softmax(tanh(w_attᵀ[m_i; v_a] + b_att)) (Tang et al. 2016).
   *  inputs: embeddings[T,d], aspect[d], w_att[2d]; optional: locations[T], location_vectors[T,d] → memory[T,d], alpha[T], out[d]; params: {"model": "required, 1-4", "hop": 1, "b_att": 0} */
  positionWeightedMemory(inputs: Tensors, params?: Params): Tensors;
  /** e_i = vᵀ tanh(W h + U a_i + b);  α = softmax(e);  β = σ(w_βᵀ h + b_β);  z = β Σ α_i a_i (Xu et al. 2015).
   *  inputs: features[N,d_a], h[d_h], w[d_att,d_h], u[d_att,d_a], v[d_att]; optional: bias[d_att], w_beta[d_h] → alpha[N], beta[1], context[d_a]; params: {"b_beta": 0} */
  visualSoftAttention(inputs: Tensors, params?: Params): Tensors;
  /** λ Σ_i (1 − Σ_t α_ti)² (Xu et al. 2015).
   *  inputs: alphas[T,N] → penalty[1]; params: {"lambda": 1} */
  doublyStochasticPenalty(inputs: Tensors, params?: Params): Tensors;
  /** Abnar & Zuidema 2020: maps [L,n,n] or [L,H,n,n] → rollout [L,n,n] (cumulative after each layer); params {residual: 0.5}. */
  attentionRollout(inputs: Tensors, params?: Params): Tensors;
  /** Abnar & Zuidema 2020: maps [L,n,n] or [L,H,n,n] → flow [n,n] (max flow input j → output i); n ≤ 128; params {residual: 0.5}. */
  attentionFlow(inputs: Tensors, params?: Params): Tensors;
}

export const attention: AttentionCatalogue;

/** The engine's byte-safe BPE tokenizer (Sennrich 2016, SentencePiece-style "▁"). Holds WASM memory: dispose(). */
export class BpeTokenizer {
  private constructor(handle: unknown);
  /** From the contents of PREFIX.vocab and PREFIX.merges. */
  static fromText(vocabText: string, mergesText: string): BpeTokenizer;
  /** From the bundle form {type: "bpe", vocab, merges} (object or JSON text). */
  static fromJSON(json: string | { type: 'bpe'; vocab: string[]; merges: string[] }): BpeTokenizer;
  static learn(lines: string[], options?: { num_merges?: number; min_frequency?: number }): BpeTokenizer;
  encode(text: string): { ids: Int32Array; pieces: string[] };
  decode(ids: Int32Array | number[]): string;
  readonly vocabSize: number;
  readonly numMerges: number;
  readonly disposed: boolean;
  toJSON(): { type: 'bpe'; vocab: string[]; merges: string[] };
  dispose(): void;
}

/** SST-2 (Penn Treebank) word tokenizer: tokenizeWords("It's fine.") → ["it", "'s", "fine", "."]. */
export function tokenizeWords(text: string): string[];

// ---------------------------------------------------------------------------------------------------------------
// pipeline(), env and loadBundle() (docs/DESIGN.md §9; wasm/pipeline.js, wasm/models.js)

/** One attention map a model computed; data is row-major with the shape `dims`. */
export interface AttentionMap {
  /** e.g. 'self-attention', 'pair-attention', 'encoder_self', 'decoder_self', 'cross', 'visual'. */
  name: string;
  /** Layer index, or -1 where the model has one attention. */
  layer: number;
  /** Head index, or -1 when the map holds all heads (dims [H, …]) or the model has none. */
  head: number;
  /** Decoding step, for maps recorded one step at a time. */
  step?: number;
  dims: number[];
  data: Float32Array;
}

/**
 * The attention maps of one result (every task): one Float32Array holding every map's values back to back and one
 * Int32Array index; a map's object and its Float32Array view (into `values`, no copy) are made when asked for.
 * The arrays belong to the result and stay valid after further calls and after dispose().
 */
export declare class AttentionMaps implements Iterable<AttentionMap> {
  constructor(arena?: { kinds: string[]; index: Int32Array; values: Float32Array });
  /** Packs plain maps into one arena, or rebuilds an AttentionMaps from its structured clone. */
  static from(maps: AttentionMap[] | AttentionMaps | { kinds: string[]; index: Int32Array; values: Float32Array }): AttentionMaps;
  readonly length: number;
  /** The kinds present, in order of first appearance. */
  readonly kinds: string[];
  /** Every map's values, back to back. */
  readonly values: Float32Array;
  /** Per map 10 int32: kind (into kinds), layer, head, step, rank, dims ×4, offset (into values). */
  readonly index: Int32Array;
  /** Map i (negative: from the end), or undefined. */
  at(i: number): AttentionMap | undefined;
  /**
   * The first map of that kind at the given layer / head / step (absent: any); undefined when the result has no map
   * of that kind. A layer, head or step that no map of the kind has is a RangeError naming the ones there are (a
   * value that is not an integer, a TypeError).
   * @example
   * import { pipeline } from 'attnlens';
   *
   * const sort = await pipeline('number-sorting');
   * const maps = (await sort([5, 3, 9, 1])).attentions;
   * console.log(maps.kinds, maps.get('pointer').dims, maps.stack('encoder_self').dims);
   * // [ 'pointer', 'encoder_self' ] [ 4, 4 ] [ 2, 4, 4, 4 ]
   * try { maps.get('encoder_self', { layer: 9 }); } catch (e) { console.log(`${e.name}: ${e.message}`); }
   * // RangeError: AttentionMaps.get: layer 9 is out of range: the 'encoder_self' maps have layers 0, 1
   */
  get(name: string, where?: { layer?: number; head?: number; step?: number }): AttentionMap | undefined;
  /** Every map of one kind as one [layers, heads, ...map dims] tensor, a view into `values`. */
  stack(name: string): { dims: number[]; data: Float32Array };
  [Symbol.iterator](): Iterator<AttentionMap>;
  toArray(): AttentionMap[];
  filter(fn: (m: AttentionMap, i: number) => unknown): AttentionMap[];
  map<T>(fn: (m: AttentionMap, i: number) => T): T[];
  find(fn: (m: AttentionMap, i: number) => unknown): AttentionMap | undefined;
  findIndex(fn: (m: AttentionMap, i: number) => unknown): number;
  forEach(fn: (m: AttentionMap, i: number) => void): void;
  some(fn: (m: AttentionMap, i: number) => unknown): boolean;
  every(fn: (m: AttentionMap, i: number) => unknown): boolean;
  reduce<T>(fn: (acc: T, m: AttentionMap, i: number) => T, initial: T): T;
  /** Both buffers, for postMessage's transfer list. */
  transferables(): ArrayBuffer[];
  /** The maps with data as number[]. */
  toJSON(): Array<Omit<AttentionMap, 'data'> & { data: number[] }>;
}

export type TaskName = 'sentiment-analysis' | 'translation' | 'image-to-text' | 'visual-question-answering' | 'number-sorting' |
  'text-generation' | 'feature-extraction' | 'image-classification';
/** Aliases pipeline() also accepts. */
export type TaskAlias = 'text-classification' | 'sentiment' | 'image-captioning' | 'vqa' | 'pointer-sort' | 'sort';

/** Download progress of a bundle, reported to progress_callback. */
export type ProgressInfo =
  | { name: string; status: 'initiate'; files: string[] }
  | { name: string; status: 'progress'; file: string; loaded: number; total: number; progress: number }
  | { name: string; status: 'done'; file: string }
  | { name: string; status: 'ready'; loaded: number; total: number; progress: number };

export interface LoadOptions {
  progress_callback?: (info: ProgressInfo) => void;
  /** Only local files (Node: file paths) or the browser cache; never the network. */
  local_files_only?: boolean;
  /** Where bundle names are looked up for this call (default env.modelBaseUrl). */
  model_base_url?: string | URL;
  /**
   * Keep downloaded files in the browser's Cache API (default env.useBrowserCache). Node has no Cache API: there a
   * `globalThis.caches` supplied by the host is used only with `cache: true`. Cached copies are checked against the
   * bundle's manifest.json like downloads; one that fails is deleted and fetched again.
   */
  cache?: boolean;
  /** Passed to init() when the module is not loaded yet. */
  wasm?: InitOptions;
  /**
   * pipeline() only: how the weights a decoding step reads are kept — 'int8' (per-row int8 codes: about 4× less to
   * stream per step; maps and scores move by the small amounts each MODEL_CARD reports) or 'f32'. Default: the
   * bundle's config "weight_precision" (f32 when absent).
   */
  precision?: 'f32' | 'int8';
}

/** A loaded bundle: config.json parsed, and every file it names. */
export interface Bundle {
  name: string;
  url: string | null;
  config: Record<string, unknown>;
  configText: string;
  files: Record<string, Uint8Array>;
}

/** A bundle name ('sst2-selfattn'), a bundle folder (URL, or a path in Node), or a bundle from loadBundle(). */
export type ModelRef = string | URL | Bundle;
/** The bundled models of 'sentiment-analysis' (alias 'text-classification'). */
export type SentimentModelName = 'sst2-selfattn' | 'sst2-relation';

export interface Pipeline<Input, RunOptions, Output> {
  /**
   * Runs the model. Calls on one pipeline never interleave: a call made while another is running waits in a queue
   * and runs after it, in the order the calls were made (align() and attend() share the queue). A call still
   * waiting when dispose() is called rejects with the "has been disposed" Error.
   */
  (input: Input, options?: RunOptions): Promise<Output>;
  readonly task: TaskName;
  /** The bundle name. */
  readonly model: string;
  readonly config: Record<string, unknown>;
  /** Frees the WebAssembly memory; later calls reject with an Error ("this <task> pipeline (<model>) has been disposed"). */
  dispose(): void;
}

export interface SentimentResult {
  label: string;
  /** Index of `label` in `labels` (the first on a tie). */
  label_index: number;
  score: number;
  /** The words the model saw ('<unk>' for words outside its vocabulary). */
  tokens: string[];
  /** 'self-attention' [hops, T] (sst2-selfattn) or 'pair-attention' [T, T] (sst2-relation). */
  attentions: AttentionMaps;
  /** softmax of the logits, one per label (labels[i]); score = the largest. */
  probabilities: Float32Array;
  /** The classifier's logits, one per label. */
  logits: Float32Array;
  /** The model's label names, e.g. ['NEGATIVE', 'POSITIVE']. */
  labels: string[];
  /** Vocabulary ids of `tokens` (1 = '<unk>'). */
  ids: Int32Array;
  /** The text had more than max_tokens tokens (default 256); only the first were classified. */
  truncated: boolean;
  /** Tokens in the text before truncation. */
  num_input_tokens: number;
  [key: string]: unknown;
}
/** Per call. Unknown names throw a TypeError. */
export interface SentimentRunOptions {
  /** Default true; false leaves `attentions` empty. */
  output_attentions?: boolean;
}
/**
 * SST-2 sentiment with attention. Input: text (tokenized the SST-2 way: lowercased, punctuation and clitics split
 * off — "don't" → do n't), UTF-8 bytes, or an array of those. Empty or all-space text rejects with an Error
 * ("empty input").
 */
export interface SentimentPipeline extends Pipeline<string | Uint8Array, SentimentRunOptions, SentimentResult> {
  (input: string | Uint8Array, options?: SentimentRunOptions): Promise<SentimentResult>;
  (input: Array<string | Uint8Array>, options?: SentimentRunOptions): Promise<SentimentResult[]>;
  /** The bundle's architecture (a converted classifier's pipeline has 'hf-bert' or 'hf-distilbert'). */
  readonly architecture: 'selfattn-classifier' | 'relation-classifier';
  readonly labels: string[];
  /** The most tokens classified (pipeline option max_tokens, 1..1024, default 256). */
  readonly maxTokens: number;
  readonly disposed: boolean;
}

export interface TextGenerationRunOptions {
  /** The most ids generated after the prompt, 1..4096 (default 20); fewer when eos comes first or the context is full. */
  max_new_tokens?: number;
  /** Default false: greedy decoding (sampling is not implemented; true rejects with an Error). */
  do_sample?: boolean;
  /** Default true; false leaves `attentions` empty. */
  output_attentions?: boolean;
  /**
   * Also `qk`, the query and key vectors behind every map (the neuron view), whatever output_attentions says.
   * Default false.
   */
  output_qk?: boolean;
}
export interface TextGenerationResult {
  /** The prompt followed by the generated text. */
  generated_text: string;
  /** The generated text alone (special tokens skipped). */
  new_text: string;
  /** The prompt's ids (bos_token_id for an empty prompt). */
  prompt_ids: Int32Array;
  /** The generated ids, eos included when produced. */
  new_ids: Int32Array;
  /** The tokens of prompt_ids then new_ids. */
  tokens: string[];
  /** 'eos' or 'length'. */
  stopped: string;
  /** 'self-attention' [N, N] per layer and head over the N positions fed (causal: zero above the diagonal). */
  attentions: AttentionMaps;
  /**
   * With output_qk: 'self-attention.query' [rows, d_head] and 'self-attention.key' [columns, d_head] per layer and
   * head; row i of a map is softmax_j(query[i]·key[j] / √d_head), over j ≤ i; [N, d_head] over the same
   * positions, from one more forward after generation.
   */
  qk?: AttentionMaps;
}
/**
 * Greedy text generation with a converted GPT-2 bundle (config "architecture": "hf-gpt2"), run by the converted
 * models' module (loaded on first use). Input: text, an Int32Array of token ids, { input_ids: number[] }, or an
 * array of those. Options given to pipeline() are this pipeline's defaults.
 */
export interface TextGenerationPipeline extends Pipeline<string | Int32Array | { input_ids: number[] }, TextGenerationRunOptions, TextGenerationResult> {
  (input: string | Int32Array | { input_ids: number[] }, options?: TextGenerationRunOptions): Promise<TextGenerationResult>;
  (input: Array<string | Int32Array | { input_ids: number[] }>, options?: TextGenerationRunOptions): Promise<TextGenerationResult[]>;
  /** 'hf-gpt2'. */
  readonly architecture: string;
  readonly disposed: boolean;
}

export interface HfEncoderRunOptions {
  /** Default true; false leaves `attentions` empty. */
  output_attentions?: boolean;
  /**
   * Also `qk`, the query and key vectors behind every map (the neuron view), whatever output_attentions says.
   * Default false.
   */
  output_qk?: boolean;
}
export interface TextClassificationResult {
  /** The most probable label (the first on a tie). */
  label: string;
  /** Its probability (softmax over the labels; one label: sigmoid). */
  score: number;
  /** Every label with its probability, most probable first. */
  scores: Array<{ label: string; score: number }>;
  /** The classifier's logits, one per label in the model's order. */
  logits: Float32Array;
  /** The ids the model saw, special tokens included (image-classification: empty). */
  ids: Int32Array;
  /** The tokens of `ids`. */
  tokens: string[];
  /** 'self-attention' per layer and head, [T, T] (ViT: [N + 1, N + 1] over the CLS token and the patches). */
  attentions: AttentionMaps;
  /**
   * With output_qk: 'self-attention.query' [rows, d_head] and 'self-attention.key' [columns, d_head] per layer and
   * head; row i of a map is softmax_j(query[i]·key[j] / √d_head).
   */
  qk?: AttentionMaps;
}
export interface FeatureExtractionResult {
  /** The last hidden state, row-major [T, d]. */
  features: Float32Array;
  /** [T, d]. */
  dims: Int32Array;
  /** The pooled vector [d]; empty when the model has no pooler. */
  pooled: Float32Array;
  /** The ids the model saw, special tokens included. */
  ids: Int32Array;
  /** The tokens of `ids`. */
  tokens: string[];
  /** 'self-attention' per layer and head, [T, T]. */
  attentions: AttentionMaps;
  /**
   * With output_qk: 'self-attention.query' [rows, d_head] and 'self-attention.key' [columns, d_head] per layer and
   * head; row i of a map is softmax_j(query[i]·key[j] / √d_head).
   */
  qk?: AttentionMaps;
}
/**
 * A converted BERT or DistilBERT classifier (config "architecture": "hf-bert" | "hf-distilbert", task
 * "text-classification"), run by the converted models' module. Input: text, an Int32Array of token ids,
 * { input_ids: number[] }, or an array of those. `pipeline('text-classification', convertedBundle)` returns this
 * pipeline (typed `TextClassificationPipeline | SentimentPipeline`, as a folder may hold either: narrow on
 * `architecture`).
 */
export interface TextClassificationPipeline extends Pipeline<string | Int32Array | { input_ids: number[] }, HfEncoderRunOptions, TextClassificationResult> {
  (input: string | Int32Array | { input_ids: number[] }, options?: HfEncoderRunOptions): Promise<TextClassificationResult>;
  (input: Array<string | Int32Array | { input_ids: number[] }>, options?: HfEncoderRunOptions): Promise<TextClassificationResult[]>;
  /** The converted bundle's architecture (the SST-2 pipeline's: 'selfattn-classifier' or 'relation-classifier'). */
  readonly architecture: 'hf-bert' | 'hf-distilbert';
  readonly labels: string[];
  readonly disposed: boolean;
}
/** The last hidden state of a converted BERT or DistilBERT bundle (any head), input as TextClassificationPipeline's. */
export interface FeatureExtractionPipeline extends Pipeline<string | Int32Array | { input_ids: number[] }, HfEncoderRunOptions, FeatureExtractionResult> {
  (input: string | Int32Array | { input_ids: number[] }, options?: HfEncoderRunOptions): Promise<FeatureExtractionResult>;
  (input: Array<string | Int32Array | { input_ids: number[] }>, options?: HfEncoderRunOptions): Promise<FeatureExtractionResult[]>;
  /** 'hf-bert' or 'hf-distilbert'. */
  readonly architecture: string;
  readonly disposed: boolean;
}
/** A converted ViT classifier (config "architecture": "hf-vit"); input: an image as image-to-text takes it. */
export interface ImageClassificationPipeline extends Pipeline<ImageSource, HfEncoderRunOptions, TextClassificationResult> {
  (input: ImageSource, options?: HfEncoderRunOptions): Promise<TextClassificationResult>;
  (input: ImageSource[], options?: HfEncoderRunOptions): Promise<TextClassificationResult[]>;
  /** 'hf-vit'. */
  readonly architecture: string;
  readonly labels: string[];
  readonly disposed: boolean;
}

export interface TranslationResult {
  text: string;
  source_tokens: string[];
  target_tokens: string[];
  /** Cross-attention (target × source) and, for the Transformer, encoder/decoder self-attention per layer. */
  attentions: AttentionMaps;
  /** The source was cut to the model's positions (its first max_source_tokens − 1 pieces, then '</s>'). */
  truncated?: boolean;
  source_ids?: Int32Array;
  target_ids?: Int32Array;
  /** Sum of the log-probabilities of the output tokens. */
  score?: number;
  /** The beam width used (1 = greedy). */
  num_beams?: number;
  /** Pieces merged into words, with [start, end) string indices into the input (source) / the translation. */
  source_words: WordSpan[];
  target_words: WordSpan[];
  /** Hard word alignment: [source word, target word] pairs (empty without output_attentions). */
  alignment: Array<[number, number]>;
  /** Which attention and extraction gave the links, e.g. 'head 1.0, argmax' or 'layer-mean 1, gdfa'. */
  alignment_method: string;
  /** The word-level cross map the links come from: dims [target words, source words]. */
  alignment_map: { dims: [number, number]; data: Float32Array };
  /** With word_maps: every map merged to words. */
  word_attentions?: AttentionMaps;
  /** Present when the sentence was re-cased (restore_case): the text the engine saw, same length as the input. */
  source_text?: string;
  /** align() only: log-probability of each target piece ('</s>' last). */
  token_logprobs?: Float32Array;
  /**
   * With output_qk: per kind ('encoder_self', 'decoder_self', 'cross'), layer and head, '<kind>.query'
   * [rows, d_head] and '<kind>.key' [columns, d_head]; row i of that kind's map is softmax_j(query[i]·key[j] /
   * √d_head), over j ≤ i for decoder_self. With several sentences, in each of `sentences` only.
   */
  qk?: AttentionMaps;
  /**
   * With copy_numbers: each number replaced in `text` — target_word (index into target_words; the first of its words
   * when the model wrote the number as several, "375" "," "5", which are then replaced part for part), what the model wrote
   * (`model`), what replaced it (`text`), the alignment weight of the match, the source number (index among the
   * numbers of the sentence's source) and, for several sentences, which sentence.
   */
  number_copies?: Array<{ source_number: number; target_word: number; model: string; text: string; weight: number;
    sentence?: number }>;
  /**
   * translate() only: one full result per sentence of the input (each with its own tokens, maps, words, alignment
   * and source_start / source_end); [] for empty or all-space input. The input is split after . ! ? … followed by
   * white space and an upper-case letter or a quote ("z. B.", "usw.", "Dr.", "1.", "3.5" do not split; a blank
   * line does). With one sentence the other fields are that sentence's result; with several, `text` joins the
   * translations with ' ' and the other fields describe the whole input: tokens, ids and words concatenated,
   * maps block-diagonal. Sentences past the model's positions are dropped (truncated: true).
   */
  sentences?: TranslationSentence[];
  /** [start, end) of the translated text in the caller's input (white space trimmed). */
  source_start?: number;
  source_end?: number;
  [key: string]: unknown;
}
/** One sentence of a translate() result: a full result of its own (source word indices into the whole input). */
export interface TranslationSentence extends TranslationResult {
  source_start: number;
  source_end: number;
}
export interface WordSpan {
  text: string;
  /**
   * String indices [start, end) into the text the word came from — for source words the caller's original input
   * (before NFC normalisation, which can change lengths), for target words the translation `text`.
   */
  start: number;
  end: number;
  /** Pieces [first, end) of source_tokens / target_tokens. */
  pieces: [number, number];
}
export interface TranslationRunOptions {
  /** Beam width, 1..64 (1 = greedy); default: the model's (decoding.num_beams, 4). */
  num_beams?: number;
  /** Most target pieces, 1..65536; default: the model's (2·|source ids| + 10), within its positions. */
  max_new_tokens?: number;
  /** Default true: every map; false: none (faster); a list of kinds: only those. */
  output_attentions?: boolean | Array<'encoder_self' | 'decoder_self' | 'cross'>;
  /** Each layer's mean over its heads (head −1), computed in the engine, instead of every head. Default false. */
  head_mean?: boolean;
  /** GNMT length penalty exponent of beam search (default: the model's decoding.alpha, 0.6). */
  alpha?: number;
  /** GNMT coverage penalty weight (default: the model's, 0 = off). */
  coverage_beta?: number;
  /** Finished hypotheses the beam collects for its final choice, per beam, 1..8 (default: the model's
   *  decoding.candidates_per_beam, else 1): a larger pool lets longer, more complete translations compete. */
  candidates_per_beam?: number;
  /** 'head' = a trained alignment head, 'layer-mean' = mean of one decoder layer's cross heads (default: the bundle's). */
  alignment_method?: 'head' | 'layer-mean';
  /** 'argmax' per target word, or 'gdfa' (grow-diag-final-and of both directions). */
  alignment_extraction?: 'argmax' | 'gdfa';
  /** The decoder layer whose cross attention gives the alignment, 0..1023 (default: the model's). */
  alignment_layer?: number;
  /** The cross head of the alignment (method 'head'), 0..1023 (default: the model's trained alignment head). */
  alignment_head?: number;
  /** Also every map merged to words (word_attentions). Default false. */
  word_maps?: boolean;
  /**
   * Also the query and key vectors behind every map (`qk`, the neuron view): one more teacher-forced decoder run.
   * Transformer and converted Marian (hf-marian) translators only (an Error for the RNN translators). Default false.
   */
  output_qk?: boolean;
  /**
   * Numbers copied by alignment (default true): a number the model wrote differently from the source number its
   * word alignment links it to is replaced by that number in English notation ('2,50' → '2.50'); see number_copies.
   */
  copy_numbers?: boolean;
  /** Re-case ALL-CAPS and all-lower-case sentences before translating (default true); see source_text. */
  restore_case?: boolean;
  [option: string]: unknown;
}
export interface TranslationPipeline extends Pipeline<string, TranslationRunOptions, TranslationResult> {
  (input: string, options?: TranslationRunOptions): Promise<TranslationResult>;
  (input: string[], options?: TranslationRunOptions): Promise<TranslationResult[]>;
  /** Forced decoding of a given translation: the same maps, words and alignment for that pair, plus token_logprobs. */
  align(source: string, target: string, options?: TranslationRunOptions): Promise<TranslationResult>;
  readonly architecture: string;
  readonly maxSourceTokens: number;
}

/**
 * Pixels, row-major, 8 bits per channel; an ImageData fits. channels: 4 = RGBA with straight alpha (the default;
 * transparent pixels count as white), 3 = RGB, 1 = grey. data.length must be exactly width·height·channels; sides
 * 1..65536.
 */
export interface ImageInput {
  data: Uint8ClampedArray | Uint8Array;
  width: number;
  height: number;
  channels?: 1 | 3 | 4;
}
/**
 * What the image pipelines take: raw pixels (ImageInput), or an encoded PNG or JPEG image as a file path (Node), a
 * file: URL (Node), an http(s): or data: URL (string or URL), its bytes (Buffer, Uint8Array, ArrayBuffer, any
 * ArrayBufferView) or a Blob. The format is read from the bytes, never from a name; EXIF orientation is applied.
 * In Node PNG (every colour type and bit depth, interlaced) and JPEG (baseline and progressive) are decoded; in
 * browsers whatever createImageBitmap decodes, plus HTMLImageElement, ImageBitmap and canvases. An encoded image
 * above 16384 pixels a side is refused from its header (RangeError); a missing file, a failed fetch, a corrupt,
 * truncated or unsupported file (GIF, WebP, BMP… in Node) rejects with an Error whose message names the pipeline,
 * e.g. "attnlens: image-to-text: cannot decode photo.jpg: JPEG: …"; the pipeline keeps working.
 *
 *   await caption('photos/dog.jpg');                              // Node: a path (relative to the working folder)
 *   await caption(new URL('./dog.jpg', import.meta.url));         // a file: URL
 *   await caption('https://example.com/dog.png');                 // fetched
 *   await caption(await readFile('dog.jpg'));                     // a Buffer of the file
 *   await vqa(canvas.getContext('2d').getImageData(0, 0, w, h), 'what colour is the circle ?');
 */
export type ImageSource = ImageInput | string | URL | ArrayBufferLike | ArrayBufferView | Blob;
export interface CaptionResult {
  /** The caption: words joined by single spaces. */
  text: string;
  /** One entry per decoder step: the words, then '<end>' when the caption finished. */
  tokens: string[];
  token_ids?: Int32Array;
  /**
   * [{ name: 'visual', layer: -1, head: -1, dims: [T, g, g], data }]: row t (T = tokens.length) is the attention
   * over the g×g image grid (row-major; g = the bundle's input size / 32: 11 for flickr8k-mobilenet, 7 for shapes) while choosing tokens[t]; empty with output_attentions: false.
   */
  attentions: AttentionMaps;
  /** The gate β_t (how much of the attended image feature step t used). */
  betas?: Float32Array;
  finished?: boolean;
  /** Sum of the chosen words' log-probabilities. */
  score?: number;
  /** The beam width used (1 = greedy; 0 for attend()). */
  num_beams?: number;
  /** attend() only: log-probability of each token given the image and the words before it ('<end>' last). */
  token_logprobs?: Float32Array;
  /** attend() only: the caption's words outside the vocabulary, scored as '<unk>' (position indexes tokens). */
  unknown_words?: Array<{ word: string; position: number }>;
  /** attend() only: true. */
  forced?: boolean;
  [key: string]: unknown;
}
export interface CaptionRunOptions {
  /** Beam width, 1..64 (1 = greedy); default: the model's (decoding.num_beams, 3). */
  num_beams?: number;
  /** Most decoder steps, counting the '<end>' step, 1..1000; default: the model's max_len. */
  max_new_tokens?: number;
  /** Default true; false leaves `attentions` empty. */
  output_attentions?: boolean;
  /** Let the search emit '<unk>' (default false: it is never chosen; true = the reference search exactly). */
  allow_unk?: boolean;
  [option: string]: unknown;
}
export interface CaptionAttendOptions {
  /** Default true. */
  output_attentions?: boolean;
  [option: string]: unknown;
}
export interface CaptioningPipeline extends Pipeline<ImageSource, CaptionRunOptions, CaptionResult> {
  (input: ImageSource, options?: CaptionRunOptions): Promise<CaptionResult>;
  (input: Array<ImageSource>, options?: CaptionRunOptions): Promise<CaptionResult[]>;
  /**
   * Forced caption (teacher forcing): the decoder runs over `caption` (lowercased, split as \w+|[^\w\s]) instead
   * of searching; per word (then '<end>') the attention over the grid, the gate β and the log-probability
   * (token_logprobs). Words outside the vocabulary become '<unk>' and are listed in unknown_words. Rejects with a
   * TypeError for a non-string caption, an Error for an empty one or one of more than 1000 words.
   */
  attend(input: ImageSource, caption: string, options?: CaptionAttendOptions): Promise<CaptionResult>;
  /** The encoder bundle's name. */
  readonly encoder: string;
  readonly vocabSize: number;
}

export interface VqaResult {
  /** The best answer (one of answers). */
  answer: string;
  /** Its probability. */
  score: number;
  /** Every answer the model knows, in the order of scores and logits. */
  answers: string[];
  /** Softmax of the logits, one per answer. */
  scores: Float32Array;
  logits: Float32Array;
  /** The question's words as the model read them (lowercased, \w+|[^\w\s]; unknown ones as '<unk>'). */
  tokens: string[];
  token_ids: Int32Array;
  /** Words outside the vocabulary (position indexes tokens). */
  unknown_words: Array<{ word: string; position: number }>;
  /** The count readout: the sum of the 'count_density' map. */
  count: number;
  /**
   * The relation readout's input [dx, dy]: the question level's region-attention centroid minus the word
   * level's, in grid cells (x right, y down). The question level attends to a relation's subject A and the word
   * level to A and B, so it points from B towards A: "is A left of B?" is read off it. Empty for a model without
   * the readout.
   */
  where: Float32Array;
  /** 'parallel-co-attention' or 'attention-over-attention'. */
  attention: string;
  /**
   * Every map (layer 0 = word level, 1 = question level): 'region_attention' [7, 7], 'word_attention' [T],
   * 'affinity' [T, 49] (co-attention) or 'aoa_matching' / 'aoa_alpha' / 'aoa_beta' [T, 49] (word × region, AoA),
   * 'count_density' [7, 7] (layer 1). Empty with output_attentions: false.
   */
  attentions: AttentionMaps;
}
export interface VqaRunOptions {
  /** Default true. */
  output_attentions?: boolean;
  [option: string]: unknown;
}
export interface VqaPipeline {
  /**
   * Answers `question` about the image. Rejects with a TypeError for a non-string question or a wrong option type,
   * an Error for an empty question, one with no known word or more than maxQuestionWords words.
   */
  (image: ImageSource, question: string, options?: VqaRunOptions): Promise<VqaResult>;
  readonly task: 'visual-question-answering';
  readonly model: string;
  readonly config: Record<string, unknown>;
  /** The encoder bundle's name. */
  readonly encoder: string;
  readonly answerList: string[];
  readonly vocabulary: string[];
  readonly maxQuestionWords: number;
  dispose(): void;
  readonly disposed: boolean;
}

export interface PointerSortResult {
  /** The input numbers, as parsed. */
  values: number[];
  /** values[order[i]]: sorted when sorted_ok. */
  sorted: number[];
  /** Input positions (from 0) in output order: a permutation. Equal numbers keep their input order. */
  order: number[];
  /** Whether `sorted` is non-decreasing (the model is trained on 1–10 numbers and errs more on longer lists). */
  sorted_ok: boolean;
  /** The pointer's probability of the position chosen at each output step. */
  step_probabilities: Float32Array;
  /** The model's input: the numbers min–max scaled to [0, 1]. */
  inputs: Float32Array;
  /**
   * 'pointer' [n, n] first (row = output step, column = input position; rows sum to 1, positions already pointed
   * at get 0), then 'encoder_self' [n, n] per encoder layer and head (unless output_attentions is false).
   */
  attentions: AttentionMaps;
}
/** Per call. Unknown names throw a TypeError. */
export interface PointerSortRunOptions {
  /** Default true; false keeps only the 'pointer' map (no 'encoder_self' maps). */
  output_attentions?: boolean;
  /** @deprecated The old name of output_attentions (read as it; output_attentions wins when both are given). */
  encoder_attentions?: boolean;
}
/**
 * Sorting numbers with a pointer network (Vinyals et al. 2015). Input: an array of numbers, a typed array, or a
 * string of numbers separated by commas, semicolons or white space. An item that is not a number is a TypeError;
 * NaN, ±Infinity, an empty list or more than maxLength numbers a RangeError.
 */
export interface PointerSortPipeline extends Pipeline<string | number[] | ArrayLike<number>, PointerSortRunOptions, PointerSortResult> {
  (input: string | number[] | ArrayLike<number>, options?: PointerSortRunOptions): Promise<PointerSortResult>;
  /** The longest list the model accepts (config max_length: 50 for pointer-sort). */
  readonly maxLength: number;
  readonly disposed: boolean;
}

export interface PipelineOptions extends LoadOptions {
  /** sentiment-analysis: the most tokens classified, 1..1024 (default 256). */
  max_tokens?: number;
  [option: string]: unknown;
}

/**
 * transformers.js-shaped entry: pipeline(task, model?, options?) resolves to a callable model.
 *
 * Errors (pipelines and their calls reject with): TypeError — a value of the wrong type, an unknown option, a view
 * of a detached ArrayBuffer; RangeError — a number option that is NaN, ±Infinity, not an integer or out of range,
 * an image whose data.length is not width·height·channels or whose side is 0 or above 65536 (an encoded one: 16384);
 * Error — a file that cannot be read, fetched or decoded (the message names the pipeline), everything
 * the engine refuses (a corrupt bundle, a disposed pipeline). Messages name the option or argument. Lone UTF-16
 * surrogates in strings become U+FFFD; over-long text is cut with truncated: true. No WebAssembly trap escapes.
 * An unknown task or model name is an Error suggesting the closest known names; a model the npm package does not
 * carry, an Error saying why and how to use it (a bundle folder as the model, or env.modelBaseUrl).
 * @example
 * import { pipeline } from 'attnlens';
 *
 * const classify = await pipeline('sentiment-analysis');        // its default model, inside the package
 * const out = await classify('a gorgeous, witty film');
 * console.log(classify.model, out.label, out.tokens);
 * // sst2-selfattn POSITIVE [ 'a', 'gorgeous', ',', 'witty', 'film' ]
 * try { await pipeline('sentiment-analysys'); } catch (e) { console.log(e.message); }
 * // attnlens: unknown task "sentiment-analysys"; did you mean "sentiment-analysis"? The tasks: sentiment-analysis, translation, image-to-text, number-sorting, visual-question-answering, text-generation, feature-extraction, image-classification (aliases: pointer-sort, sort, text-classification, sentiment, image-captioning, vqa)
 * classify.dispose();
 */
export function pipeline(task: 'sentiment-analysis' | 'text-classification' | 'sentiment', model?: SentimentModelName, options?: PipelineOptions): Promise<SentimentPipeline>;
/**
 * Any other model for the same task: a converted BERT or DistilBERT classifier bundle (npx attnlens convert) gives a
 * TextClassificationPipeline, an SST-2 bundle (a folder, a loadBundle() result) a SentimentPipeline. Which one a
 * folder holds is known at run time: narrow on `architecture` ('hf-bert' | 'hf-distilbert' for a converted one),
 * e.g. `if (classify.architecture === 'hf-bert' || classify.architecture === 'hf-distilbert') await classify(text)`.
 */
export function pipeline(task: 'sentiment-analysis' | 'text-classification' | 'sentiment', model: ModelRef, options?: PipelineOptions): Promise<TextClassificationPipeline | SentimentPipeline>;
/** A converted GPT-2 bundle (npx attnlens convert); there is no bundled text-generation model. */
export function pipeline(task: 'text-generation', model: ModelRef, options?: PipelineOptions & TextGenerationRunOptions): Promise<TextGenerationPipeline>;
/** A converted BERT or DistilBERT bundle (any head). */
export function pipeline(task: 'feature-extraction', model: ModelRef, options?: PipelineOptions & HfEncoderRunOptions): Promise<FeatureExtractionPipeline>;
/** A converted ViT classifier bundle. */
export function pipeline(task: 'image-classification', model: ModelRef, options?: PipelineOptions & HfEncoderRunOptions): Promise<ImageClassificationPipeline>;
export function pipeline(task: 'translation', model?: ModelRef, options?: PipelineOptions): Promise<TranslationPipeline>;
export function pipeline(task: 'image-to-text' | 'image-captioning', model?: ModelRef, options?: PipelineOptions): Promise<CaptioningPipeline>;
export function pipeline(task: 'visual-question-answering' | 'vqa', model?: ModelRef, options?: PipelineOptions): Promise<VqaPipeline>;
export function pipeline(task: 'number-sorting' | 'pointer-sort' | 'sort', model?: ModelRef, options?: PipelineOptions): Promise<PointerSortPipeline>;

/**
 * Task names and their bundled models; `inPackage`: the models the npm tarball carries (the others live in the
 * repository's models/ folder: pass a copy of one's folder as the model, or point env.modelBaseUrl at its parent).
 * @example
 * import { listTasks } from 'attnlens';
 *
 * for (const t of listTasks()) console.log(t.task, t.defaultModel, t.inPackage.join(' '));
 * // sentiment-analysis sst2-selfattn sst2-selfattn
 * // translation de-en-general de-en-general
 * // image-to-text flickr8k-mobilenet flickr8k-mobilenet shapes
 * // number-sorting pointer-sort pointer-sort
 * // visual-question-answering shapes-vqa-coattn shapes-vqa-coattn shapes-vqa-aoa
 */
export function listTasks(): Array<{ task: TaskName; defaultModel: string; models: string[]; inPackage: string[] }>;
export const TASKS: Readonly<Record<TaskName, { defaultModel: string | null; models: string[]; notPackaged?: string[] }>>;

/** Where bundles are found and how they are cached (global settings). */
export const env: {
  /** Base URL (or, in Node, a folder path) under which bundle names are resolved; defaults to the package's models/. */
  modelBaseUrl: string | URL;
  /** Keep fetched model files in the browser's Cache API. */
  useBrowserCache: boolean;
  cacheName: string;
  /** When false, nothing is fetched from a server: only local files and the browser cache. */
  allowRemoteModels: boolean;
};

/**
 * Fetches manifest.json (when the bundle has one), config.json and every file it names, checking each file's length
 * and SHA-256 against the manifest before returning it; a file that does not match rejects with an Error naming the
 * model and the file.
 */
export function loadBundle(model: ModelRef, options?: LoadOptions): Promise<Bundle>;

// convert() (wasm/convert/index.js; README "Your own model", docs/DESIGN.md §5)

/** A Hugging Face model folder's files by name (a browser's file picker or drop): bytes or Blobs. */
export type HfFolderFiles = Map<string, Uint8Array | ArrayBuffer | Blob> | Record<string, Uint8Array | ArrayBuffer | Blob>;

export interface ConvertOptions {
  /** Node: write the bundle into this folder (which must not exist), through a temporary folder renamed at the end. */
  out?: string;
  /** Store every 2-D weight of at least 1024 values as int8 with a float32 scale per row (config "weight_precision": "int8"). */
  int8?: boolean;
  /** The bundle's task; defaults to the checkpoint's (a classification head: classification, else feature extraction;
   * GPT-2: text generation; Marian: translation). */
  task?: 'text-classification' | 'feature-extraction' | 'text-generation' | 'translation' | 'image-classification';
  /** The bundle's name; defaults to the folder's name. */
  name?: string;
}

export interface ConvertResult {
  /** config.json, weights.safetensors, tokenizer.json (+ vocab.json), manifest.json and MODEL_CARD.md, as bytes. */
  files: Record<string, Uint8Array>;
  /** The bundle's config.json object: { architecture: 'hf-bert' | 'hf-distilbert' | 'hf-gpt2' | 'hf-marian' | 'hf-vit', task, hf_config, ... }. */
  config: Record<string, unknown> & { architecture: string; task: string; name: string };
}

/**
 * Converts a Hugging Face model folder (config.json; model.safetensors, its sharded index, or pytorch_model.bin read
 * without running pickle; tokenizer.json or the slow tokenizer's files; ViT's preprocessor_config.json) of a BERT,
 * DistilBERT, GPT-2, MarianMT or ViT model into an attnlens bundle. An unsupported architecture or option, or a
 * missing, truncated or inconsistent file, rejects with an Error naming the file and key.
 * @param input a folder path (Node) or the folder's files by name
 */
export function convert(input: string | HfFolderFiles, options?: ConvertOptions): Promise<ConvertResult>;
