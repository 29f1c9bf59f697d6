// Block geometry of ggml types (elements per block, bytes per block), from ggml's type traits
// (spec/ggml_types.json in this repository). Shared glue for the metadata-only JS readers:
// PROTOCOL §4.2 defines data_sha256 over the tensor's nbytes, which these readers do not compute.
export const BLOCK = {
  0: [1, 4], 1: [1, 2], 2: [32, 18], 3: [32, 20], 6: [32, 22], 7: [32, 24], 8: [32, 34],
  9: [32, 36], 10: [256, 84], 11: [256, 110], 12: [256, 144], 13: [256, 176], 14: [256, 210],
  15: [256, 292], 16: [256, 66], 24: [1, 1], 25: [1, 2], 26: [1, 4], 27: [1, 8], 28: [1, 8],
  30: [1, 2], 34: [256, 54], 35: [256, 66], 39: [32, 17], 41: [128, 18],
};
