// cutegen-corpus: clean: 64x64 fp16 tile transpose; gmem->smem with SM80_CP_ASYNC_CACHEGLOBAL<uint128_t> (cp.async.cg), fence/wait, then column reads from smem (M,N%64==0)
#include <cute/tensor.hpp>
using namespace cute;

__global__ void transpose_cp_async_kernel(half_t const* in, half_t* out, int m, int n)
{
  auto tiled_copy = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, half_t>{},
                                    Layout<Shape<_32, _8>, Stride<_8, _1>>{},  // 256 threads
                                    Layout<Shape<_1, _8>>{});                  // 8 halves = 16 B per cp.async
  Tensor mIn  = make_tensor(make_gmem_ptr(in),  make_shape(m, n), make_stride(n, _1{}));  // (M,N)
  Tensor mOut = make_tensor(make_gmem_ptr(out), make_shape(n, m), make_stride(m, _1{}));  // (N,M)
  Tensor gIn  = local_tile(mIn,  Shape<_64, _64>{}, make_coord(blockIdx.x, blockIdx.y));  // (64,64)
  Tensor gOut = local_tile(mOut, Shape<_64, _64>{}, make_coord(blockIdx.y, blockIdx.x));  // (64,64)

  __shared__ alignas(128) half_t smem[64 * 64];
  Tensor sT = make_tensor(make_smem_ptr(smem), make_layout(Shape<_64, _64>{}, LayoutRight{}));  // (64,64)

  auto thr = tiled_copy.get_slice(threadIdx.x);
  Tensor tSgIn = thr.partition_S(gIn);  // (CPY,CPY_M,CPY_N)
  Tensor tSsT  = thr.partition_D(sT);
  copy(tiled_copy, tSgIn, tSsT);
  cp_async_fence();
  cp_async_wait<0>();
  __syncthreads();

  // out(j, i) = in(i, j): each thread writes contiguous runs of the output row j
  Tensor sTt = make_tensor(sT.data(), make_layout(Shape<_64, _64>{}, LayoutLeft{}));  // transposed view
  Tensor tOsT  = local_partition(sTt,  Layout<Shape<_4, _64>, Stride<_64, _1>>{}, threadIdx.x);
  Tensor tOgOut = local_partition(gOut, Layout<Shape<_4, _64>, Stride<_64, _1>>{}, threadIdx.x);
  copy(tOsT, tOgOut);
}
