// attnlens C++ API: the one header the WASM bindings (wasm/bindings*.cpp) and the CLI include. An umbrella: each
// part lives in src/api/<part>.h.
//
// Shape borrowed from whisper.cpp: plain value types, a params struct with defaults per stateful object, opaque
// handles for anything that keeps state between calls, and every failure reported as attnlens::Error with a
// message a person can act on (never an abort).
#pragma once

// Tensor, TensorMap, version(), simd_backend(), threads (set_threads / threads / threads_supported).
#include "api/tensor.h"

// OptionReader: the one reader of every task's JSON options.
#include "api/options.h"

// Each task's contract (options and result fields, declared once) and the reader of options as declared.
#include "api/contract.h"

// The attention catalogue through run_op() / list_ops(), and MultiHeadKvCache.
#include "api/ops.h"

// The BPE and SST-2 word tokenizers.
#include "api/text.h"

// Model bundles (inspect_bundle) and PGM/PPM image files (decode_pnm), as tools read them.
#include "api/files.h"

// Sentence sentiment (SST-2 models) with their attention maps.
#include "api/sentiment.h"

// Translation (de→en seq2seq bundles) with every attention map: api::Translator; which architectures it loads
// (api::register_hf_architectures() adds converted MarianMT bundles).
#include "api/translation.h"
#include "api/translation_models.h"

// Text generation with converted GPT-2 bundles: api::TextGenerator.
#include "api/hf_generation.h"

// Image captioning (MobileNetV2 + Show-Attend-Tell bundles), attention over the grid per word: api::Captioner.
#include "api/captioning.h"

// Sorting numbers with a pointer network, every pointer distribution out: api::PointerSorter.
#include "api/pointer.h"

// Visual question answering over shapes scenes (co-attention / attention-over-attention): api::VisualQA.
#include "api/vqa.h"

// Converted Hugging Face encoders: HfTextClassifier, HfFeatureExtractor, HfImageClassifier (hf-bert, hf-distilbert,
// hf-vit). Like TextGenerator and register_hf_architectures() above, only the CLI and the converted models' WASM
// module use them; the shipped modules do not link them.
#include "api/hf_encoders.h"
