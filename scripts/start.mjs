#!/usr/bin/env node
// `npm start`: installs the toolchain the WASM build needs when it is missing (scripts/toolchain.sh: Debian packages
// through apt-get, sudo when not root; the same list CI uses), builds the WASM module when it is missing or stale,
// then serves the page on localhost.
//   PORT=8080 (default; the next free port is used when it is taken), HOST=127.0.0.1
//   ATTNLENS_DRY_RUN=1: only say what would be installed (the apt-get commands), build and serve nothing
// Emscripten's optimizer finds Debian's acorn through NODE_PATH=/usr/share/nodejs: build.mjs sets it for every
// command it runs.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT, buildTree } from './build.mjs';
import { serve } from './serve.mjs';

const dryRun = process.env.ATTNLENS_DRY_RUN === '1';

const check = spawnSync('bash', [path.join(ROOT, 'scripts', 'toolchain.sh'), 'start'], { cwd: ROOT, stdio: 'inherit' });
if (check.error || check.status !== 0) {
  if (check.error) console.error(`cannot run scripts/toolchain.sh: ${check.error.message}`);
  process.exit(check.status || 1);
}
// What the page loads: the package's module (build-wasm/, and build-wasm-mt/ for threads) and the converted models'
// module that its "Your model" section runs (initHf()).
const PAGE_TARGETS = ['attnlens_wasm', 'attnlens_hf_wasm'];
if (dryRun) {
  console.log(`dry run: would build build-wasm/ (${PAGE_TARGETS.join(', ')}) and build-wasm-mt/ (attnlens_wasm) and serve web/`);
  process.exit(0);
}

try {
  buildTree('wasm', { targets: PAGE_TARGETS });
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
