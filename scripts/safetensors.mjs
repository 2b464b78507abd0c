// safetensors in JavaScript for the scripts and the package tests: the converter's reader and writer
// (wasm/convert/safetensors.js), which the package ships.
export { DTYPE_SIZES, floatValues, parseSafetensors, writeSafetensors } from '../wasm/convert/safetensors.js';
