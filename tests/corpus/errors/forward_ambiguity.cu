// cutegen-corpus: `using namespace cute;` pulls in the cute::forward function templates, so &forward is an overload set containing templates and the pybind-style def("forward", &forward) cannot deduce F (nvcc 13 says "no instance ... <unknown-type>", not "ambiguous")
// expect-root: no instance of function template "def" matches the argument list
#include <cute/tensor.hpp>
using namespace cute;  // BUG-ALT

template <class F>
void def(const char* name, F fn) { (void)name; (void)fn; }  // stand-in for pybind11's m.def

__global__ void scale_kernel(float const* x, float* y, int n, float s)
{
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(n));
  Tensor mY = make_tensor(make_gmem_ptr(y), make_shape(n));
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    mY(i) = s * mX(i);
  }
}

void forward(float const* x, float* y, int n, float s, cudaStream_t stream)
{
  scale_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x, y, n, s);
}

void register_module()
{
  def("forward", &forward);  // BUG
}
