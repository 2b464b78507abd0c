// convert(): a Hugging Face model folder → an attnlens bundle (docs/DESIGN.md §5 "Converted bundles").
//
//   Node:     await convert('path/to/hf-folder', { out: 'path/to/bundle' })   (npx attnlens convert IN OUT)
//   browser:  await convert({ 'config.json': bytes|Blob, 'model.safetensors': ..., ... })
//
// Both return { files: { name: Uint8Array }, config } — config.json, weights.safetensors, tokenizer.json (+ vocab.json),
// manifest.json, MODEL_CARD.md — by the same code; in Node with `out` the folder is also written, through a
// temporary folder renamed into place, so that a failed conversion never leaves half a bundle. Options: int8
// (scripts/quantize.mjs's rule), task, name.
//
// Steps: config.json → the architecture's sizes and refused options (architectures.js); the weights
// (model.safetensors, sharded through model.safetensors.index.json, or pytorch_model.bin read without running
// pickle: torch-bin.js) → canonical names, every expected tensor present with its shape, buffers and heads the engine
// does not read dropped, tied copies dropped after checking they are equal, floats widened to F32; the tokenizer
// (tokenizer.js) or ViT's preprocessor config; labels from id2label; manifest and model card.
import { ARCHITECTURES, ConvertError } from './architectures.js';
import { findLicense, modelCard } from './card.js';
import { int8Config, int8Eligible, int8Entries } from './int8.js';
import { MANIFEST, manifestOf, manifestText } from './manifest.js';
import { FLOAT_DTYPES, floatValues, parseSafetensors, writeSafetensors } from './safetensors.js';
import { readTorchBin } from './torch-bin.js';
import { convertImageConfig, convertTokenizer, parseJsonFile } from './tokenizer.js';
import { sha256Hex } from '../models.js';

export { ConvertError };
const TASKS = ['text-classification', 'feature-extraction', 'text-generation', 'translation', 'image-classification'];

async function nodeModule(name) {
  return import(/* @vite-ignore */ /* webpackIgnore: true */ name);
}

/** The input as { folder, names, read(name) → Uint8Array }: a folder path (Node) or a map of file name → bytes. */
async function openInput(input) {
  if (typeof input === 'string') {
    const fs = await nodeModule('node:fs/promises');
    const path = await nodeModule('node:path');
    let names;
    try {
      names = (await fs.readdir(input, { withFileTypes: true })).filter((d) => d.isFile() || d.isSymbolicLink()).map((d) => d.name);
    } catch (err) {
      throw new ConvertError(`${input}: cannot read the folder (${err.code ?? err.message})`);
    }
    return { folder: path.basename(path.resolve(input)), names, read: async (n) => new Uint8Array(await fs.readFile(path.join(input, n))) };
  }
  const entries = input instanceof Map ? [...input.entries()]
    : input !== null && typeof input === 'object' && !ArrayBuffer.isView(input) ? Object.entries(input) : null;
  if (!entries) throw new ConvertError('convert: the input must be a folder path (Node) or a map of file name → bytes or Blob');
  const files = new Map();
  for (const [key, value] of entries) {
    const name = String(key).split(/[\\/]/).pop();
    if (files.has(name)) throw new ConvertError(`convert: two input files are named ${name}`);
    files.set(name, value);
  }
  const read = async (n) => {
    const v = files.get(n);
    if (v instanceof Uint8Array) return v;
    if (v instanceof ArrayBuffer) return new Uint8Array(v);
    if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    if (typeof Blob !== 'undefined' && v instanceof Blob) return new Uint8Array(await v.arrayBuffer());
    throw new ConvertError(`convert: input file ${n} must be bytes (Uint8Array, ArrayBuffer) or a Blob`);
  };
  return { folder: null, names: [...files.keys()], read };
}

