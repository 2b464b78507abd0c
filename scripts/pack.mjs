#!/usr/bin/env node
// `npm run pack`: the npm package as published — the files `npm pack` would take from this repository (package.json
// "files"), staged in out/package/, with every bundled model whose matrices int8 halves replaced by its int8 bundle
// (scripts/quantize.mjs: "weight_precision": "int8", its own manifest.json) and the shared ImageNet encoder without
// the classifier no JS pipeline reads (featuresOnly below), then packed from there. The float32
// bundles stay in the repository (and on the page); a user who wants them points env.modelBaseUrl at a copy.
//
//   node scripts/pack.mjs [--destination DIR] [--no-build] [--json]
// --no-build: use wasm/dist as it is (otherwise `node scripts/build.mjs wasm` runs first). Prints the tarball's path
// and size (--json: npm pack's JSON for it).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { quantizeBundle } from './quantize.mjs';
import { parseSafetensors, writeSafetensors } from './safetensors.mjs';
import { writeManifest } from './bundle-digests.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STAGE = path.join(ROOT, 'out', 'package');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
// Bundles shipped int8 in the package: their matrices (the translators', the captioner's decoder, the sentiment,
// VQA and sorting models') take most of their size. Quality of each, float32 against int8: README "int8 weights" and
// each MODEL_CARD.md.
export const INT8_IN_PACKAGE = ['de-en-general', 'sst2-selfattn', 'flickr8k-mobilenet',
  'flickr8k-mobilenet-encoder', 'shapes', 'shapes-vqa-coattn', 'shapes-vqa-aoa', 'pointer-sort'];
// Encoder bundles whose ImageNet classifier no JS pipeline reads (the shapes captioner and the VQA models take the
// grid only): the package keeps their convolutions and BatchNorm, not classifier.1.* or labels.txt.
export const FEATURES_ONLY_IN_PACKAGE = ['mobilenet-v2-imagenet'];

/** Drops the ImageNet classifier from the encoder bundle staged in `dir` (weights, config, labels.txt, manifest). */
export function featuresOnly(dir) {
  const config = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const { header, metadata, data } = parseSafetensors(new Uint8Array(readFileSync(path.join(dir, config.weights))));
  const entries = [];
  for (const [name, entry] of Object.entries(header)) {
    if (name.startsWith('classifier.')) continue;
    const [b, e] = entry.data_offsets;
    entries.push([name, entry.dtype, entry.shape, data.subarray(b, e)]);
  }
  writeFileSync(path.join(dir, config.weights), writeSafetensors(entries, metadata));
  delete config.classifier;
  config.task = 'image-features';
  writeFileSync(path.join(dir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  rmSync(path.join(dir, 'labels.txt'), { force: true });
  writeManifest(dir);
}

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 26, env: { ...process.env, npm_config_update_notifier: 'false' } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return r.stdout;
}

export function pack({ destination = ROOT, build = true } = {}) {
  if (build) run(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs'), 'wasm'], ROOT);
  const listing = run(NPM, ['pack', '--dry-run', '--json', '--ignore-scripts'], ROOT);
  const [{ files }] = JSON.parse(listing.slice(listing.indexOf('[')));
  rmSync(STAGE, { recursive: true, force: true });
  for (const f of files) {
    mkdirSync(path.dirname(path.join(STAGE, f.path)), { recursive: true });
    cpSync(path.join(ROOT, f.path), path.join(STAGE, f.path));
  }
  const quantized = [];
  for (const name of INT8_IN_PACKAGE) {
    const dir = path.join(STAGE, 'models', name);
    if (!existsSync(path.join(dir, 'config.json'))) continue; // not in this build's package
    const r = quantizeBundle(path.join(ROOT, 'models', name), dir);
    quantized.push({ name, ...r });
  }
  for (const name of FEATURES_ONLY_IN_PACKAGE) {
    const dir = path.join(STAGE, 'models', name);
    if (existsSync(path.join(dir, 'config.json'))) featuresOnly(dir);
  }
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  delete pkg.scripts; // the staged files are final: nothing to build at pack or install time
  delete pkg.devDependencies;
  writeFileSync(path.join(STAGE, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  mkdirSync(destination, { recursive: true });
  const out = run(NPM, ['pack', STAGE, '--json', '--pack-destination', destination], ROOT);
  const info = JSON.parse(out.slice(out.indexOf('[')))[0];
  const tarball = path.join(destination, info.filename);
  return { tarball, info, quantized, bytes: statSync(tarball).size };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const argv = process.argv.slice(2);
  const i = argv.indexOf('--destination');
  const destination = i >= 0 ? path.resolve(argv[i + 1]) : ROOT;
  const r = pack({ destination, build: !argv.includes('--no-build') });
  if (argv.includes('--json')) {
    console.log(JSON.stringify([r.info]));
  } else {
    for (const q of r.quantized) {
      console.log(`int8 ${q.name}: weights ${(q.bytesIn / 1e6).toFixed(1)} MB -> ${(q.bytesOut / 1e6).toFixed(1)} MB`);
    }
    console.log(`${path.relative(process.cwd(), r.tarball)}: ${(r.bytes / 1e6).toFixed(1)} MB packed, ` +
      `${(r.info.unpackedSize / 1e6).toFixed(1)} MB unpacked, ${r.info.entryCount} files`);
  }
}
