// Shadow of ggml-cuda's convert.cuh for the unchanged mainline fwht.cu (see common.cuh here):
// only ggml_cuda_cast<dst>(x), the value conversion fwht_cuda applies to each loaded element.
// Written from its meaning (convert x to dst_t by value); f32 -> f32 is the identity, which is
// the only instantiation the wrapper runs. No other conversion is provided on purpose: an
// instantiation that needs one fails to compile instead of converting silently.
#pragma once
#include "common.cuh"

template <typename a_t, typename b_t> struct ggml_shadow_same_type { static constexpr bool value = false; };
template <typename a_t> struct ggml_shadow_same_type<a_t, a_t> { static constexpr bool value = true; };

template <typename dst_t, typename src_t>
__host__ __device__ inline dst_t ggml_cuda_cast(src_t x) {
    static_assert(ggml_shadow_same_type<dst_t, float>::value && ggml_shadow_same_type<src_t, float>::value,
                  "shadow convert.cuh: only the f32 -> f32 cast is provided");
    return x;
}
