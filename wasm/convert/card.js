// The MODEL_CARD.md of a converted bundle: where it came from (the folder, each file's SHA-256), the architecture
// and sizes, what the converter dropped, and the licence the checkpoint states (README.md front matter or
// config.json "license").
import { describeSizes } from './architectures.js';

/** The licence a Hugging Face folder states, or null: README.md's YAML front matter "license:" or config.json's. */
export function findLicense(readmeText, hfConfig) {
  if (typeof hfConfig.license === 'string') return hfConfig.license;
  const m = /^---\r?\n([\s\S]*?)\r?\n---/.exec(readmeText ?? '');
  const line = m && /^license:\s*["']?([^"'\r\n]+?)["']?\s*$/m.exec(m[1]);
  return line ? line[1] : null;
}

/** MODEL_CARD.md's text. */
export function modelCard({ config, modelType, hp, className, params, dropped, sourceFiles, license }) {
  const rows = (pairs) => pairs.map(([a, b]) => `| ${a} | ${b} |`).join('\n');
  const files = Object.entries(sourceFiles).map(([f, e]) => [`\`${f}\``, `${e.bytes} bytes, sha256 \`${e.sha256}\``]);
  const drops = dropped.length ? dropped.map(([k, why]) => `- \`${k}\`: ${why}`).join('\n') : '- nothing';
  const precision = config.weight_precision === 'int8'
    ? 'int8 codes with a float32 scale per row for every 2-D weight of at least 1024 values (scripts/quantize.mjs\'s rule), the rest float32'
    : 'float32 (F16 and BF16 widened)';
  return `# ${config.name}

Converted from a Hugging Face checkpoint by \`attnlens convert\` (docs/DESIGN.md §5 "Converted bundles"). The weights
are the checkpoint's own, under Hugging Face's tensor names; nothing was trained or changed here.

| | |
|---|---|
| architecture | \`${config.architecture}\` (Hugging Face \`${modelType}\`, \`${className}\`) |
| task | \`${config.task}\` |
${rows(describeSizes(modelType, hp))}
| parameters | ${params} |
| weights | ${precision} |
${config.labels ? `| labels | ${config.labels.map((l) => `\`${l}\``).join(', ')} |\n` : ''}| licence | ${license ?? 'not stated in the checkpoint (config.json, README.md): ask its authors'} |

## Source

Folder \`${config.source.folder}\`; the files read:

${rows([['file', 'digest'], ['---', '---'], ...files])}

## Dropped from the checkpoint

${drops}
`;
}