/** name → { dtype, shape, bytes, file } of every tensor in one weights file. */
function tensorsOf(bytes, file) {
  const out = new Map();
  if (file.endsWith('.safetensors')) {
    const { header, data } = parseSafetensors(bytes, file);
    for (const [name, e] of Object.entries(header)) {
      out.set(name, { dtype: e.dtype, shape: e.shape, bytes: data.subarray(e.data_offsets[0], e.data_offsets[1]), file });
    }
  } else {
    for (const [name, t] of readTorchBin(bytes, file)) out.set(name, { ...t, file });
  }
  return out;
}

/** Every tensor of the checkpoint, and the weights files read. */
async function readWeights(src, record) {
  const has = (f) => src.names.includes(f);
  const single = ['model.safetensors', 'pytorch_model.bin'].find(has);
  const index = ['model.safetensors.index.json', 'pytorch_model.bin.index.json'].find(has);
  if (single && !index) {
    const tensors = tensorsOf(await record(single), single);
    if (!tensors.size) throw new ConvertError(`${single} holds no tensors`);
    return tensors;
  }
  if (!index) {
    const other = ['tf_model.h5', 'flax_model.msgpack', 'model.onnx'].find(has);
    throw new ConvertError(`no weights: expected model.safetensors, model.safetensors.index.json or pytorch_model.bin` +
      (other ? ` (${other} is not read: save the model with save_pretrained(safe_serialization=True))` : ''));
  }
  const doc = parseJsonFile(await record(index), index);
  const map = doc.weight_map;
  if (map === null || typeof map !== 'object' || Array.isArray(map) || !Object.keys(map).length) {
    throw new ConvertError(`${index}: "weight_map" must be an object of tensor name → shard file`);
  }
  const shards = [...new Set(Object.values(map))];
  const tensors = new Map();
  for (const shard of shards) {
    if (typeof shard !== 'string' || !/^[\w.-]+$/.test(shard) || !(shard.endsWith('.safetensors') || shard.endsWith('.bin'))) {
      throw new ConvertError(`${index}: shard ${JSON.stringify(shard)} is not a weights file name in the folder`);
    }
    if (!has(shard)) throw new ConvertError(`${index} names the shard ${shard}, which is missing`);
  }
  for (const shard of shards) {
    for (const [name, t] of tensorsOf(await record(shard), shard)) {
      if (map[name] !== shard) {
        throw new ConvertError(`${shard}: tensor ${name} is ${map[name] ? `listed under ${map[name]}` : 'not listed'} in ${index}`);
      }
      if (tensors.has(name)) throw new ConvertError(`${shard}: tensor ${name} is also in ${tensors.get(name).file}`);
      tensors.set(name, t);
    }
  }
  for (const [name, shard] of Object.entries(map)) {
    if (!tensors.has(name)) throw new ConvertError(`${index} lists tensor ${name} in ${shard}, which does not hold it`);
  }
  return tensors;
}

/** F32 bytes as a Float32Array: a view when aligned (no copy of a large model), else an aligned copy. */
const f32View = (b) => (b.byteOffset % 4 === 0 ? new Float32Array(b.buffer, b.byteOffset, b.length / 4) : new Float32Array(b.slice().buffer));
const floats = (t) => floatValues({ dtype: t.dtype, data_offsets: [0, t.bytes.length] }, t.bytes);
const sameValues = (a, b) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]) || v === b[i]);

/** Marian's sinusoidal position table [n, d] as Hugging Face's MarianSinusoidalPositionalEmbedding fills it. */
function marianSinusoid(n, d) {
  const out = new Float32Array(n * d);
  const half = Math.ceil(d / 2);
  for (let pos = 0; pos < n; pos++) {
    for (let j = 0; j < d; j++) {
      const angle = pos / 10000 ** ((2 * Math.floor(j / 2)) / d);
      const col = j % 2 === 0 ? j / 2 : half + (j - 1) / 2;
      out[pos * d + col] = j % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
    }
  }
  return out;
}

