// The worker's side of "Your model" (open.js): the model a person opened from their own files, held here until the
// next one is opened. worker.js passes it two messages:
//
//   { type: 'open', files: { name: File | ArrayBuffer }, int8 }   Files are read here (a Blob crosses as a reference,
//        not its bytes), ArrayBuffers are moved here, not copied; a converted bundle
//        (config.json "architecture": "hf-…") is used as it is, a Hugging Face folder (config.json "model_type") is
//        converted first (convert(), wasm/convert/); `int8`: weights as int8 codes with per-row scales (convert's
//        int8 option; a float bundle's weights quantized here by the same rule, wasm/convert/int8.js)
//   { type: 'open-run', input, options }                   one run of the opened model's task
//
// Opening a model disposes the previous one first, so its engine's memory is free before the new bundle arrives.
import { pipeline, convert } from '../wasm/index.js';
import { initHf } from '../wasm/core.js';
import { int8Config, int8Eligible, int8Entries } from '../wasm/convert/int8.js';
import { parseSafetensors, writeSafetensors, floatValues } from '../wasm/convert/safetensors.js';
import { MANIFEST } from '../wasm/convert/manifest.js';

let opened = null; // { pipe, info }

const WEIGHTS = ['model.safetensors', 'model.safetensors.index.json', 'pytorch_model.bin'];
const MB = (n) => `${(n / 1e6).toFixed(1)} MB`;

/** What the files are: { kind: 'bundle' | 'hf', config } or an Error that says what is missing. */
export function detect(names, configText) {
  if (!names.includes('config.json')) {
    return new Error(`no config.json among the ${names.length} file${names.length === 1 ? '' : 's'} ` +
      `(${names.slice(0, 4).join(', ')}${names.length > 4 ? ', …' : ''}): open the model's folder, or every file in it`);
  }
  let config;
  try {
    config = JSON.parse(configText);
  } catch (err) {
    return new Error(`config.json is not valid JSON (${err.message})`);
  }
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return new Error('config.json does not hold a JSON object');
  if (typeof config.architecture === 'string') {
    if (config.architecture.startsWith('hf-')) return { kind: 'bundle', config };
    return new Error(`config.json names the architecture "${config.architecture}": this section opens converted Hugging ` +
      'Face bundles (architecture hf-…) and Hugging Face folders; the page\'s own models are in the demos above');
  }
  if (typeof config.model_type === 'string') {
    if (!WEIGHTS.some((w) => names.includes(w))) {
      return new Error(`a Hugging Face folder (model_type "${config.model_type}") without weights: it needs ` +
        `${WEIGHTS.join(' or ')}`);
    }
    return { kind: 'hf', config };
  }
  return new Error('config.json has neither "architecture" (a converted bundle) nor "model_type" (a Hugging Face folder)');
}

/** A float bundle's files with its 2-D weights as int8 codes and per-row scales (the converter's --int8 rule). */
function quantizeBundle(config, files) {
  const name = config.weights ?? 'weights.safetensors';
  const bytes = files[name];
  if (!bytes) return { config, files }; // loadBundle() names the missing file
  const { header, data } = parseSafetensors(bytes, name);
  const entries = [];
  for (const [t, e] of Object.entries(header)) {
    if (e.dtype === 'F32' && int8Eligible(config, t, e, header)) entries.push(...int8Entries(t, e.shape, floatValues(e, data)));
    else entries.push([t, e.dtype, e.shape, data.subarray(e.data_offsets[0], e.data_offsets[1])]);
  }
  const q = int8Config(config);
  const out = { ...files, [name]: writeSafetensors(entries, { format: 'pt' }), 'config.json': new TextEncoder().encode(JSON.stringify(q)) };
  delete out[MANIFEST]; // its digests are those of the float files
  return { config: q, files: out };
}

/** Layers, heads, parameters and labels of a converted bundle's config (its hf_config is the source's config.json). */
function describe(config, weightsBytes) {
  const hf = config.hf_config ?? {};
  const layers = hf.num_hidden_layers ?? hf.n_layer ?? hf.encoder_layers ?? hf.n_layers ?? null;
  const heads = hf.num_attention_heads ?? hf.n_head ?? hf.encoder_attention_heads ?? hf.n_heads ?? null;
  return { name: config.name, architecture: config.architecture, task: config.task, layers, heads,
    labels: Array.isArray(config.labels) ? config.labels : null, precision: config.weight_precision ?? 'f32',
    weightsBytes };
}

/** Opens the model in `data.files`; `post(text)` reports each step. Resolves with what the page shows about it. */
export async function openModel(data, post) {
  const t0 = performance.now();
  if (opened) {
    opened.pipe.dispose();
    opened = null;
  }
  const names = Object.keys(data.files ?? {});
  // Files (Blobs) arrive as references to the person's files: each is read here, once.
  let files = {};
  for (const n of names) {
    const v = data.files[n];
    files[n] = new Uint8Array(v instanceof Blob ? await v.arrayBuffer() : v);
  }
  const found = detect(names, files['config.json'] ? new TextDecoder().decode(files['config.json']) : '');
  if (found instanceof Error) throw found;
  let config = found.config;
  if (found.kind === 'hf') {
    post(`Converting the Hugging Face ${config.model_type} folder (${names.length} files)…`);
    const out = await convert(files, { int8: Boolean(data.int8), name: data.name || undefined });
    files = out.files;
    config = out.config;
  } else if (data.int8 && (config.weight_precision ?? 'f32') !== 'int8') {
    post('Quantizing the weights to int8…');
    ({ config, files } = quantizeBundle(config, files));
  }
  const total = Object.values(files).reduce((a, b) => a + b.length, 0);
  post(`Loading ${config.name ?? 'the model'} (${MB(total)}) into the engine…`);
  const pipe = await pipeline(config.task, { name: config.name, config, files });
  const info = { ...describe(config, files[config.weights ?? 'weights.safetensors']?.length ?? 0), converted: found.kind === 'hf',
    bytes: total, ms: performance.now() - t0, heapBytes: (await initHf()).HEAP8.buffer.byteLength };
  opened = { pipe, info };
  return info;
}

/**
 * One run of the opened model. `output_qk` (the neuron view's query and key vectors) is asked for only where the
 * engine takes it: an engine without the option refuses it by name (a TypeError), and the run goes on without it.
 */
export async function runOpened(data) {
  if (!opened) throw new Error('no model is open: open a model folder first');
  const t0 = performance.now();
  const { output_qk: qk, ...options } = data.options ?? {};
  let output;
  if (qk && opened.qk !== false) {
    try {
      output = await opened.pipe(data.input, { ...options, output_qk: true });
      opened.qk = true;
    } catch (err) {
      if (!(err instanceof TypeError && /output_qk/.test(err.message))) throw err;
      opened.qk = false;
    }
  }
  output ??= await opened.pipe(data.input, options);
  return { output, ms: performance.now() - t0, heapBytes: (await initHf()).HEAP8.buffer.byteLength };
}
