// A bundle's manifest.json (docs/DESIGN.md §5): the byte length and SHA-256 of config.json and of every file it names
// (wasm/models.js bundleFileNames), in that order. Written by the converter and by scripts/bundle-digests.mjs;
// wasm/models.js parseManifest() reads it.
import { bundleFileNames, sha256Hex } from '../models.js';

export const MANIFEST = 'manifest.json';

/** The files a manifest lists for this config.json object: config.json first, then the files it names. */
export function manifestFileNames(config) {
  return ['config.json', ...bundleFileNames(config).filter((f) => f !== 'config.json')];
}

/** The manifest document from { file: { sha256, bytes } } in manifestFileNames order. */
export function manifestDoc(files) {
  return { format: 'attnlens-manifest', version: 1, files };
}

/** manifest.json's text. */
export function manifestText(doc) {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** The manifest document of a bundle held in memory: config (the object) and files (name → Uint8Array). */
export async function manifestOf(config, files) {
  const entries = {};
  for (const f of manifestFileNames(config)) {
    const bytes = files[f];
    if (!bytes) throw new Error(`${f} is named by config.json but missing`);
    entries[f] = { sha256: await sha256Hex(bytes), bytes: bytes.length };
  }
  return manifestDoc(entries);
}
