// softmax.cu -- y = softmax(x, dim=1) for a (rows, dim) fp32 tensor (KernelBench level 1 #23:
// 4096 rows x 393216 floats, i.e. 1.5 MB per row).
//
// Design. A 1.5 MB row does not fit one SM's shared memory, but it does fit a *cluster* of 8 CTAs
// (8 x 192 KB). So each row is owned by one thread-block cluster of 8 CTAs (one per SM); CTA r of
// the cluster owns the contiguous chunk r of the row (49152 floats = 192 KB here):
//   1. stage: the chunk is copied global -> shared with 16-byte cp.async (no registers, the whole
//      192 KB per SM in flight at once);
//   2. pass 1 (online max/sum): every thread folds its staged float4s into a running (max, sum)
//      pair (sum rescaled by exp(old_max - new_max) when the max grows); warp shuffles, then
//      warp 0, merge the pairs into one per CTA;
//   3. cluster reduction: the 8 per-CTA pairs are merged through distributed shared memory
//      (cluster.map_shared_rank) after a cluster barrier; every CTA merges them in the same
//      order, so all 8 get the bit-identical row (max, 1/sum);
//   4. pass 2 (write): y = exp(x - max) * (1/sum) from the staged copy, 128-bit stores.
// DRAM traffic is therefore the minimum (read x once, write y once: 12.9 GB here) instead of the
// 3 passes of a plain two-kernel / re-reading online softmax.
// The kernel is persistent: the grid is as many clusters as fit on the GPU at once
// (cudaOccupancyMaxActiveClusters, ~16 on an H200 at one 196 KB CTA per SM) and each cluster
// loops over rows. While writing row i, each thread immediately cp.asyncs row i+G's values into
// the shared-memory slots it has just consumed, so the next row's load overlaps this row's
// stores. Every shared-memory slot of the staged chunk is only ever touched by one thread (same
// index mapping in every pass), so no CTA barrier is needed between the passes; the only
// barriers are the per-row CTA reduction and the cluster barrier. The per-CTA (max, sum) slot
// read remotely is double-buffered by row parity, and the kernel ends with a cluster barrier so
// no CTA exits while a peer may still read its shared memory.
// Numerics: accurate expf everywhere (not __expf), fp32 accumulation; typical relative error vs
// PyTorch ~1e-6.
// Generality: any rows >= 1, dim >= 1. Chunks longer than 192 KB (dim > 393216) stage the
// first 192 KB and re-read the rest from global memory in pass 2. dim % 4 != 0, pointers not
// 16-byte aligned, or no cluster fitting on the device -> a simple fallback: one CTA per row,
// scalar online (max, sum) pass, then a write pass (reads x twice, still correct).
#include <cutegen/abi.h>

#include <cooperative_groups.h>
#include <cute/tensor.hpp>

// A named namespace (not an anonymous one): nvcc's host stub cannot disambiguate an anonymous
// namespace from CuTe's own when `using namespace cute` is in effect.
namespace softmax_impl {

using namespace cute;
namespace cg = cooperative_groups;

constexpr int kClusterSize = 8;        // CTAs per row (portable maximum cluster size)
constexpr int kThreads = 1024;         // one CTA per SM (the staged chunk takes 192 KB)
constexpr int kWarps = kThreads / 32;
constexpr int kBatch = 6;              // float4s per thread loaded before use (register MLP)
constexpr int kMaxStageVecs = 12288;   // 12288 float4 = 192 KB of staged row chunk per CTA
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

// 16-byte cp.async global -> shared. Own wrappers (not CuTe's) because these carry a "memory"
// clobber: the kernel reads its staged slots right after wait_all without a __syncthreads, so
// the compiler must not move shared-memory accesses across these.
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem_src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

__global__ void __cluster_dims__(kClusterSize, 1, 1) __launch_bounds__(kThreads, 1)
softmax_cluster_kernel(const float* __restrict__ x, float* __restrict__ y, int rows, int64_t dim,
                       int64_t chunk, int stage_vecs) {
  extern __shared__ float4 stage_raw[];   // (stage_vecs) float4: this CTA's staged row chunk
  __shared__ MaxSum warp_ms[kWarps];      // per-warp partials
  __shared__ MaxSum cta_ms[2];            // per-CTA partial, read by the whole cluster; by parity
  __shared__ MaxSum row_ms;               // merged row (max, 1/sum)

  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());  // which chunk of the row
  const int cluster_id = blockIdx.x / kClusterSize;
  const int num_clusters = gridDim.x / kClusterSize;
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;

  // This CTA's chunk [lo, hi) of every row; chunk is a multiple of 4 and so is dim.
  const int64_t lo = min(int64_t(rank) * chunk, dim);
  const int64_t hi = min(lo + chunk, dim);
  const int nvec = static_cast<int>((hi - lo) / 4);
  const int nstage = min(nvec, stage_vecs);

  // CuTe views: the staged chunk in shared memory and (per row) the chunk in global memory.
  Tensor sX = make_tensor(make_smem_ptr(stage_raw), make_shape(stage_vecs));  // (stage_vecs)
  auto row_x = [&](int64_t row) {
    return make_tensor(make_gmem_ptr(reinterpret_cast<const float4*>(x + row * dim + lo)),
                       make_shape(nvec));
  };
  auto row_y = [&](int64_t row) {
    return make_tensor(make_gmem_ptr(reinterpret_cast<float4*>(y + row * dim + lo)),
                       make_shape(nvec));
  };

  // Prologue: stage this cluster's first row.
  if (cluster_id < rows) {
    Tensor gX = row_x(cluster_id);
    for (int i = tid; i < nstage; i += kThreads) cp_async_16(&sX(i), &gX(i));
  }
  cp_async_commit();