/** The checkpoint's tensors under canonical names, checked against the architecture; what was dropped and why. */
function canonicalTensors(arch, hp, raw, hfConfig, className) {
  const kept = new Map();
  const tied = new Map();
  const dropped = [];
  for (const [key, t] of raw) {
    const c = arch.canonical(key);
    if (c.drop) {
      dropped.push([key, c.drop]);
    } else if (c.tie) {
      tied.set(c.tie, { ...t, key });
    } else if (c.sinusoidal) {
      const [n, d] = arch.sinusoidal(hp);
      const at = `${t.file}: ${key}`;
      if (t.shape.join('x') !== `${n}x${d}` || !FLOAT_DTYPES.includes(t.dtype)) {
        throw new ConvertError(`${at} is ${t.dtype} [${t.shape}], expected a float [${n}, ${d}] position table`);
      }
      const want = marianSinusoid(n, d);
      const got = floats(t);
      if (got.some((v, i) => !(Math.abs(v - want[i]) <= 1e-4))) {
        throw new ConvertError(`${at} is not Marian's sinusoidal position table; learned positions are not supported`);
      }
      dropped.push([key, 'the sinusoidal position table, which the engine computes (checked equal)']);
    } else {
      if (kept.has(c.name)) throw new ConvertError(`${t.file}: tensors ${kept.get(c.name).key} and ${key} are both ${c.name}`);
      kept.set(c.name, { ...t, key });
    }
  }
  for (const [copy, original] of arch.ties) {
    if (!kept.has(original) && tied.has(copy)) { // safetensors keeps one name of tied tensors, not always the original
      kept.set(original, tied.get(copy));
      tied.delete(copy);
    }
  }
  const head = kept.has('classifier.weight') ? kept.get('classifier.weight').shape[0] : 0;
  const kind = arch.classes[className];
  if (kind === 'classifier' && !head) throw new ConvertError(`weights: ${className} needs classifier.weight, which the checkpoint lacks`);
  if (head && arch.dropWithHead) {
    for (const name of [...kept.keys()].filter((n) => arch.dropWithHead[0].test(n))) {
      dropped.push([kept.get(name).key, arch.dropWithHead[1]]);
      kept.delete(name);
    }
  }
  for (const [copy, original, onDiff] of arch.ties) {
    const t = tied.get(copy) ?? kept.get(copy);
    if (!t) continue;
    const o = kept.get(original);
    if (!o) throw new ConvertError(`weights: ${t.key} is there but ${original} is missing`);
    if (t.shape.join('x') === o.shape.join('x') && sameValues(floats(t), floats(o))) {
      dropped.push([t.key, `a tied copy of ${original} (checked equal)`]);
      tied.delete(copy);
      kept.delete(copy);
    } else if (onDiff === 'refuse') {
      throw new ConvertError(`${t.file}: ${t.key} differs from ${original}; untied embeddings are not supported`);
    } else if (!kept.has(copy)) {
      kept.set(copy, t);
    }
  }
  if (arch.ties.some(([c]) => c === 'lm_head.weight') && !kept.has('lm_head.weight') && hfConfig.tie_word_embeddings === false) {
    throw new ConvertError('weights: config.json says "tie_word_embeddings": false but the checkpoint has no lm_head.weight');
  }
  const out = [];
  for (const [name, shape, optional] of arch.expected(hp, head)) {
    const t = kept.get(name);
    if (!t) {
      if (optional) continue;
      throw new ConvertError(`weights: tensor ${name} [${shape}] is missing (looked for it under Hugging Face's names)`);
    }
    if (!FLOAT_DTYPES.includes(t.dtype)) {
      throw new ConvertError(`${t.file}: ${t.key} is ${t.dtype}; weights must be F32, F16 or BF16`);
    }
    if (t.shape.join('x') !== shape.join('x')) {
      throw new ConvertError(`${t.file}: ${t.key} has shape [${t.shape}], config.json implies [${shape}]`);
    }
    const values = t.dtype === 'F32' ? f32View(t.bytes) : floats(t);
    const bad = values.findIndex((v) => !Number.isFinite(v));
    if (bad >= 0) throw new ConvertError(`${t.file}: ${t.key} has the value ${values[bad]} at index ${bad}; weights must be finite`);
    t.values = values;
    out.push([name, t]);
    kept.delete(name);
  }
  for (const t of kept.values()) {
    throw new ConvertError(`${t.file}: tensor ${t.key} is not part of ${className} as attnlens reads it ` +
      '(an unsupported head or option?)');
  }
  return { tensors: out, head, dropped };
}

