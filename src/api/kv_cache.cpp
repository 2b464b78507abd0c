// api::MultiHeadKvCache (ops.h): the catalogue's multi-head KV cache (attention/multi_head.h) behind tensors, with
// owned copies of its weights.
#include <memory>
#include <utility>

#include "api/ops.h"
#include "api/ops_adapters.h"
#include "attention/multi_head.h"

namespace attnlens::api {

namespace att = attnlens::attention;
using ops_detail::Inputs;
using ops_detail::read_multi_head_weights;

MultiHeadKvCacheParams multi_head_kv_cache_params(const std::string& params_json) {
  OptionReader p("MultiHeadKvCache", params_json);
  MultiHeadKvCacheParams out;
  out.num_heads = p.index("num_heads", out.num_heads);
  out.capacity = p.index("capacity", out.capacity);
  p.finish();
  return out;
}

struct MultiHeadKvCache::Impl {
  TensorMap weights;  // owned copies: attention::MultiHeadKvCache only references its weights
  att::MultiHeadWeights w;
  std::unique_ptr<att::MultiHeadKvCache> cache;
};

MultiHeadKvCache::MultiHeadKvCache(const TensorMap& weights, const MultiHeadKvCacheParams& params)
    : impl_(std::make_unique<Impl>()) {
  impl_->weights = weights;
  const std::string op = "MultiHeadKvCache";
  Inputs in(op, impl_->weights);
  // E is read off out_proj_weight [E, E]; read_multi_head_weights checks every other shape against it.
  const Tensor& out_proj = in.rank("out_proj_weight", 2);
  require(params.capacity >= 1, op + ": capacity must be at least 1");
  // The cache is allocated up front: a huge capacity must be an Error here, not an allocation failure (an abort
  // natively, an out-of-memory trap in WASM) — found by tests/fuzz/fuzz_options.
  require(params.capacity <= kMaxKvCacheCapacity, op + ": capacity must be at most " +
                                                      std::to_string(kMaxKvCacheCapacity) + " positions, got " +
                                                      std::to_string(params.capacity));
  read_multi_head_weights(in, out_proj.dims[1], params.num_heads, impl_->w);
  require(params.capacity <= kMaxKvCacheFloats / impl_->w.embed_dim,  // no overflow on wasm32
          op + ": capacity " + std::to_string(params.capacity) + " × embed_dim " +
              std::to_string(impl_->w.embed_dim) + " is more than " + std::to_string(kMaxKvCacheFloats) +
              " cached floats per keys/values buffer; use a smaller capacity");
  in.finish();
  impl_->cache = std::make_unique<att::MultiHeadKvCache>(impl_->w, params.capacity);
}

MultiHeadKvCache::~MultiHeadKvCache() = default;

namespace {
// [n, E] or [E] → number of rows, checking E.
std::size_t rows_with_width(const std::string& what, const Tensor& t, std::size_t e) {
  t.validate("MultiHeadKvCache: " + what);
  require((t.rank() == 1 && t.dims[0] == e) || (t.rank() == 2 && t.dims[1] == e),
          "MultiHeadKvCache: " + what + " must be [n, " + std::to_string(e) + "] or [" + std::to_string(e) +
              "], got " + dims_to_string(t.dims));
  return t.rank() == 1 ? 1 : t.dims[0];
}
}  // namespace

void MultiHeadKvCache::append(const Tensor& key, const Tensor& value) {
  const std::size_t e = impl_->w.embed_dim;
  const std::size_t n = rows_with_width("key", key, e);
  require(rows_with_width("value", value, e) == n, "MultiHeadKvCache: key and value must have the same rows, got " +
                                                      dims_to_string(key.dims) + " and " + dims_to_string(value.dims));
  require(length() + n <= capacity(), "MultiHeadKvCache: appending " + std::to_string(n) + " positions to " +
                                          std::to_string(length()) + " exceeds the capacity " +
                                          std::to_string(capacity()) + "; create the cache with a larger capacity");
  impl_->cache->append(key.data.data(), value.data.data(), n);
}

TensorMap MultiHeadKvCache::attend(const Tensor& query, bool causal) {
  const std::size_t e = impl_->w.embed_dim;
  const std::size_t n_q = rows_with_width("query", query, e);
  require(length() >= 1, "MultiHeadKvCache: attend() before any append(): the cache is empty");
  require(!causal || n_q <= length(), "MultiHeadKvCache: " + std::to_string(n_q) +
                                          " causal queries need at least as many cached positions, have " +
                                          std::to_string(length()));
  Tensor out(query.rank() == 1 ? std::vector<std::size_t>{e} : std::vector<std::size_t>{n_q, e});
  Tensor weights({impl_->w.num_heads, n_q, length()});
  impl_->cache->attend(query.data.data(), n_q, out.data.data(), weights.data.data(), causal);
  return {{"out", std::move(out)}, {"weights", std::move(weights)}};
}

std::size_t MultiHeadKvCache::length() const { return impl_->cache->length(); }
std::size_t MultiHeadKvCache::capacity() const { return impl_->cache->capacity(); }
std::size_t MultiHeadKvCache::embed_dim() const { return impl_->w.embed_dim; }
std::size_t MultiHeadKvCache::num_heads() const { return impl_->w.num_heads; }
void MultiHeadKvCache::clear() { impl_->cache->clear(); }

}  // namespace attnlens::api
