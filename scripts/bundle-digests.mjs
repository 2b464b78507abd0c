#!/usr/bin/env node
// Writes (or checks) each model bundle's manifest.json: the byte length and SHA-256 of every file the bundle loader
// fetches — config.json and the files it names (weights, tokenizer files, "files"; wasm/models.js bundleFileNames()),
// not MODEL_CARD.md, LICENSE or the goldens. The loader checks each file against it before parsing it
// (docs/DESIGN.md §5, README "Verified model files").
//
//   node scripts/bundle-digests.mjs [--check] [BUNDLE ...]     (npm run digests)
//
// BUNDLE is a name under models/ ('sst2-selfattn') or a folder path ('./some/dir/my-bundle'); without any, every
// models/<name>/ that has a config.json. --check writes nothing: it exits 1, naming the bundle and the file, when a
// manifest is missing, lists other files than the loader fetches, or a file's length or digest differs.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseManifest } from '../wasm/models.js';
import { MANIFEST, manifestDoc, manifestFileNames, manifestText } from '../wasm/convert/manifest.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MODELS = path.join(ROOT, 'models');
export { MANIFEST };

/** Bundle folders under models/ (those with a config.json), sorted. */
export function shippedBundles() {
  return readdirSync(MODELS)
    .filter((d) => existsSync(path.join(MODELS, d, 'config.json')))
    .sort()
    .map((d) => path.join(MODELS, d));
}

/** The files the loader fetches from `dir`, config.json first. */
export function bundleFiles(dir) {
  const configPath = path.join(dir, 'config.json');
  let config;
  try {
    config = JSON.parse(readFileSync(configPath, 'utf8'));
  } catch (err) {
    throw new Error(`${configPath}: ${err.message}`);
  }
  return manifestFileNames(config);
}

function describe(file) {
  const bytes = readFileSync(file);
  return { sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length };
}

/** The manifest object for the bundle in `dir`. */
export function makeManifest(dir) {
  const files = {};
  for (const f of bundleFiles(dir)) {
    const p = path.join(dir, f);
    if (!existsSync(p)) throw new Error(`${path.basename(dir)}: ${f} is named by config.json but missing`);
    files[f] = describe(p);
  }
  return manifestDoc(files);
}

export function writeManifest(dir) {
  const manifest = makeManifest(dir);
  writeFileSync(path.join(dir, MANIFEST), manifestText(manifest));
  return manifest;
}

/** Problems of the manifest in `dir` (an empty array when it matches every file). */
export function checkManifest(dir) {
  const name = path.basename(dir);
  const where = `${name}/${MANIFEST}`;
  const manifestPath = path.join(dir, MANIFEST);
  if (!existsSync(manifestPath)) return [`${where} is missing (run npm run digests)`];
  let manifest;
  try {
    manifest = parseManifest(readFileSync(manifestPath), name);
  } catch (err) {
    return [err.message];
  }
  const problems = [];
  const wanted = bundleFiles(dir);
  for (const f of wanted) {
    const entry = manifest.files[f];
    if (!entry) {
      problems.push(`${name}/${f} is fetched by the loader but not listed in ${where}`);
      continue;
    }
    const p = path.join(dir, f);
    if (!existsSync(p)) {
      problems.push(`${name}/${f} is listed in ${where} but missing`);
      continue;
    }
    const got = describe(p);
    if (got.bytes !== entry.bytes) {
      problems.push(`${name}/${f} has ${got.bytes} bytes, ${where} says ${entry.bytes}`);
    } else if (got.sha256 !== entry.sha256) {
      problems.push(`${name}/${f} does not match ${where} (sha256 ${got.sha256}, expected ${entry.sha256})`);
    }
  }
  for (const f of Object.keys(manifest.files)) {
    if (!wanted.includes(f)) problems.push(`${where} lists ${f}, which the loader does not fetch`);
  }
  return problems;
}

function resolveBundle(arg) {
  const dir = arg.includes('/') || arg.includes('\\') || arg.startsWith('.') ? path.resolve(arg) : path.join(MODELS, arg);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`${arg}: no such bundle folder (${dir})`);
  if (!existsSync(path.join(dir, 'config.json'))) throw new Error(`${arg}: ${dir} has no config.json`);
  return dir;
}

function main(argv) {
  const check = argv.includes('--check');
  const unknown = argv.filter((a) => a.startsWith('-') && a !== '--check');
  if (unknown.length) {
    console.error(`bundle-digests: unknown option ${unknown[0]}; usage: node scripts/bundle-digests.mjs [--check] [BUNDLE ...]`);
    return 2;
  }
  let dirs;
  try {
    const args = argv.filter((a) => !a.startsWith('-'));
    dirs = args.length ? args.map(resolveBundle) : shippedBundles();
  } catch (err) {
    console.error(`bundle-digests: ${err.message}`);
    return 2;
  }
  let failed = 0;
  for (const dir of dirs) {
    const name = path.relative(ROOT, dir).startsWith('..') ? dir : path.relative(ROOT, dir);
    try {
      if (check) {
        const problems = checkManifest(dir);
        if (problems.length) {
          failed++;
          for (const p of problems) console.error(`MISMATCH ${p}`);
        } else {
          console.log(`ok ${name}/${MANIFEST}`);
        }
      } else {
        const m = writeManifest(dir);
        const total = Object.values(m.files).reduce((a, e) => a + e.bytes, 0);
        console.log(`wrote ${name}/${MANIFEST} (${Object.keys(m.files).length} files, ${total} bytes)`);
      }
    } catch (err) {
      failed++;
      console.error(`bundle-digests: ${err.message}`);
    }
  }
  if (check && failed) {
    console.error(`bundle-digests: ${failed} of ${dirs.length} bundles do not match their manifest; ` +
      'if the change is intended, run npm run digests and commit the manifests');
  }
  return failed ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
