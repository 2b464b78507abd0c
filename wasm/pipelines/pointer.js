// The 'number-sorting' pipeline (alias 'pointer-sort'): a pointer network (Vinyals et al. 2015) that sorts numbers
// and returns the pointer distribution of every output step. pipeline.js calls createPointerSortPipeline(bundle,
// options) after `await init()`.
//
//   const sort = await pipeline('number-sorting');            // model 'pointer-sort'
//   const out = await sort('5, 3, 9, 1');                     // or sort([5, 3, 9, 1])
//   // { sorted: [1, 3, 5, 9], order: [3, 1, 0, 2], values: [5, 3, 9, 1], sorted_ok: true,
//   //   step_probabilities: Float32Array [p of each chosen position], inputs: Float32Array (min–max scaled),
//   //   attentions: AttentionMaps (wasm/trace.js) of [{ name: 'pointer', layer: -1, head: -1, dims: [4, 4], data },   // row = output step
//   //                { name: 'encoder_self', layer, head, dims: [4, 4], data }, …] }
//
// Input: an array of numbers, a typed array (Float64Array, Float32Array, Int32Array, …), or a string of numbers
// separated by commas, semicolons or white space ("5, 3 9;1"; decimal syntax such as -2.5e3). 1 ≤ n ≤ maxLength
// (50 for pointer-sort). Errors, checked in JS before the engine runs: an element that is not a number, or a string
// item that is not a decimal number ("abc"), is a TypeError naming it; NaN, ±Infinity, an empty list and more than
// maxLength numbers are RangeErrors. Equal numbers keep their input order. The model is trained on 1–10 numbers
// and is less accurate on longer lists: the output is always a permutation of the input, and `sorted_ok` says
// whether it is sorted. Run option: output_attentions (default true; false keeps only the 'pointer' map; the
// deprecated name encoder_attentions is still read).
import { getModule } from '../core.js';
import { describe, isDetached } from './input.js';
import { bundleWeights, configText, createPipeline } from './base.js';
import { checkContractOptions, contractOf, engineJson } from './contract.js';
import { AttentionMaps } from '../trace.js';

const TASK = 'number-sorting';
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

const show = (s) => JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);

/** The numbers of a string, array or typed array, checked (see above); `maxLength` from the model. */
export function parseNumbers(input, maxLength) {
  let values;
  if (typeof input === 'string') {
    const items = input.split(/[\s,;]+/).filter((s) => s.length > 0);
    values = items.map((item, i) => {
      if (!DECIMAL.test(item)) {
        throw new TypeError(`attnlens: ${TASK}: item ${i + 1} (${show(item)}) is not a number`);
      }
      const v = Number(item);
      if (!Number.isFinite(v)) {
        throw new RangeError(`attnlens: ${TASK}: item ${i + 1} (${show(item)}) is too large (beyond ±1.8e308)`);
      }
      return v;
    });
  } else if (Array.isArray(input) || (ArrayBuffer.isView(input) && !(input instanceof DataView))) {
    if (ArrayBuffer.isView(input) && isDetached(input)) {
      throw new TypeError(`attnlens: ${TASK}: the input is a view of a detached ArrayBuffer; pass a copy`);
    }
    if (typeof input[0] === 'bigint' || input instanceof BigInt64Array || input instanceof BigUint64Array) {
      throw new TypeError(`attnlens: ${TASK}: the input must hold numbers, not BigInts`);
    }
    values = Array.from(input, (v, i) => {
      if (typeof v !== 'number') {
        throw new TypeError(`attnlens: ${TASK}: item ${i + 1} must be a number, got ${describe(v)}`);
      }
      if (!Number.isFinite(v)) {
        throw new RangeError(`attnlens: ${TASK}: item ${i + 1} is ${String(v)}; every number must be finite`);
      }
      return v;
    });
  } else {
    throw new TypeError(`attnlens: ${TASK} input must be an array of numbers or a string of numbers, got ${describe(input)}`);
  }
  if (values.length === 0) throw new RangeError(`attnlens: ${TASK}: empty input: give at least one number to sort`);
  if (values.length > maxLength) {
    throw new RangeError(`attnlens: ${TASK}: too many numbers: got ${values.length}, this model sorts at most ${maxLength}`);
  }
  return values;
}

/**
 * @param {{ name: string, config: object, configText: string, files: Record<string, Uint8Array> }} bundle
 * @param {object} [options] none yet
 */
export async function createPointerSortPipeline(bundle, options = {}) {
  const contract = contractOf(TASK);
  checkContractOptions(contract, options, 'creation', `${TASK} pipeline`);
  const engine = getModule().PointerSorter.fromBundle(configText(bundle), bundleWeights(bundle, TASK),
    String(bundle.name ?? ''));
  const maxLength = engine.maxLength();

  const call = async (live, input, runOptions = {}) => {
    const params = engineJson(contract, checkContractOptions(contract, runOptions, 'call', TASK));
    const r = live().sort(Float64Array.from(parseNumbers(input, maxLength)), params);
    return { ...r, attentions: new AttentionMaps(r.attentions) };
  };
  return createPipeline({ task: TASK, bundle, engine, call, fields: () => ({ maxLength }) });
}
