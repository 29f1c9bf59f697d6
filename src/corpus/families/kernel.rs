//! The kernel family (spec/kernels.json, conformance/KERNELS.md): one `.kcase` bundle per
//! kernel case — inputs (reference-quantized blocks as in the codec family, `.ninfer` planes
//! via `planes::assemble` as in the pack family, f32 activations, sign vectors) and the f64
//! reference computed from them by the crate's decoders. Kernel runners (`check-kernel`) run
//! kernels over these cases; readers answer with the reference digest (kind `kernel`).

use crate::corpus::Case;
use crate::cuda::cases;

/// Every case of the `kernel` family, in a fixed order (the corpus is byte-identical across runs).
pub fn cases() -> crate::Result<Vec<Case>> {
    Ok(cases::all()
        .into_iter()
        .map(|k| {
            let d = k.dims;
            Case::new("kernel", k.name.clone(), "kernel", "kcase", k.to_bundle())
                .param("class", k.class.name())
                .param("format", k.format.name())
                .param("n", d.n)
                .param("k", d.k)
                .param("t", d.t)
                .param("n_ids", d.n_ids)
                .param("block", d.block)
                .param("n_blocks", d.n_blocks)
                .feature(format!("kernel_class:{}", k.class.name()))
                .spec(format!("spec/kernels.json classes[{}]", k.class.name()))
                .recipe(k.recipe.clone())
        })
        .collect())
}
