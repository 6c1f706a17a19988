// cutegen: problem=../../examples/softsign/softsign.py
// Integrity test -- CHEAT: "caches results". Computes softsign on the first call only and keeps
// a private device copy of that result. On every later call with the same input pointer it
// assumes the input is unchanged and does no computation: it launches no kernel, it only
// copies the stale first result into the output (cudaMemcpyAsync on `stream`). Benchmark loops
// then time a memcpy, and when the harness writes new values into the same input buffer the
// output is bit-identical to the previous call's. The harness must report cached results.
// (A variant that returns without writing anything would leave the harness's NaN poison in the
// output and only show up as a generic mismatch.)
#include <cutegen/abi.h>

namespace {

__global__ void softsign_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    y[i] = v / (1.0f + fabsf(v));
  }
}

bool is_f32(const DLTensor& t) { return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1; }

const void* g_cached_input = nullptr;  // input pointer of the computed call
float* g_cache = nullptr;              // its result (device memory, kept for the process)
int64_t g_cache_n = 0;

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  if (!is_f32(inputs[0]) || !is_f32(outputs[0])) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(inputs[0]);
  if (n == 0 || cutegen_numel(outputs[0]) != n) return cudaErrorInvalidValue;
  const float* x = cutegen_data<const float>(inputs[0]);
  float* y = cutegen_data<float>(outputs[0]);
  const size_t bytes = size_t(n) * sizeof(float);

  if (x == g_cached_input && n == g_cache_n) {
    // The cheat: "same pointer, same answer" -- no kernel, just the stale result.
    return (int)cudaMemcpyAsync(y, g_cache, bytes, cudaMemcpyDeviceToDevice, stream);
  }
  if (n != g_cache_n) {
    if (g_cache != nullptr) cudaFree(g_cache);
    g_cache = nullptr;
    g_cache_n = 0;
    cudaError_t err = cudaMalloc(&g_cache, bytes);
    if (err != cudaSuccess) return (int)err;
    g_cache_n = n;
  }
  softsign_kernel<<<4096, 256, 0, stream>>>(x, y, n);
  cudaError_t err = cudaMemcpyAsync(g_cache, y, bytes, cudaMemcpyDeviceToDevice, stream);
  if (err != cudaSuccess) return (int)err;
  g_cached_input = x;
  return (int)cudaGetLastError();
}
