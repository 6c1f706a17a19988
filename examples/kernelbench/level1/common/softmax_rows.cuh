// softmax_rows.cuh -- softmax or log-softmax over the last dimension of a dense (rows, dim) fp32
// tensor, reading x from DRAM once: kb_softmax::forward<kLog>. Used by KernelBench level 1 #23
// (softmax) and #24 (log-softmax): 4096 rows x 393216 floats, i.e. 1.5 MB per row.
//
// Design (the cluster-per-row design of examples/softmax/softmax.cu, with its pass 1 moved under
// the previous row's DRAM traffic):
//  * A 1.5 MB row does not fit one SM's shared memory, but it fits a *cluster* of 8 CTAs (8 x 192
//    KB). Each row is owned by one cluster; CTA r of the cluster owns the contiguous chunk r of the
//    row, kept in its shared memory. Every shared-memory slot is only ever touched by one thread
//    (the same index mapping everywhere), so the passes need no CTA barrier between them.
//  * Persistent: the grid is as many clusters as fit at once (cudaOccupancyMaxActiveClusters, 16
//    on an H200 at one 192 KB CTA per SM), each looping over rows i, i + G, ...
//  * One fused loop per row: each thread loads its float4s of row i+G from global memory into
//    registers (a batch of 6 16-byte loads in flight), then writes row i's outputs from the
//    staged copy, folds the new values into a running online (max, sum of exp) pair and stores
//    them into the slots it has just consumed. So the (max, sum) pass of the next row costs no
//    extra time: DRAM streams loads and stores through the whole loop, and only the short per-row
//    reduction (warp shuffles, one CTA barrier, one cluster barrier) leaves it idle. (softmax.cu
//    staged with cp.async and ran the (max, sum) pass with DRAM idle: 71 % of the copy ceiling.)
//  * Row reduction: warp shuffles, then warp 0 merges the warps' pairs into one per CTA; the 8 per-
//    CTA pairs are merged through distributed shared memory (cluster.map_shared_rank) after a
//    cluster barrier, in the same order in every CTA, so all 8 hold the bit-identical (max, sum).
//    The per-CTA slot read remotely is double-buffered by row parity, and the kernel ends with a
//    cluster barrier so no CTA exits while a peer may still read its shared memory.
//  * Output: softmax y = exp(x - max) * (1 / sum); log-softmax y = (x - max) - log(sum), PyTorch's
//    formula. Accurate expf/logf everywhere (not __expf), fp32 accumulation.
// DRAM traffic is the minimum: x read once, y written once (12.9 GB for the KernelBench size).
// Generality: any rows >= 1, dim >= 1. Chunks longer than 192 KB (dim > 393216) stage the first
// 192 KB and re-read the rest from global memory for the output. dim % 4 != 0, pointers not
// 16-byte aligned, or no cluster fitting on the device -> a simple fallback: one CTA per row,
// scalar online (max, sum) pass, then an output pass (reads x twice, still correct).
// Requirements (else cudaErrorInvalidValue): one input and one output, both 2-D, fp32, dense
// (row-major compact), the same shape; rows and dim below 2^31.
#pragma once

#include <cutegen/abi.h>

#include <cooperative_groups.h>
#include <cute/tensor.hpp>

#include "f32_tensor.cuh"

// A named namespace (not an anonymous one): nvcc's host stub cannot disambiguate an anonymous
// namespace from CuTe's own when `using namespace cute` is in effect.
namespace kb_softmax {

using namespace cute;
namespace cg = cooperative_groups;

constexpr int kClusterSize = 8;       // CTAs per row (portable maximum cluster size)
constexpr int kThreads = 1024;        // one CTA per SM (the staged chunk takes 192 KB)
constexpr int kWarps = kThreads / 32;
constexpr int kBatch = 6;             // float4 global loads per thread in flight before use
constexpr int kMaxStageVecs = 12288;  // 12288 float4 = 192 KB of staged row chunk per CTA
static_assert(kWarps == 32, "the warp-0 reduction assumes one lane per warp");

struct MaxSum {
  float m;  // running max
  float s;  // sum of exp(x - m)
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, 0.0f};  // both empty
  return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

__device__ __forceinline__ MaxSum warp_allreduce(MaxSum v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    MaxSum o{__shfl_xor_sync(0xffffffffu, v.m, off), __shfl_xor_sync(0xffffffffu, v.s, off)};
    v = merge(v, o);
  }
  return v;
}

__device__ __forceinline__ void update(MaxSum& st, float4 v) {
  const float vm = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
  if (vm > st.m) {  // rescale the running sum to the new max (expf(-inf) = 0 for the first one)
    st.s *= expf(st.m - vm);
    st.m = vm;
  }
  st.s += (expf(v.x - st.m) + expf(v.y - st.m)) + (expf(v.z - st.m) + expf(v.w - st.m));
}

__device__ __forceinline__ void update(MaxSum& st, float x) {
  if (x > st.m) {
    st.s *= expf(st.m - x);
    st.m = x;
  }
  st.s += expf(x - st.m);
}