function pickClass(modelType, arch, hfConfig, raw) {
  const listed = hfConfig.architectures;
  if (listed !== undefined && listed !== null && (!Array.isArray(listed) || typeof listed[0] !== 'string')) {
    throw new ConvertError('config.json: "architectures" must be an array of class names');
  }
  if (listed?.length) {
    if (!Object.hasOwn(arch.classes, listed[0])) {
      throw new ConvertError(`config.json: "architectures": ${listed[0]} is not supported (for ${modelType}: ${Object.keys(arch.classes).join(', ')})`);
    }
    return listed[0];
  }
  const names = Object.keys(arch.classes);
  const hasHead = [...raw.keys()].some((k) => k === 'classifier.weight');
  return (hasHead && names.find((n) => arch.classes[n] === 'classifier')) || names[0];
}

function labelsOf(hfConfig, rows) {
  const map = hfConfig.id2label;
  if (map === undefined || map === null) return Array.from({ length: rows }, (_, i) => `LABEL_${i}`);
  if (typeof map !== 'object' || Array.isArray(map)) throw new ConvertError('config.json: "id2label" must be an object of id → label');
  const labels = [];
  for (let i = 0; i < Object.keys(map).length; i++) {
    if (typeof map[String(i)] !== 'string') throw new ConvertError(`config.json: "id2label" has no string label for id ${i}`);
    labels.push(map[String(i)]);
  }
  if (labels.length !== rows) {
    throw new ConvertError(`config.json: "id2label" has ${labels.length} labels, classifier.weight has ${rows} rows`);
  }
  return labels;
}

/**
 * Converts a Hugging Face model folder.
 * @param {string | Map<string, Uint8Array|Blob> | Record<string, Uint8Array|Blob|ArrayBuffer>} input
 * @param {{ out?: string, int8?: boolean, task?: string, name?: string }} [options]
 * @returns {Promise<{ files: Record<string, Uint8Array>, config: object }>}
 */