  int parity = 0;
  for (int64_t row = cluster_id; row < rows; row += num_clusters, parity ^= 1) {
    Tensor gX = row_x(row);
    Tensor gY = row_y(row);

    // ---- pass 1: online (max, sum) over this thread's float4s -------------------------------
    cp_async_wait_all();  // this thread's staged slots for `row` have landed
    MaxSum st{-INFINITY, 0.0f};
    for (int base = tid; base < nvec; base += kBatch * kThreads) {
      float4 r[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int i = base + u * kThreads;
        r[u] = make_float4(0.f, 0.f, 0.f, 0.f);
        if (i < nvec) r[u] = i < stage_vecs ? sX(i) : gX(i);
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        if (base + u * kThreads < nvec) update(st, r[u]);
      }
    }

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
      if (lane == 0) row_ms = MaxSum{r.m, 1.0f / r.s};
    }
    __syncthreads();
    const float row_max = row_ms.m;
    const float inv_sum = row_ms.s;

    // ---- pass 2: y = exp(x - max) / sum; refill the consumed slots with the next row --------
    const int64_t next = row + num_clusters;
    const bool has_next = next < rows;
    const float4* x_next =
        reinterpret_cast<const float4*>(x + (has_next ? next : row) * dim + lo);
    for (int base = tid; base < nvec; base += kBatch * kThreads) {
      float4 r[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int i = base + u * kThreads;
        r[u] = make_float4(0.f, 0.f, 0.f, 0.f);
        if (i < nvec) r[u] = i < stage_vecs ? sX(i) : gX(i);
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int i = base + u * kThreads;
        if (i < nvec) {
          float4 o;
          o.x = expf(r[u].x - row_max) * inv_sum;
          o.y = expf(r[u].y - row_max) * inv_sum;
          o.z = expf(r[u].z - row_max) * inv_sum;
          o.w = expf(r[u].w - row_max) * inv_sum;
          gY(i) = o;
          // The store above consumed sX(i) (register dependency), so the slot is free to refill.
          if (has_next && i < stage_vecs) cp_async_16(&sX(i), x_next + i);
        }
      }
    }
    cp_async_commit();
  }

  cp_async_wait_all();
  // Keep this CTA's shared memory alive until every peer has finished reading cta_ms.
  cluster.sync();
}

// Fallback: one CTA per row, scalar accesses, online (max, sum) pass then a write pass.
__global__ void __launch_bounds__(kThreads)
softmax_rowwise_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t dim) {
  __shared__ MaxSum warp_ms[kWarps];
  __shared__ MaxSum row_ms;
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  Tensor gX = make_tensor(make_gmem_ptr(x + int64_t(blockIdx.x) * dim), make_shape(dim));
  Tensor gY = make_tensor(make_gmem_ptr(y + int64_t(blockIdx.x) * dim), make_shape(dim));

  MaxSum st{-INFINITY, 0.0f};
  for (int64_t i = tid; i < dim; i += kThreads) update(st, gX(i));
  st = warp_allreduce(st);
  if (lane == 0) warp_ms[warp] = st;
  __syncthreads();
  if (warp == 0) {
    MaxSum w = warp_allreduce(warp_ms[lane]);
    if (lane == 0) row_ms = MaxSum{w.m, 1.0f / w.s};
  }
  __syncthreads();
  const float row_max = row_ms.m;
  const float inv_sum = row_ms.s;
  for (int64_t i = tid; i < dim; i += kThreads) gY(i) = expf(gX(i) - row_max) * inv_sum;
}

inline bool is_f32(const DLTensor& t) {
  return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1;
}

// Clusters of softmax_cluster_kernel that fit on the current device at once (0: not usable).
// Cached per (device, shared-memory size); also sets the kernel's dynamic shared-memory limit.
int max_active_clusters(int smem_bytes) {
  static int cached_dev = -1, cached_smem = -1, cached_clusters = 0;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  if (dev == cached_dev && smem_bytes == cached_smem) return cached_clusters;
  int clusters = 0;
  if (cudaFuncSetAttribute(softmax_cluster_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           smem_bytes) == cudaSuccess) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(kClusterSize * 64, 1, 1);
    cfg.blockDim = dim3(kThreads, 1, 1);
    cfg.dynamicSmemBytes = static_cast<size_t>(smem_bytes);
    if (cudaOccupancyMaxActiveClusters(&clusters, softmax_cluster_kernel, &cfg) != cudaSuccess) {
      clusters = 0;
    }
  }
  (void)cudaGetLastError();  // a failed query must not leak into the launch's error status
  cached_dev = dev;
  cached_smem = smem_bytes;
  cached_clusters = clusters;
  return clusters;
}

}  // namespace softmax_impl

using namespace softmax_impl;

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  const DLTensor& in = inputs[0];
  const DLTensor& out = outputs[0];
  if (!is_f32(in) || !is_f32(out) || in.ndim != 2) return cudaErrorInvalidValue;
  const int64_t rows = in.shape[0];
  const int64_t dim = in.shape[1];
  if (cutegen_numel(out) != rows * dim) return cudaErrorInvalidValue;
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
    const int clusters = max_active_clusters(smem_bytes);
    if (clusters > 0) {
      const int64_t grid_clusters = rows < clusters ? rows : clusters;
      softmax_cluster_kernel<<<unsigned(grid_clusters * kClusterSize), kThreads, smem_bytes,
                               stream>>>(x, y, static_cast<int>(rows), dim, chunk, stage_vecs);
      return (int)cudaGetLastError();
    }
  }
  softmax_rowwise_kernel<<<unsigned(rows), kThreads, 0, stream>>>(x, y, dim);
  return (int)cudaGetLastError();
}
