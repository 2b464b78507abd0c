// The attention catalogue (docs/DESIGN.md §3) as plain functions over tensors {dims, data: Float32Array}.
//
//   const { weights } = attention.alignSoft({ scores: { dims: [2, 5], data } }, { causal: true });
//
// Every op takes an object of named input tensors and an object of params, and returns an object of named output
// tensors — the same names as the golden files tests/goldens/attention/<op>.json. Outputs are fresh
// Float32Arrays owned by JS (copied out of the WASM heap), so they stay valid whatever the module does next and
// need no dispose(). Stateful objects that keep WASM memory (MultiHeadKvCache) have dispose().
import { getModule } from './core.js';

/** snake_case op name → camelCase method name ("score_scaled_dot" → "scoreScaledDot"). */
export function methodName(op) {
  return op.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
}

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an Array';
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name}`;
  return typeof value === 'object' ? `a ${value.constructor?.name ?? 'object'}` : `a ${typeof value}`;
}

/** Throws a TypeError/RangeError naming `what` unless `t` is a well-formed {dims, data} tensor. */
export function checkTensor(t, what) {
  if (t === null || typeof t !== 'object' || ArrayBuffer.isView(t) || Array.isArray(t)) {
    throw new TypeError(`${what} must be a tensor { dims: number[], data: Float32Array }, got ${describe(t)}`);
  }
  if (!Array.isArray(t.dims) || !t.dims.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw new TypeError(`${what}.dims must be an array of non-negative integers, got ${JSON.stringify(t.dims)}`);
  }
  if (!(t.data instanceof Float32Array)) {
    throw new TypeError(`${what}.data must be a Float32Array, got ${describe(t.data)}` +
      (Array.isArray(t.data) ? ' (wrap it: new Float32Array(array))' : ''));
  }
  const count = t.dims.reduce((a, b) => a * b, 1);
  if (t.data.length !== count) {
    throw new RangeError(`${what} has dims [${t.dims}] (${count} values) but data holds ${t.data.length}`);
  }
}

/** Builds a tensor, copying `data` into a Float32Array when it is a plain array. */
export function tensor(data, dims) {
  const t = { dims: dims ?? [data.length], data: data instanceof Float32Array ? data : Float32Array.from(data) };
  checkTensor(t, 'tensor(data, dims)');
  return t;
}

function checkParams(op, params) {
  if (params === undefined) return '{}';
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    throw new TypeError(`attention.${methodName(op)}: params must be a plain object, got ${describe(params)}`);
  }
  return JSON.stringify(params);
}

/**
 * Runs catalogue op `op` (snake_case, as in listOps()).
 * @returns {Record<string, {dims: number[], data: Float32Array}>}
 */
export function run(op, inputs, params) {
  if (typeof op !== 'string') throw new TypeError(`attention.run: op must be a string, got ${describe(op)}`);
  const label = `attention.${methodName(op)}`;
  if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) {
    throw new TypeError(`${label}: inputs must be an object of named tensors, got ${describe(inputs)}`);
  }
  for (const [name, t] of Object.entries(inputs)) checkTensor(t, `${label}: input '${name}'`);
  const paramsJson = checkParams(op, params);
  return getModule().runOp(op, inputs, paramsJson);
}

/** Every op the module provides: { name, family, formula, paper, inputs, optionalInputs, outputs, params }. */
export function listOps() {
  return getModule().listOps();
}

// The catalogue, in the order of docs/DESIGN.md §3. index.d.ts declares one method per name; a package test
// checks that this list and the module's listOps() agree, so neither side can drift.
export const OP_NAMES = Object.freeze([
  // score functions
  'score_dot',
  'score_scaled_dot',
  'score_general',
  'score_additive',
  'score_cosine',
  'score_location',
  // alignments
  'align_soft',
  'align_local_m',
  'align_local_p',
  'align_hard_argmax',
  'align_hard_sample',
  // context
  'soft_context',
  'key_value_attention',
  // composite attentions
  'multi_head_attention',
  'structured_self_attention',
  'relation_self_attention',
  'co_attention_parallel',
  'co_attention_max_pooled',
  'co_attention_alternating',
  'attention_over_attention',
  'hierarchical_attention',
  'pointer_attention',
  'coverage_attention',
  'coverage_penalty',
  'position_weighted_memory',
  'visual_soft_attention',
  'doubly_stochastic_penalty',
  // analysis of a model's maps
  'attention_rollout',
  'attention_flow',
]);

/**
 * Multi-head attention with an incremental key/value cache (Vaswani 2017): append positions one decoding step at
 * a time and attend over everything cached. Holds WASM memory: call dispose() when done.
 */
export class MultiHeadKvCache {
  /**
   * @param {{ in_proj_weight, in_proj_bias?, out_proj_weight, out_proj_bias? }} weights tensors, PyTorch layout
   * @param {{ num_heads: number, capacity: number }} params
   */
  constructor(weights, params) {
    const label = 'new MultiHeadKvCache';
    if (weights === null || typeof weights !== 'object') {
      throw new TypeError(`${label}: weights must be an object of named tensors, got ${describe(weights)}`);
    }
    for (const [name, t] of Object.entries(weights)) checkTensor(t, `${label}: weight '${name}'`);
    const paramsJson = checkParams('multi_head_kv_cache', params);
    this._handle = new (getModule().MultiHeadKvCache)(weights, paramsJson);
  }

  _live(method) {
    if (!this._handle) throw new Error(`MultiHeadKvCache.${method}: this cache was disposed`);
    return this._handle;
  }

  /** Projects and stores new positions: key, value [n, E]. */
  append(key, value) {
    checkTensor(key, 'MultiHeadKvCache.append: key');
    checkTensor(value, 'MultiHeadKvCache.append: value');
    this._live('append').append(key, value);
  }

  /** Attends queries [n_q, E] over the cache → { out: [n_q, E], weights: [H, n_q, length] }. */
  attend(query, { causal = true } = {}) {
    checkTensor(query, 'MultiHeadKvCache.attend: query');
    return this._live('attend').attend(query, Boolean(causal));
  }

  get length() {
    return this._live('length').length();
  }

  get capacity() {
    return this._live('capacity').capacity();
  }

  clear() {
    this._live('clear').clear();
  }

  get disposed() {
    return !this._handle;
  }

  /** Frees the cache's WASM memory now. Safe to call twice. */
  dispose() {
    if (this._handle) {
      this._handle.delete();
      this._handle = null;
    }
  }
}

function makeNamespace() {
  const ns = { run, listOps, tensor, MultiHeadKvCache };
  for (const op of OP_NAMES) {
    ns[methodName(op)] = (inputs, params) => run(op, inputs, params);
  }
  return Object.freeze(ns);
}

export const attention = makeNamespace();
