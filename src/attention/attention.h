// attnlens attention catalogue: every mechanism of docs/DESIGN.md §3 as free functions over row-major float
// buffers (pointer + sizes; the caller owns every output buffer). Each op returns or writes its attention
// weights, because drawing them is the point. Masks use 1 = attend, 0 = masked. Bad arguments throw
// attnlens::Error.
//
//   scores.h                     dot, scaled dot, general, additive (+ key projection), cosine, location
//   alignment.h                  global soft (padding / causal / full masks), local-m, local-p, hard argmax,
//                                hard sampling with the cross-platform SplitMix64 generator
//   context.h                    soft context, key-value attention (Daniluk 2017)
//   multi_head.h                 multi-head attention (torch.nn.MultiheadAttention semantics) + KV cache
//   self_attention.h             structured self-attention (Lin 2017) + penalty, relation-network attention
//   co_attention.h               parallel, alternating (Lu 2016) and max-pooled co-attention
//   attention_over_attention.h   Cui 2017
//   hierarchical.h               Yang 2016 attention pooling, word → sentence → document
//   pointer.h                    pointer networks (Vinyals 2015)
//   coverage.h                   coverage attention (Tu 2016), GNMT coverage penalty
//   position_memory.h            Tang 2016's four position-weighted memories + content attention
//   visual.h                     Show, Attend and Tell soft attention with gate + doubly stochastic penalty
//   rollout.h                    attention rollout and attention flow (Abnar & Zuidema 2020)
//   trace_record.h               record weights into an AttentionTrace
#pragma once

#include "attention/alignment.h"
#include "attention/attention_over_attention.h"
#include "attention/co_attention.h"
#include "attention/context.h"
#include "attention/coverage.h"
#include "attention/hierarchical.h"
#include "attention/multi_head.h"
#include "attention/pointer.h"
#include "attention/position_memory.h"
#include "attention/rollout.h"
#include "attention/scores.h"
#include "attention/self_attention.h"
#include "attention/trace_record.h"
#include "attention/visual.h"
