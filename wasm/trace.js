// AttentionMaps: the attention maps of one result, as the engine recorded them (src/trace/trace.h) — every map's
// values back to back in one Float32Array, and one Int32Array index of (kind, layer, head, step, dims, offset).
// Every task's result holds its maps this way (`attentions`, and translation's `word_attentions` and `qk`), so a
// result costs the same few JS objects whether it holds one map or a thousand; a map's object and its Float32Array
// view are made only when asked for.
//
//   const out = await translate('Wie geht es dir?');
//   out.attentions.length;                                  // 37 maps
//   const m = out.attentions.get('cross', { layer: 2, head: 0 });   // { name, layer, head, step, dims, data }
//   const cross = out.attentions.stack('cross');            // { dims: [6, 4, T, S], data } — one view, no copy
//   for (const map of out.attentions) draw(map);            // also .at(i), .filter(), .map(), .find(), …
//
// The arrays belong to the result (the engine copied them out of the WASM heap once): they stay valid after further
// calls and after dispose(). `transferables()` lists their two buffers for postMessage; `AttentionMaps.from()`
// rebuilds the object on the other side from its structured clone.

const FIELDS = 10; // kind, layer, head, step, rank, d0, d1, d2, d3, offset

function count(index, i) {
  const b = i * FIELDS;
  let n = 1;
  for (let r = 0; r < index[b + 4]; r += 1) n *= index[b + 5 + r];
  return n;
}

// 'layers 0–5', 'heads 0, 2', or 'no layer index (layer -1; leave layer out)' for the values of one coordinate.
function describeRange(key, values) {
  if (values.length === 1 && values[0] === -1) return `no ${key} index (${key} -1; leave ${key} out)`;
  const first = values[0];
  const last = values[values.length - 1];
  const runs = last - first === values.length - 1 && values.length > 2;
  return `${key}s ${runs ? `${first}–${last}` : values.join(', ')}`;
}

export class AttentionMaps {
  /**
   * @param {{ kinds: string[], index: Int32Array, values: Float32Array }} [arena] what the engine returns
   */
  constructor({ kinds = [], index = new Int32Array(0), values = new Float32Array(0) } = {}) {
    if (!Array.isArray(kinds) || !(index instanceof Int32Array) || !(values instanceof Float32Array) ||
        index.length % FIELDS !== 0) {
      throw new TypeError('AttentionMaps: expected { kinds: string[], index: Int32Array, values: Float32Array }');
    }
    this._kinds = kinds;
    this._index = index;
    this._values = values;
    Object.freeze(this);
  }

  /**
   * Packs plain maps [{ name, layer, head, step?, dims, data }] into one arena; returns an AttentionMaps as it is
   * and rebuilds one from its structured clone ({ kinds, index, values }, e.g. after postMessage).
   * @returns {AttentionMaps}
   */
  static from(maps) {
    if (maps instanceof AttentionMaps) return maps;
    if (maps && !Array.isArray(maps) && maps.index instanceof Int32Array) return new AttentionMaps(maps);
    if (!Array.isArray(maps)) throw new TypeError('AttentionMaps.from: expected an array of maps or an arena');
    const kinds = [];
    const index = new Int32Array(maps.length * FIELDS);
    let total = 0;
    maps.forEach((m, i) => {
      if (!Array.isArray(m.dims) || m.dims.length > 4) throw new TypeError('AttentionMaps.from: a map needs dims (at most 4)');
      const n = m.dims.reduce((a, b) => a * b, 1);
      if (!m.data || m.data.length !== n) throw new RangeError(`AttentionMaps.from: map ${i} has dims [${m.dims}] but ${m.data?.length} values`);
      let k = kinds.indexOf(m.name);
      if (k < 0) k = kinds.push(m.name) - 1;
      index.set([k, m.layer ?? -1, m.head ?? -1, m.step ?? -1, m.dims.length, ...m.dims, 0, 0, 0, 0].slice(0, 9), i * FIELDS);
      index[i * FIELDS + 9] = total;
      total += n;
    });
    const values = new Float32Array(total);
    maps.forEach((m, i) => values.set(m.data, index[i * FIELDS + 9]));
    return new AttentionMaps({ kinds, index, values });
  }

  /** Number of maps. */
  get length() {
    return this._index.length / FIELDS;
  }

  /** The kinds present, in order of first appearance ('encoder_self', 'decoder_self', 'cross', 'visual', …). */
  get kinds() {
    return [...this._kinds];
  }

  /** Every value of every map, back to back (map i at index offset i). */
  get values() {
    return this._values;
  }

  /** The index: per map, FIELDS int32s (kind, layer, head, step, rank, dims ×4, offset). */
  get index() {
    return this._index;
  }

