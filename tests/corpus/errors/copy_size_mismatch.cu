// cutegen-corpus: smem stage allocated as (32,64) while the gmem k-tile is (64,64), so the partitioned src/dst of the tiled copy have different sizes
// expect-root: size<1>(src_v) == size<1>(dst_v)
#include <cute/tensor.hpp>
using namespace cute;

__global__ void stage_a_kernel(half_t const* A, half_t* out, int M, int K)
{
  using BlockM = _64;
  using BlockK = _64;
  auto g2s = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, half_t>{},
                             Layout<Shape<_16, _8>, Stride<_8, _1>>{},   // 128 threads
                             Layout<Shape<_1, _8>>{});                  // 8 halves = 128 bits

  __shared__ alignas(16) half_t smem[64 * 32];
  Tensor sA = make_tensor(make_smem_ptr(smem), make_layout(Shape<_32, BlockK>{}, LayoutRight{}));  // BUG

  Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(K, _1{}));
  Tensor gA = local_tile(mA, Shape<BlockM, BlockK>{}, make_coord(blockIdx.x, _));  // (BM,BK,k)

  auto thr = g2s.get_slice(threadIdx.x);
  Tensor tAgA = thr.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
  Tensor tAsA = thr.partition_D(sA);  // (CPY,CPY_M,CPY_K)

  float acc = 0.f;
  for (int k = 0; k < size<3>(tAgA); ++k) {
    copy(g2s, tAgA(_, _, _, k), tAsA);  // BUG-ALT
    __syncthreads();
    acc += float(sA(threadIdx.x % 32, threadIdx.x / 32));
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = half_t(acc);
}
