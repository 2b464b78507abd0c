// The worker's side of "Your model" (open.js): the model a person opened from their own files, held here until the
// next one is opened. worker.js passes it two messages:
//
//   { type: 'open', files: { name: File | ArrayBuffer }, int8 }   Files are read here (a Blob crosses as a reference,
//        not its bytes), ArrayBuffers are moved here, not copied; a converted bundle
//        (config.json "architecture": "hf-…") is used as it is, a Hugging Face folder (config.json "model_type") is
//        converted first (convert(), wasm/convert/); `int8`: weights as int8 codes with per-row scales (convert's
//        int8 option; a float32 bundle is loaded with pipeline()'s precision 'int8', the engine's copy of that rule:
//        the same codes and scales, made as the weights are loaded)
//   { type: 'open-run', input, options }                   one run of the opened model's task
//
// Opening a model disposes the previous one first, so its engine's memory is free before the new bundle arrives;
// files that are not a model (detect()) leave the open one as it is.
import { pipeline, convert } from '../wasm/index.js';

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
  const names = Object.keys(data.files ?? {});
  const read = async (v) => new Uint8Array(v instanceof Blob ? await v.arrayBuffer() : v);
  const found = detect(names, names.includes('config.json') ? new TextDecoder().decode(await read(data.files['config.json'])) : '');
  if (found instanceof Error) {
    // Files that are no model leave the open model as it is.
    if (opened) found.message += ` (${opened.info.name} is still open)`;
    throw found;
  }
  if (opened) {
    opened.pipe.dispose(); // before the new weights are read: its memory is free for them
    opened = null;
  }
  // Files (Blobs) arrive as references to the person's files: each is read here, once.
  let files = {};
  for (const n of names) files[n] = await read(data.files[n]);
  let config = found.config;
  if (found.kind === 'hf') {
    post(`Converting the Hugging Face ${config.model_type} folder (${names.length} files)…`);
    const out = await convert(files, { int8: Boolean(data.int8), name: data.name || undefined });
    files = out.files;
    config = out.config;
  }
  const total = Object.values(files).reduce((a, b) => a + b.length, 0);
  post(`Loading ${config.name ?? 'the model'} (${MB(total)}) into the engine…`);
  const precision = data.int8 ? 'int8' : undefined;
  const pipe = await pipeline(config.task, { name: config.name, config, files }, { precision });
  const info = { ...describe(config, files[config.weights ?? 'weights.safetensors']?.length ?? 0), converted: found.kind === 'hf',
    bytes: total, ms: performance.now() - t0 };
  if (precision) info.precision = precision;
  opened = { pipe, info };
  return info;
}

/**
 * One run of the opened model. `output_qk` (the neuron view's query and key vectors) is asked for only where the
 * engine takes it: an engine without it refuses the option by name (an unknown option, or a model kind without the
 * vectors), and the run goes on without it; later runs of the model do not ask again.
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
      if (!/output_qk/.test(String(err?.message))) throw err;
      opened.qk = false;
    }
  }
  output ??= await opened.pipe(data.input, options);
  return { output, ms: performance.now() - t0 };
}