export async function convert(input, options = {}) {
  const known = ['out', 'int8', 'task', 'name'];
  const unknown = Object.keys(options ?? {}).filter((k) => !known.includes(k));
  if (unknown.length) throw new ConvertError(`convert: unknown option ${unknown[0]} (known: ${known.join(', ')})`);
  if (options.task !== undefined && !TASKS.includes(options.task)) {
    throw new ConvertError(`convert: task ${JSON.stringify(options.task)} is not one of ${TASKS.join(', ')}`);
  }
  if (options.name !== undefined && (typeof options.name !== 'string' || !options.name.trim())) {
    throw new ConvertError('convert: name must be a non-empty string');
  }
  const src = await openInput(input);
  const sourceFiles = {};
  const record = async (f) => {
    const bytes = await src.read(f);
    sourceFiles[f] = { sha256: await sha256Hex(bytes), bytes: bytes.length };
    return bytes;
  };
  if (!src.names.includes('config.json')) throw new ConvertError('config.json is missing: not a Hugging Face model folder');
  const hfConfig = parseJsonFile(await record('config.json'), 'config.json');
  const modelType = hfConfig.model_type;
  const arch = typeof modelType === 'string' && Object.hasOwn(ARCHITECTURES, modelType) ? ARCHITECTURES[modelType] : null;
  if (!arch) {
    throw new ConvertError(`config.json: "model_type": ${JSON.stringify(modelType)} is not supported (supported: ${Object.keys(ARCHITECTURES).join(', ')})`);
  }
  const hp = arch.config(hfConfig);
  const raw = await readWeights(src, record);
  const className = pickClass(modelType, arch, hfConfig, raw);
  const { tensors, head, dropped } = canonicalTensors(arch, hp, raw, hfConfig, className);
  const kind = head ? 'classifier' : 'base';
  const task = options.task ?? arch.tasks[kind][0];
  if (!arch.tasks[kind].includes(task)) {
    throw new ConvertError(`convert: task ${task} needs ${task.endsWith('classification') ? 'a classification head' : 'another model'}; ` +
      `this ${className} does ${arch.tasks[kind].join(', ')}`);
  }

  const files = {};
  let config = { architecture: arch.architecture, version: 1, task,
    name: options.name ?? src.folder ?? (typeof hfConfig._name_or_path === 'string' && hfConfig._name_or_path.trim() ? hfConfig._name_or_path : 'model'),
    hf_config: hfConfig };
  if (arch.tokenizer === 'image') {
    if (!src.names.includes('preprocessor_config.json')) throw new ConvertError('preprocessor_config.json is missing (a ViT folder needs it)');
    config.image = convertImageConfig(await record('preprocessor_config.json'), hp);
  } else {
    const tok = await convertTokenizer(arch.tokenizer, record, src.names, hp.vocab_size);
    config.tokenizer = tok.entry;
    Object.assign(files, tok.files);
  }
  if (head && task !== 'feature-extraction') config.labels = labelsOf(hfConfig, head);
  config.weights = 'weights.safetensors';
  config.weights_dtype = 'float32';

  const entries = [];
  let params = 0;
  for (const [name, t] of tensors) {
    const w = t.values;
    params += w.length;
    if (options.int8 && int8Eligible(config, name, { dtype: 'F32', shape: t.shape }, {})) entries.push(...int8Entries(name, t.shape, w));
    else entries.push([name, 'F32', t.shape, new Uint8Array(w.buffer, w.byteOffset, w.byteLength)]);
  }
  let readme = null;
  if (src.names.includes('README.md')) readme = new TextDecoder().decode(await record('README.md'));
  config.source = { format: 'hugging-face', folder: src.folder ?? config.name, model_type: modelType, class: className,
    files: sourceFiles, converter: 'attnlens convert' };
  if (options.int8) config = int8Config(config); // as scripts/quantize.mjs writes it for the float32 bundle
  files['weights.safetensors'] = writeSafetensors(entries, { format: 'pt' });
  files['config.json'] = new TextEncoder().encode(`${JSON.stringify(config, null, 2)}\n`);
  files[MANIFEST] = new TextEncoder().encode(manifestText(await manifestOf(config, files)));
  files['MODEL_CARD.md'] = new TextEncoder().encode(modelCard({ config, modelType, hp, className, params, dropped,
    sourceFiles, license: findLicense(readme, hfConfig) }));
  const ordered = {};
  for (const f of ['config.json', 'weights.safetensors', 'tokenizer.json', 'vocab.json', MANIFEST, 'MODEL_CARD.md']) {
    if (files[f]) ordered[f] = files[f];
  }
  if (options.out !== undefined) await writeFolder(options.out, ordered);
  return { files: ordered, config };
}

/** Writes the bundle to `out` (which must not exist) through a temporary folder beside it, renamed at the end. */
export async function writeFolder(out, files) {
  if (typeof out !== 'string' || !out) throw new ConvertError('convert: out must be a folder path');
  const fs = await nodeModule('node:fs/promises');
  const path = await nodeModule('node:path');
  const target = path.resolve(out);
  if (await fs.stat(target).then(() => true, () => false)) {
    throw new ConvertError(`${out} already exists; convert writes a new folder (remove it or choose another name)`);
  }
  await fs.mkdir(path.dirname(target), { recursive: true });
  const temp = await fs.mkdtemp(path.join(path.dirname(target), `.${path.basename(target)}.partial-`));
  try {
    for (const [name, bytes] of Object.entries(files)) await fs.writeFile(path.join(temp, name), bytes);
    await fs.rename(temp, target);
  } catch (err) {
    await fs.rm(temp, { recursive: true, force: true });
    throw err;
  }
}