// The row's merged statistics in the form the output needs: (max, 1/sum) or (max, log(sum)).
template <bool kLog>
__device__ __forceinline__ MaxSum finish(MaxSum r) {
  return MaxSum{r.m, kLog ? logf(r.s) : 1.0f / r.s};
}

template <bool kLog>
__device__ __forceinline__ float output(float x, MaxSum row) {
  return kLog ? (x - row.m) - row.s : expf(x - row.m) * row.s;
}

template <bool kLog>
__device__ __forceinline__ float4 output(float4 v, MaxSum row) {
  return make_float4(output<kLog>(v.x, row), output<kLog>(v.y, row), output<kLog>(v.z, row),
                     output<kLog>(v.w, row));
}

// Folds this thread's float4s of row `row` (global, `nvec` of them) into `st`, staging the first
// `stage_vecs` in sX. With `prev` set it also writes the previous row's outputs from the slots
// before they are overwritten (same thread, same slot: program order is enough).
template <bool kLog, class SX, class GX, class GXPrev, class GYPrev>
__device__ __forceinline__ void stream_row(MaxSum& st, SX& sX, const GX& gX, bool load,
                                           const GXPrev& gXprev, GYPrev& gYprev, bool prev,
                                           MaxSum prev_row, int nvec, int stage_vecs) {
  for (int base = threadIdx.x; base < nvec; base += kBatch * kThreads) {
    float4 nx[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {  // all global loads of the batch first
      const int i = base + u * kThreads;
      nx[u] = make_float4(0.f, 0.f, 0.f, 0.f);
      if (load && i < nvec) nx[u] = gX(i);
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int i = base + u * kThreads;
      if (i >= nvec) continue;
      if (prev) gYprev(i) = output<kLog>(i < stage_vecs ? sX(i) : gXprev(i), prev_row);
      if (load) {
        update(st, nx[u]);
        if (i < stage_vecs) sX(i) = nx[u];
      }
    }
  }
}

template <bool kLog>
__global__ void __cluster_dims__(kClusterSize, 1, 1) __launch_bounds__(kThreads, 1)
softmax_cluster_kernel(const float* __restrict__ x, float* __restrict__ y, int rows, int64_t dim,
                       int64_t chunk, int stage_vecs) {
  extern __shared__ float4 stage_raw[];  // (stage_vecs) float4: this CTA's staged row chunk
  __shared__ MaxSum warp_ms[kWarps];     // per-warp partials
  __shared__ MaxSum cta_ms[2];           // per-CTA partial, read by the whole cluster; by parity
  __shared__ MaxSum row_ms;              // the row's finished statistics

  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());  // which chunk of the row
  const int cluster_id = blockIdx.x / kClusterSize;
  const int num_clusters = gridDim.x / kClusterSize;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;

  // This CTA's chunk [lo, hi) of every row; chunk is a multiple of 4 and so is dim.
  const int64_t lo = min(int64_t(rank) * chunk, dim);
  const int64_t hi = min(lo + chunk, dim);
  const int nvec = static_cast<int>((hi - lo) / 4);

  // CuTe views: the staged chunk in shared memory and (per row) the chunk in global memory.
  Tensor sX = make_tensor(make_smem_ptr(stage_raw), make_shape(stage_vecs));  // (stage_vecs)
  auto row_x = [&](int64_t row) {  // (nvec) float4
    return make_tensor(make_gmem_ptr(reinterpret_cast<const float4*>(x + row * dim + lo)),
                       make_shape(nvec));
  };
  auto row_y = [&](int64_t row) {  // (nvec) float4
    return make_tensor(make_gmem_ptr(reinterpret_cast<float4*>(y + row * dim + lo)),
                       make_shape(nvec));
  };

  // Prologue: stage this cluster's first row and fold it (the grid has at most `rows` clusters).
  MaxSum st{-INFINITY, 0.0f};
  {
    Tensor gX = row_x(cluster_id);
    Tensor gY = row_y(cluster_id);  // unused: there is no previous row to write
    stream_row<kLog>(st, sX, gX, true, gX, gY, false, st, nvec, stage_vecs);
  }

  int parity = 0;
  for (int64_t row = cluster_id; row < rows; row += num_clusters, parity ^= 1) {
    // ---- CTA reduction -> cta_ms[parity] ------------------------------------------------------
    st = warp_allreduce(st);
    if (lane == 0) warp_ms[warp] = st;
    __syncthreads();
    if (warp == 0) {
      MaxSum w = warp_allreduce(warp_ms[lane]);
      if (lane == 0) cta_ms[parity] = w;
    }

    // ---- cluster reduction through distributed shared memory -----------------------------
    cluster.sync();  // release/acquire: every CTA's cta_ms[parity] is visible cluster-wide
    if (warp == 0) {
      MaxSum r{-INFINITY, 0.0f};
      if (lane < kClusterSize) r = *cluster.map_shared_rank(&cta_ms[parity], lane);
      r = warp_allreduce(r);  // same merge order in every CTA -> identical (max, sum)
      if (lane == 0) row_ms = finish<kLog>(r);
    }
    __syncthreads();
    const MaxSum this_row = row_ms;

    // ---- this row's output, fused with loading and folding the next row ---------------------
    const int64_t next = row + num_clusters;
    const bool has_next = next < rows;
    Tensor gX = row_x(row);
    Tensor gY = row_y(row);
    Tensor gXnext = row_x(has_next ? next : row);
    st = MaxSum{-INFINITY, 0.0f};
    stream_row<kLog>(st, sX, gXnext, has_next, gX, gY, true, this_row, nvec, stage_vecs);
  }

  // Keep this CTA's shared memory alive until every peer has finished reading cta_ms.
  cluster.sync();
}

