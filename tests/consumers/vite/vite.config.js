// Builds the app and copies the package's model bundles next to the assets (dist/models/), where main.js points
// env.modelBaseUrl. Bundles are plain files: any static host serves them.
import { cpSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { defineConfig } from 'vite';

const require = createRequire(import.meta.url);
const models = path.join(path.dirname(require.resolve('attnlens/package.json')), 'models');

export default defineConfig({
  base: './',
  build: { target: 'es2022' },
  plugins: [{
    name: 'copy-attnlens-models',
    apply: 'build',
    writeBundle(options) {
      if (existsSync(models)) cpSync(models, path.join(options.dir, 'models'), { recursive: true });
    },
  }],
});
