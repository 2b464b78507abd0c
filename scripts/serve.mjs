// A tiny dependency-free static server for the page (web/) and the package files it imports (wasm/). Only those
// two folders are served; `/` redirects to /web/. .wasm goes out as application/wasm, which
// WebAssembly.instantiateStreaming and bundlers expect.
//
// Every response carries a strict Content-Security-Policy (CSP below): the HTML page gets it, and so do the scripts,
// because a worker (worker.js) and the service worker (sw.js) are governed by the policy sent with their own script.
// The page needs no inline script or style and no eval; 'wasm-unsafe-eval' is what WebAssembly compilation needs
// (the Emscripten glue is built with -sDYNAMIC_EXECUTION=0, so it never calls eval or new Function).
import { createServer } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import path from 'node:path';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.safetensors': 'application/octet-stream',
};
const SERVED = ['web', 'wasm', 'models'];

export const CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self' blob:", // the captioning pipeline fetch()es an image given as an object URL (blob:)
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');
// Cross-origin isolation (COOP + COEP): it gives the page SharedArrayBuffer, so the package loads its threaded
// module (wasm/core.js, threadsAvailable()); every file here is same-origin, so require-corp costs nothing.
const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

/** Starts the server on `port` (0: any free port); resolves with { server, url }. isolated: false leaves out the
 * COOP/COEP headers (the page then runs the single-threaded module; the e2e tests check both). */
export function serve(root, { port = 8080, host = '127.0.0.1', isolated = true } = {}) {
  const SECURITY_HEADERS = { 'Content-Security-Policy': CSP, ...(isolated ? ISOLATION_HEADERS : {}) };
  const server = createServer((req, res) => {
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      res.writeHead(400, SECURITY_HEADERS).end('bad request');
      return;
    }
    if (pathname === '/' || pathname === '/index.html') {
      res.writeHead(302, { ...SECURITY_HEADERS, Location: '/web/' }).end();
      return;
    }
    if (pathname.endsWith('/')) pathname += 'index.html';
    const file = path.resolve(root, `.${pathname}`);
    const top = path.relative(root, file).split(path.sep)[0];
    if (!file.startsWith(root + path.sep) || !SERVED.includes(top)) {
      res.writeHead(404, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    let stat;
    try {
      stat = statSync(file);
    } catch {
      res.writeHead(404, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    if (stat.isDirectory()) {
      res.writeHead(302, { ...SECURITY_HEADERS, Location: `${pathname}/` }).end();
      return;
    }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
      'Content-Length': stat.size,
      'Cache-Control': 'no-cache',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: actual } = server.address();
      resolve({ server, url: `http://${host === '0.0.0.0' ? 'localhost' : host}:${actual}/web/` });
    });
  });
}
