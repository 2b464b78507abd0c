// --pre-js of the WASM test and benchmark runners (attnlens_tests.js, bench_kernels.js), which run as plain
// CommonJS scripts under Node. Emscripten 3.1.6's loader calls fetch() on the .wasm path whenever fetch exists,
// and Node 20's fetch cannot read local files ("Failed to parse URL"); handing it the bytes skips that path.
if (typeof process === 'object' && typeof require === 'function' && typeof __filename === 'string') {
  Module['wasmBinary'] = require('fs').readFileSync(__filename.replace(/\.js$/, '.wasm'));
}