// Fallback: one CTA per row, scalar accesses, online (max, sum) pass then an output pass.
template <bool kLog>
__global__ void __launch_bounds__(kThreads)
softmax_rowwise_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t dim) {
  __shared__ MaxSum warp_ms[kWarps];
  __shared__ MaxSum row_ms;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  Tensor gX = make_tensor(make_gmem_ptr(x + int64_t(blockIdx.x) * dim), make_shape(dim));
  Tensor gY = make_tensor(make_gmem_ptr(y + int64_t(blockIdx.x) * dim), make_shape(dim));

  MaxSum st{-INFINITY, 0.0f};
  for (int64_t i = threadIdx.x; i < dim; i += kThreads) update(st, gX(i));
  st = warp_allreduce(st);
  if (lane == 0) warp_ms[warp] = st;
  __syncthreads();
  if (warp == 0) {
    MaxSum w = warp_allreduce(warp_ms[lane]);
    if (lane == 0) row_ms = finish<kLog>(w);
  }
  __syncthreads();
  const MaxSum row = row_ms;
  for (int64_t i = threadIdx.x; i < dim; i += kThreads) gY(i) = output<kLog>(gX(i), row);
}

// Clusters of softmax_cluster_kernel<kLog> that fit on the current device at once (0: not
// usable). Cached per (device, shared-memory size); also sets the kernel's dynamic smem limit.
template <bool kLog>
int max_active_clusters(int smem_bytes) {
  static int cached_dev = -1, cached_smem = -1, cached_clusters = 0;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  if (dev == cached_dev && smem_bytes == cached_smem) return cached_clusters;
  int clusters = 0;
  if (cudaFuncSetAttribute(softmax_cluster_kernel<kLog>,
                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                           smem_bytes) == cudaSuccess) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(kClusterSize * 64, 1, 1);
    cfg.blockDim = dim3(kThreads, 1, 1);
    cfg.dynamicSmemBytes = static_cast<size_t>(smem_bytes);
    if (cudaOccupancyMaxActiveClusters(&clusters, softmax_cluster_kernel<kLog>, &cfg) !=
        cudaSuccess) {
      clusters = 0;
    }
  }
  (void)cudaGetLastError();  // a failed query must not leak into the launch's error status
  cached_dev = dev;
  cached_smem = smem_bytes;
  cached_clusters = clusters;
  return clusters;
}

// The whole cutegen_forward of softmax (kLog = false) or log-softmax (kLog = true) over dim 1.
template <bool kLog>
int forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
            cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  const DLTensor& in = inputs[0];
  const DLTensor& out = outputs[0];
  if (!kb_tensor::is_dense_f32(in) || !kb_tensor::is_dense_f32(out)) return cudaErrorInvalidValue;
  if (in.ndim != 2 || out.ndim != 2) return cudaErrorInvalidValue;
  const int64_t rows = in.shape[0];
  const int64_t dim = in.shape[1];
  if (out.shape[0] != rows || out.shape[1] != dim) return cudaErrorInvalidValue;
  if (rows > 0x7fffffff || dim > 0x7fffffff) return cudaErrorInvalidValue;
  if (rows == 0 || dim == 0) return (int)cudaGetLastError();

  const float* x = cutegen_data<const float>(in);
  float* y = cutegen_data<float>(out);

  const bool vec_ok = dim % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                      reinterpret_cast<uintptr_t>(y) % 16 == 0;
  if (vec_ok) {
    const int64_t per_cta = (dim + kClusterSize - 1) / kClusterSize;
    const int64_t chunk = (per_cta + 3) / 4 * 4;  // floats, multiple of 4
    const int stage_vecs = static_cast<int>(chunk / 4 < kMaxStageVecs ? chunk / 4 : kMaxStageVecs);
    const int smem_bytes = stage_vecs * static_cast<int>(sizeof(float4));
    const int clusters = max_active_clusters<kLog>(smem_bytes);
    if (clusters > 0) {
      const int64_t grid_clusters = rows < clusters ? rows : clusters;
      softmax_cluster_kernel<kLog><<<unsigned(grid_clusters * kClusterSize), kThreads, smem_bytes,
                                     stream>>>(x, y, static_cast<int>(rows), dim, chunk,
                                               stage_vecs);
      return (int)cudaGetLastError();
    }
  }
  softmax_rowwise_kernel<kLog><<<unsigned(rows), kThreads, 0, stream>>>(x, y, dim);
  return (int)cudaGetLastError();
}

}  // namespace kb_softmax
