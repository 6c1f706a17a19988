// cutegen-corpus: functor Silu with a host-only operator() passed to cute::transform inside a kernel; nvcc only warns (inside the CuTe header, no user-file frame) and silently DROPS the call, so the kernel becomes a plain copy
// expect-root: calling a __host__ function("Silu::operator ()(float) const") from a __host__ __device__ function
// expect-warning: calling a __host__ function("Silu::operator ()(float) const")
// cutegen-arch: sm_90a
// ptx-evidence: the kernel body is 4 x ld.global.f32 + 4 x st.global.f32 with no ex2/rcp: the Silu call was dropped (logs/host_functor_in_transform.ptx)
#include <cute/tensor.hpp>
using namespace cute;

struct Silu {  // BUG-ALT
  float operator()(float x) const { return x / (1.f + expf(-x)); }  // BUG
};

__global__ void silu_kernel(float const* in, float* out, int n)
{
  Tensor mIn  = make_tensor(make_gmem_ptr(in),  make_shape(n));
  Tensor mOut = make_tensor(make_gmem_ptr(out), make_shape(n));
  Tensor gIn  = local_tile(mIn,  Shape<_512>{}, make_coord(blockIdx.x));
  Tensor gOut = local_tile(mOut, Shape<_512>{}, make_coord(blockIdx.x));
  Tensor tIgIn  = local_partition(gIn,  Layout<_128>{}, threadIdx.x);  // (4)
  Tensor tOgOut = local_partition(gOut, Layout<_128>{}, threadIdx.x);  // (4)

  Tensor tIrIn = make_fragment_like(tIgIn);
  copy(tIgIn, tIrIn);
  transform(tIrIn, Silu{});  // BUG-ALT
  copy(tIrIn, tOgOut);
}
