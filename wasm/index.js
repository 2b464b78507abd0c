// attnlens — the package's public ESM entry (`import { attention, init } from 'attnlens'`).
//
// Layout, so each part can grow on its own:
//   core.js       loads the WebAssembly module once (init, getModule, info, memoryStats)
//   attention.js  the mechanism catalogue as functions over {dims, data} tensors, and MultiHeadKvCache
//   text.js       the engine's tokenizers (BpeTokenizer, tokenizeWords)
//   pipeline.js   pipeline(task, model, opts) of docs/DESIGN.md §9; tasks in pipelines/<task>.js
//   models.js     where bundles live (env), fetching, progress and the browser cache
//   convert/      convert(): a Hugging Face model folder → a bundle (also `npx attnlens convert`, wasm/cli.js)
export { init, info, isReady, memoryStats, threads, setThreads, threadsAvailable } from './core.js';
export { attention, MultiHeadKvCache, OP_NAMES, tensor, listOps } from './attention.js';
export { BpeTokenizer, tokenizeWords } from './text.js';
export { pipeline, listTasks, TASKS } from './pipeline.js';
export { env, loadBundle } from './models.js';
export { AttentionMaps } from './trace.js';
export { convert } from './convert/index.js';
