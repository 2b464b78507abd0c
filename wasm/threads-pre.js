// Prepended (--extern-pre-js, wasm/CMakeLists.txt) to the threaded module wasm/dist-mt/attnlens-mt.mjs, at the top
// level of the ES module, outside Emscripten's factory.
//
// Emscripten 3.1.6's Node code path was written for CommonJS: it calls require('fs' | 'path' | 'worker_threads'),
// reads __dirname, stores `global.Worker` and starts its pthreads with `new Worker(url)`. An ES module has none of
// these, so under Node they are defined here, module-scoped (nothing is added to the caller's globals):
//   require / __filename / __dirname   from import.meta.url
//   global                             a private object (Emscripten's `global.Worker = …` lands there)
//   Worker                             worker_threads.Worker, kept unref()'d: the engine's idle threads never keep a
//                                      Node process alive (wasm/core.js holds the process open while they load)
// In browsers and Web Workers these names keep their usual meaning (Worker is the Web Worker class).
const attnlensNode = typeof process === 'object' && process !== null && typeof process.versions === 'object' &&
  typeof process.versions.node === 'string';
// Variable specifiers: bundlers must not try to resolve Node's modules for a browser build.
const attnlensNodeModule = attnlensNode ? await import(/* @vite-ignore */ /* webpackIgnore: true */ ['node', 'module'].join(':')) : null;
var require = attnlensNode ? attnlensNodeModule.createRequire(import.meta.url) : undefined;
var __filename = attnlensNode ? require('url').fileURLToPath(import.meta.url) : undefined;
var __dirname = attnlensNode ? require('path').dirname(__filename) : undefined;
var global = attnlensNode ? {} : globalThis;
var Worker = attnlensNode
  ? class AttnlensNodeWorker extends require('worker_threads').Worker {
    constructor(url, options) {
      super(url, options);
      this.unref();
    }

    on(event, listener) { // a 'message' listener refs the worker's port again: unref after each
      super.on(event, listener);
      this.unref();
      return this;
    }
  }
  : globalThis.Worker;