  /** Map i ({ name, layer, head, step, dims, data }, data a view into `values`); negative i counts from the end. */
  at(i) {
    const n = this.length;
    const j = i < 0 ? n + i : i;
    if (!Number.isInteger(j) || j < 0 || j >= n) return undefined;
    const ix = this._index;
    const b = j * FIELDS;
    const dims = Array.from(ix.subarray(b + 5, b + 5 + ix[b + 4]));
    const offset = ix[b + 9];
    return {
      name: this._kinds[ix[b]],
      layer: ix[b + 1],
      head: ix[b + 2],
      step: ix[b + 3],
      dims,
      data: this._values.subarray(offset, offset + count(ix, j)),
    };
  }

  /**
   * The first map of `name` at that layer/head/step (−1: the map has none; absent: any), or undefined when there
   * are no `name` maps. A layer, head or step that no `name` map has (with the coordinates given before it) is a
   * RangeError naming the ones there are; one that is not an integer, a TypeError.
   */
  get(name, { layer, head, step } = {}) {
    const k = this._kinds.indexOf(name);
    if (k < 0) return undefined;
    const ix = this._index;
    let which = [];
    for (let i = 0; i < this.length; i += 1) if (ix[i * FIELDS] === k) which.push(i);
    const where = [];
    for (const [key, field, value] of [['layer', 1, layer], ['head', 2, head], ['step', 3, step]]) {
      if (value === undefined) continue;
      if (!Number.isInteger(value)) {
        throw new TypeError(`AttentionMaps.get: ${key} must be an integer, got ${JSON.stringify(value) ?? String(value)}`);
      }
      const there = [...new Set(which.map((i) => ix[i * FIELDS + field]))].sort((a, b) => a - b);
      if (!there.includes(value)) {
        throw new RangeError(`AttentionMaps.get: ${key} ${value} is out of range: the '${name}' maps` +
          `${where.length ? ` at ${where.join(', ')}` : ''} have ${describeRange(key, there)}`);
      }
      which = which.filter((i) => ix[i * FIELDS + field] === value);
      where.push(`${key} ${value}`);
    }
    return this.at(which[0]);
  }

  /**
   * Every map of one kind as one tensor — { dims: [layers, heads, ...map dims], data } — a view, no copy. The kind's
   * maps are recorded layer by layer and head by head, back to back; a kind whose maps differ in shape (or are not
   * adjacent) throws.
   */
  stack(name) {
    const k = this._kinds.indexOf(name);
    if (k < 0) throw new RangeError(`AttentionMaps.stack: no '${name}' maps (there are: ${this._kinds.join(', ') || 'none'})`);
    const ix = this._index;
    const which = [];
    for (let i = 0; i < this.length; i += 1) if (ix[i * FIELDS] === k) which.push(i);
    const first = this.at(which[0]);
    const per = first.data.length;
    const layers = new Set(which.map((i) => ix[i * FIELDS + 1])).size;
    which.forEach((i, n) => {
      const b = i * FIELDS;
      const same = ix[b + 4] === first.dims.length && first.dims.every((d, r) => ix[b + 5 + r] === d);
      if (!same || ix[b + 9] !== ix[which[0] * FIELDS + 9] + n * per) {
        throw new RangeError(`AttentionMaps.stack: the '${name}' maps differ in shape or are not adjacent`);
      }
    });
    const heads = which.length / layers;
    if (!Number.isInteger(heads)) throw new RangeError(`AttentionMaps.stack: the '${name}' maps are not layers × heads`);
    const start = ix[which[0] * FIELDS + 9];
    return { dims: [layers, heads, ...first.dims], data: this._values.subarray(start, start + which.length * per) };
  }

  *[Symbol.iterator]() {
    for (let i = 0; i < this.length; i += 1) yield this.at(i);
  }

  /** Every map as an object (views into `values`). */
  toArray() {
    return Array.from(this);
  }

  filter(fn, thisArg) { return this.toArray().filter(fn, thisArg); }
  map(fn, thisArg) { return this.toArray().map(fn, thisArg); }
  find(fn, thisArg) { return this.toArray().find(fn, thisArg); }
  findIndex(fn, thisArg) { return this.toArray().findIndex(fn, thisArg); }
  forEach(fn, thisArg) { this.toArray().forEach(fn, thisArg); }
  some(fn, thisArg) { return this.toArray().some(fn, thisArg); }
  every(fn, thisArg) { return this.toArray().every(fn, thisArg); }
  reduce(...args) { return this.toArray().reduce(...args); }

  /** The buffers to list in postMessage's transfer list (the receiver rebuilds with AttentionMaps.from()). */
  transferables() {
    return [this._index.buffer, this._values.buffer];
  }

  /** JSON: the maps as [{ name, layer, head, step, dims, data: number[] }]. */
  toJSON() {
    return this.map((m) => ({ ...m, data: Array.from(m.data) }));
  }
}
