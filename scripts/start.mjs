#!/usr/bin/env node
// `npm start`: builds the WASM module when it is missing or stale, then serves the page on localhost.
//   PORT=8080 (default; the next free port is used when it is taken), HOST=127.0.0.1
import { ROOT, buildTree } from './build.mjs';
import { serve } from './serve.mjs';

try {
  buildTree('wasm', { targets: ['attnlens_wasm'] });
} catch (err) {
  console.error(`build failed: ${err.message}`);
  process.exit(1);
}

const host = process.env.HOST || '127.0.0.1';
let port = Number(process.env.PORT || 8080);
for (let attempt = 0; ; attempt++) {
  try {
    const { url } = await serve(ROOT, { port, host });
    console.log(`\nattnlens page: ${url}\n(Ctrl+C to stop)`);
    break;
  } catch (err) {
    if (err.code !== 'EADDRINUSE' || attempt >= 20) {
      console.error(`cannot serve on ${host}:${port}: ${err.message}`);
      process.exit(1);
    }
    port += 1;
  }
}
