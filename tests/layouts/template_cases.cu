// Function templates instantiated twice, host and device: the layout on a line inside a template is per
// instantiation the file makes, and equals what `cute::print` prints for it (tests/layouts/test_templates.py).
// `launch_tiles` has a default argument, as sgemm_sm80.cu's `gemm_tn` does.
#include <cstdio>
#include <cute/tensor.hpp>

using namespace cute;

template <class T>
void show(const char* name, T const& x) {
  printf("%s: ", name);
  print(x);
  printf("\n");
}

template <class SmemLayout>
__global__ void tile_kernel(float* out, SmemLayout) {
  auto smem = SmemLayout{};
  auto tiled = zipped_divide(smem, Shape<_2, _4>{});
  out[threadIdx.x] = float(tiled(threadIdx.x));
}

template <int BM, class Element>
void launch_tiles(Element* out, int n, cudaStream_t stream = 0) {
  auto smem = make_layout(make_shape(Int<BM>{}, _8{}), LayoutRight{});  show("smem", smem);
  auto tiled = zipped_divide(smem, Shape<_2, _4>{});  show("tiled", tiled);
  auto atom = Layout<Shape<_2, _4>, Stride<_4, _1>>{};  show("atom", atom);  // the same in both instantiations
  if (n < 0) tile_kernel<<<1, 32, 0, stream>>>(out, smem);  // never runs: the host program needs no GPU
}

int main() {
  printf("== BM=16, Element=float\n");
  launch_tiles<16>((float*)nullptr, 1);
  printf("== BM=32, Element=float\n");
  launch_tiles<32>((float*)nullptr, 1);
  return 0;
}
