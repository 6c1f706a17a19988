// Host-side CuTe objects whose layouts `cute::print` gives: the layout probe must name the same ones.
// tests/layouts/test_exact.py probes this file and also builds and runs it; every `show` line prints
// "NAME: VALUE" with the same NAME as the declaration before it.
#include <cstdio>
#include <cute/tensor.hpp>

using namespace cute;

template <class T>
void show(const char* name, T const& x) {
  printf("%s: ", name);
  print(x);
  printf("\n");
}

template <class T>
void show_tensor(const char* name, T const& t) {
  printf("%s: ", name);
  print(t.layout());
  printf(" @ ");
  print(t.data());
  printf("\n");
}

// Every offset of a static layout, by linear index: what the SVG pictures draw.
template <class L>
void show_offsets(const char* name, L const& layout) {
  printf("%s.offsets:", name);
  for (int i = 0; i < int(size(layout)); ++i) printf(" %d", int(layout(i)));
  printf("\n");
}

using Sw333 = decltype(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_8, _64>, Stride<_64, _1>>{}));

template <int N>
void cases(float* gmem_f, half_t* smem_h, int n) {
  auto left = make_layout(make_shape(Int<N>{}, _8{}), LayoutLeft{});  show("left", left);  show_offsets("left", left);
  auto right = make_layout(make_shape(Int<N>{}, _8{}, _2{}), LayoutRight{});  show("right", right);
  auto right_dyn = make_layout(make_shape(n, Int<N>{}), LayoutRight{});  show("right_dyn", right_dyn);
  auto ldiv = logical_divide(make_layout(make_shape(_16{}, _8{})), make_tile(_4{}, Int<N>{}));  show("ldiv", ldiv);  show_offsets("ldiv", ldiv);
  auto zdiv = zipped_divide(make_layout(make_shape(_16{}, _8{})), make_tile(_4{}, Int<N>{}));  show("zdiv", zdiv);
  auto sw = composition(Swizzle<3, 3, 3>{}, Layout<Shape<_8, _64>, Stride<_64, _1>>{});  show("sw", sw);  show_offsets("sw", sw);
  auto sw_tile = tile_to_shape(Sw333{}, make_shape(_64{}, _64{}));  show("sw_tile", sw_tile);  show_offsets("sw_tile", sw_tile);

  Tensor mA = make_tensor(make_gmem_ptr(gmem_f), make_shape(Int<N * 32>{}, _64{}), make_stride(n, _1{}));  show_tensor("mA", mA);
  Tensor gA = local_tile(mA, make_shape(_32{}, _16{}), make_coord(1, _));  show_tensor("gA", gA);
  Tensor tA = local_partition(gA, Layout<Shape<_8, _4>>{}, 5);  show_tensor("tA", tA);
  Tensor cA = local_tile(make_identity_tensor(shape(mA)), make_shape(_32{}, _16{}), make_coord(1, _));  show_tensor("cA", cA);

  auto copy = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{}, Layout<Shape<_16, _8>, Stride<_8, _1>>{},
                              Layout<Shape<_1, _4>>{});  show("copy", typename decltype(copy)::TiledLayout_TV{});
  show_offsets("copy", typename decltype(copy)::TiledLayout_TV{});
  auto thr_copy = copy.get_slice(5);
  Tensor tSgA = thr_copy.partition_S(gA);  show_tensor("tSgA", tSgA);

  Tensor sA = make_tensor(make_smem_ptr(smem_h), sw_tile);  show_tensor("sA", sA);
  auto copy_h = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, half_t>{}, Layout<Shape<_16, _8>, Stride<_8, _1>>{},
                                Layout<Shape<_1, _8>>{});
  Tensor tDsA = copy_h.get_slice(3).partition_D(sA);  show_tensor("tDsA", tDsA);

  TiledMMA mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2, _2, _1>>{});
  Tensor mC = make_tensor(make_gmem_ptr(gmem_f), make_shape(_64{}, Int<N * 16>{}), make_stride(n, _1{}));
  Tensor tCgC = mma.get_slice(7).partition_C(mC);  show_tensor("tCgC", tCgC);
  Tensor tCrC = mma.get_slice(7).partition_fragment_C(mC);  show_tensor("tCrC", tCrC);
}

int main() {
  static float gmem[256 * 64];
  static half_t smem[64 * 64];
  printf("== N=4\n");
  cases<4>(gmem, smem, 100);
  printf("== N=8\n");
  cases<8>(gmem, smem, 200);
  return 0;
}
