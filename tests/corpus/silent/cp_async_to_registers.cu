// cutegen-corpus: cp.async copy atom (SM80_CP_ASYNC_CACHEGLOBAL) used to load a gmem tile straight into a register fragment; cp.async can only write shared memory, but only the _ZFILL traits static_assert "Expected smem destination for cp.async." -- this compiles with no diagnostic: the fragment is forced to the stack and its generic address is cvta'd to .shared, so cp.async writes a garbage smem address and the registers stay stale
// cutegen-arch: sm_90a
// expect-warning: cp.async copies into a local (register) array
// ptx-evidence: cvta.to.shared.u64 applied to a __local_depot address, then cp.async.cg.shared.global; ptxas -v: "16 bytes stack frame" (see logs/cp_async_to_registers.ptxas.log)
#include <cute/tensor.hpp>
using namespace cute;

__global__ void scale_rows_kernel(half_t const* x, half_t* y, float const* scale, int m, int n)
{
  auto tiled_copy = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, half_t>{},  // BUG
                                    Layout<Shape<_32, _4>, Stride<_4, _1>>{},
                                    Layout<Shape<_1, _8>>{});
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(m, n), make_stride(n, _1{}));
  Tensor mY = make_tensor(make_gmem_ptr(y), make_shape(m, n), make_stride(n, _1{}));
  Tensor gX = local_tile(mX, Shape<_32, _32>{}, make_coord(blockIdx.x, blockIdx.y));
  Tensor gY = local_tile(mY, Shape<_32, _32>{}, make_coord(blockIdx.x, blockIdx.y));

  auto thr = tiled_copy.get_slice(threadIdx.x);
  Tensor tXgX = thr.partition_S(gX);
  Tensor tYgY = thr.partition_D(gY);
  Tensor tXrX = make_fragment_like(tXgX);

  copy(tiled_copy, tXgX, tXrX);  // BUG-ALT
  cp_async_fence();
  cp_async_wait<0>();

  float s = scale[blockIdx.x * 32 + threadIdx.x / 4];
  CUTE_UNROLL
  for (int i = 0; i < size(tXrX); ++i) {
    tXrX(i) = half_t(float(tXrX(i)) * s);
  }
  copy(tXrX, tYgY);
}
