// cutegen-corpus: TN hgemm with a 128x128x32 CTA tile on only 4 warps (128 fp32 accumulators per thread) plus __launch_bounds__(128, 4), which caps registers at 128/thread: ptxas spills the accumulators to local memory
// cutegen-arch: sm_90a
// expect-warning: bytes spill stores
#include <cute/tensor.hpp>
using namespace cute;

template <class TiledMma, class G2SCopy>
__global__ void __launch_bounds__(128, 4)  // BUG
hgemm_tn_kernel(half_t const* A, half_t const* B, float* C, int M, int N, int K,
                                TiledMma tiled_mma, G2SCopy g2s)
{
  auto cta_tiler = make_shape(_128{}, _128{}, _32{});    // (BM,BN,BK)
  auto cta_coord = make_coord(blockIdx.x, blockIdx.y, _);  // (m,n,k)

  Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(K, _1{}));  // (M,K)
  Tensor mB = make_tensor(make_gmem_ptr(B), make_shape(N, K), make_stride(K, _1{}));  // (N,K)
  Tensor mC = make_tensor(make_gmem_ptr(C), make_shape(M, N), make_stride(N, _1{}));  // (M,N)
  Tensor gA = local_tile(mA, cta_tiler, cta_coord, Step<_1,  X, _1>{});  // (BM,BK,k)
  Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step< X, _1, _1>{});  // (BN,BK,k)
  Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1,  X>{});  // (BM,BN)

  __shared__ alignas(16) half_t smemA[128 * 32];
  __shared__ alignas(16) half_t smemB[128 * 32];
  Tensor sA = make_tensor(make_smem_ptr(smemA), make_layout(Shape<_128, _32>{}, LayoutRight{}));  // (BM,BK)
  Tensor sB = make_tensor(make_smem_ptr(smemB), make_layout(Shape<_128, _32>{}, LayoutRight{}));  // (BN,BK)

  auto thr_g2s = g2s.get_slice(threadIdx.x);
  Tensor tAgA = thr_g2s.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
  Tensor tAsA = thr_g2s.partition_D(sA);  // (CPY,CPY_M,CPY_K)
  Tensor tBgB = thr_g2s.partition_S(gB);
  Tensor tBsB = thr_g2s.partition_D(sB);

  auto thr_mma = tiled_mma.get_slice(threadIdx.x);
  Tensor tCsA = thr_mma.partition_A(sA);  // (MMA,MMA_M,MMA_K)
  Tensor tCsB = thr_mma.partition_B(sB);  // (MMA,MMA_N,MMA_K)
  Tensor tCgC = thr_mma.partition_C(gC);  // (MMA,MMA_M,MMA_N)
  Tensor tCrA = thr_mma.make_fragment_A(tCsA);
  Tensor tCrB = thr_mma.make_fragment_B(tCsB);
  Tensor tCrC = thr_mma.make_fragment_C(tCgC);
  clear(tCrC);

  int k_tiles = size<3>(tAgA);
  for (int k = 0; k < k_tiles; ++k) {
    copy(g2s, tAgA(_, _, _, k), tAsA);
    copy(g2s, tBgB(_, _, _, k), tBsB);
    __syncthreads();
    copy(tCsA, tCrA);
    copy(tCsB, tCrB);
    gemm(tiled_mma, tCrA, tCrB, tCrC);
    __syncthreads();
  }
  copy(tCrC, tCgC);
}

void launch_hgemm_tn(half_t const* A, half_t const* B, float* C, int M, int N, int K, cudaStream_t stream)
{
  auto tiled_mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{},
                                  Layout<Shape<_2, _2, _1>>{},  // 4 warps
                                  Tile<_32, _32, _16>{});
  auto g2s = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, half_t>{},
                             Layout<Shape<_32, _4>, Stride<_4, _1>>{},  // 128 threads
                             Layout<Shape<_1, _8>>{});                  // 128-bit
  dim3 grid(M / 128, N / 128);
  hgemm_tn_kernel<<<grid, 128, 0, stream>>>(A, B, C, M, N, K, tiled_mma, g2s);
}
