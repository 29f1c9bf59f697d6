//! Source-text work the host tier does before compiling: finding CUDA features the CPU shim
//! cannot run (so they are `kernel.unsupported`, never a failed kernel) and rewriting
//! `extern __shared__` (dynamic shared memory) into pointers at the runner's per-block buffer.

/// `text` with comments, string and character literals replaced by spaces (newlines kept), so
/// scans see code only and byte positions stay the same.
pub fn blank_non_code(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let start = i;
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                let end = (i + 2).min(b.len());
                for o in &mut out[start..end] {
                    if *o != b'\n' {
                        *o = b' ';
                    }
                }
                i = end;
            }
            q @ (b'"' | b'\'') => {
                // Keep the quotes (so `extern "C"` still reads as extern + a literal).
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    if b[i] == b'\\' && i + 1 < b.len() {
                        out[i] = b' ';
                        i += 1;
                    }
                    out[i] = b' ';
                    i += 1;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Positions where the identifier `word` occurs as a whole token in `code`.
fn find_word(code: &[u8], word: &str) -> Vec<usize> {
    let w = word.as_bytes();
    let mut v = Vec::new();
    let mut i = 0;
    while i + w.len() <= code.len() {
        if &code[i..i + w.len()] == w
            && (i == 0 || !is_ident(code[i - 1]))
            && (i + w.len() == code.len() || !is_ident(code[i + w.len()]))
        {
            v.push(i);
            i += w.len();
        } else {
            i += 1;
        }
    }
    v
}

fn line_of(text: &[u8], pos: usize) -> usize {
    text[..pos].iter().filter(|c| **c == b'\n').count() + 1
}

/// The first CUDA feature in `source` the host shim cannot run, with its line, if any.
pub fn unsupported_feature(source: &str) -> Option<String> {
    let code = blank_non_code(source);
    let next_non_space = |mut p: usize| {
        while p < code.len() && code[p].is_ascii_whitespace() {
            p += 1;
        }
        p
    };
    for kw in ["asm", "__asm__", "__asm"] {
        for p in find_word(&code, kw) {
            let q = next_non_space(p + kw.len());
            let rest = &code[q..];
            if rest.starts_with(b"(")
                || rest.starts_with(b"volatile")
                || rest.starts_with(b"__volatile__")
                || rest.starts_with(b"goto")
            {
                return Some(format!(
                    "inline PTX assembly (`{kw}` at line {}) cannot run on the CPU",
                    line_of(&code, p)
                ));
            }
        }
    }
    let words: &[(&str, &str)] = &[
        ("tex1Dfetch", "texture fetches"),
        ("tex1D", "texture fetches"),
        ("tex2D", "texture fetches"),
        ("tex3D", "texture fetches"),
        ("tex2DLod", "texture fetches"),
        ("cudaTextureObject_t", "texture objects"),
        ("cudaSurfaceObject_t", "surface objects"),
        ("surf2Dread", "surface access"),
        ("surf2Dwrite", "surface access"),
        ("cooperative_groups", "cooperative groups"),
        ("__cluster_dims__", "thread-block clusters"),
        (
            "__pipeline_memcpy_async",
            "async copies (pipeline primitives)",
        ),
        ("__pipeline_commit", "async copies (pipeline primitives)"),
        (
            "__pipeline_wait_prior",
            "async copies (pipeline primitives)",
        ),
        ("cuda_pipeline", "async copies (pipeline primitives)"),
        ("wmma", "tensor-core fragments (nvcuda::wmma)"),
    ];
    for (w, what) in words {
        if let Some(p) = find_word(&code, w).first() {
            return Some(format!(
                "{what} (`{w}` at line {}) are not available in the host shim",
                line_of(&code, *p)
            ));
        }
    }
    if let Some(p) = code.windows(3).position(|w| w == b"<<<") {
        return Some(format!(
            "a kernel launch from device code (dynamic parallelism, `<<<` at line {})",
            line_of(&code, p)
        ));
    }
    None
}

/// Names g++ reports as undeclared (or without a matching overload) that are CUDA built-ins
/// the shim lacks; such a source is `kernel.unsupported`, not a broken kernel.
pub fn missing_builtin(diag: &str) -> Option<String> {
    for line in diag.lines() {
        if !line.contains("error") {
            continue;
        }
        let name = if let Some(r) = line.split("there are no arguments to '").nth(1) {
            r.split('\'').next()
        } else if line.contains("was not declared") || line.contains("is not a member of") {
            line.split('\'').nth(1)
        } else if let Some(r) = line.split("no matching function for call to '").nth(1) {
            r.split(['(', '\'']).next()
        } else {
            None
        };
        let Some(name) = name else { continue };
        let base = name.rsplit("::").next().unwrap_or(name);
        if is_cuda_builtin_name(base) {
            return Some(base.to_string());
        }
    }
    None
}

fn is_cuda_builtin_name(n: &str) -> bool {
    const PREFIXES: &[&str] = &["__", "cuda", "atomic", "tex", "surf", "make_", "warp"];
    const NAMES: &[&str] = &[
        "min",
        "max",
        "rsqrtf",
        "rsqrt",
        "saturatef",
        "fdividef",
        "norm3df",
        "rnorm3df",
        "sincospif",
        "erfcinvf",
        "normcdff",
        "normcdfinvf",
        "exp10f",
        "half",
        "half2",
        "nv_bfloat16",
        "nv_bfloat162",
        "float4",
        "float2",
        "int4",
        "uint4",
        "char4",
        "uchar4",
        "short2",
        "dim3",
        "uint3",
        "lrintf",
        "llrintf",
    ];
    PREFIXES.iter().any(|p| n.starts_with(p)) || NAMES.contains(&n)
}

#[derive(Clone, Copy, PartialEq)]
enum Brace {
    Scope,
    Func,
    Other,
}

/// Rewrites every `extern __shared__ T name[]...;` to use the runner's dynamic shared buffer:
/// inside a function (or a macro body) `T* const name = (T*)nt_dyn_shared_ptr;`, at file scope
/// `#define name ((T*)nt_dyn_shared_ptr)` (a file-scope pointer would be initialized once, but
/// the buffer moves between cases). Also folds `static __shared__` into `__shared__` (the
/// shim's `__shared__` is already `static`).
pub fn rewrite_source(source: &str) -> String {
    let code = blank_non_code(source);
    let src = source.as_bytes();
    // Brace kinds, preprocessor-line flags and presumed line numbers, computed in one walk.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut stack: Vec<Brace> = Vec::new();
    let mut header_start = 0usize;
    let mut i = 0usize;
    let mut in_directive = false;
    let mut line_start = true;
    let mut presumed_line: usize = 1; // line numbers as #line directives define them
    while i < code.len() {
        let c = code[i];
        if line_start {
            let mut j = i;
            while j < code.len() && (code[j] == b' ' || code[j] == b'\t') {
                j += 1;
            }
            // A directive continues over a backslash-newline.
            let continued = i >= 2 && code[i - 1] == b'\n' && code[i - 2] == b'\\';
            in_directive = if continued {
                in_directive
            } else {
                code.get(j) == Some(&b'#')
            };
            if in_directive && code[j..].starts_with(b"#line") {
                let rest = std::str::from_utf8(&src[j + 5..]).unwrap_or("");
                if let Some(n) = rest
                    .split_whitespace()
                    .next()
                    .and_then(|t| t.parse::<usize>().ok())
                {
                    presumed_line = n.saturating_sub(1);
                }
            }
            line_start = false;
        }
        if c == b'\n' {
            presumed_line += 1;
            line_start = true;
            i += 1;
            continue;
        }
        if !in_directive {
            match c {
                b'{' => {
                    let header = String::from_utf8_lossy(&code[header_start..i]).to_string();
                    let h = header.trim();
                    let kind = if stack.contains(&Brace::Func) {
                        Brace::Func
                    } else if h.starts_with("namespace")
                        || h.starts_with("extern") && !h.contains('(')
                    {
                        Brace::Scope
                    } else if h.contains(')') && !h.contains('=') {
                        Brace::Func
                    } else if h.starts_with("struct")
                        || h.starts_with("class")
                        || h.starts_with("union")
                        || h.contains(" struct ")
                    {
                        Brace::Scope
                    } else {
                        Brace::Other
                    };
                    stack.push(kind);
                    header_start = i + 1;
                }
                b'}' => {
                    stack.pop();
                    header_start = i + 1;
                }
                b';' => header_start = i + 1,
                _ => {}
            }
        }
        if c == b'e' && code[i..].starts_with(b"extern") && (i == 0 || !is_ident(code[i - 1])) {
            let mut j = i + 6;
            while j < code.len() && code[j].is_ascii_whitespace() {
                j += 1;
            }
            let mut k = j;
            // `extern __align__(16) __shared__` and attribute orders vary; accept __shared__
            // within the declaration before its `;`.
            let semi = code[i..].iter().position(|c| *c == b';').map(|p| i + p);
            if let Some(semi) = semi {
                let decl = String::from_utf8_lossy(&code[i..semi]).to_string();
                let plain = !decl.contains('{') && !decl.contains('"') && !decl.contains('}');
                if plain
                    && !find_word(decl.as_bytes(), "__shared__").is_empty()
                    && decl.contains('[')
                {
                    let in_func = in_directive || stack.contains(&Brace::Func);
                    if let Some(rep) = dyn_shared_decl(
                        &decl,
                        in_func,
                        presumed_line + code[i..semi].iter().filter(|c| **c == b'\n').count(),
                    ) {
                        edits.push((i, semi + 1, rep));
                        k = semi + 1;
                    }
                }
            }
            let _ = k;
        }
        i += 1;
    }
    let mut out = String::with_capacity(source.len() + 256);
    let mut last = 0;
    for (a, b, rep) in edits {
        out.push_str(&source[last..a]);
        out.push_str(&rep);
        last = b;
    }
    out.push_str(&source[last..]);
    // `static __shared__` / `__shared__ static`: the shim's __shared__ is static already.
    fold_static_shared(&out)
}

fn fold_static_shared(s: &str) -> String {
    let code = blank_non_code(s);
    let mut cut: Vec<(usize, usize)> = Vec::new();
    for p in find_word(&code, "__shared__") {
        // the word before
        let mut a = p;
        while a > 0 && code[a - 1].is_ascii_whitespace() {
            a -= 1;
        }
        if a >= 6 && &code[a - 6..a] == b"static" && (a == 6 || !is_ident(code[a - 7])) {
            cut.push((a - 6, a));
        }
        let mut b = p + "__shared__".len();
        while b < code.len() && code[b].is_ascii_whitespace() {
            b += 1;
        }
        if code[b..].starts_with(b"static") && !is_ident(*code.get(b + 6).unwrap_or(&b' ')) {
            cut.push((b, b + 6));
        }
    }
    if cut.is_empty() {
        return s.to_string();
    }
    cut.sort();
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for (a, b) in cut {
        if a < last {
            continue;
        }
        out.push_str(&s[last..a]);
        out.push_str(&" ".repeat(b - a));
        last = b;
    }
    out.push_str(&s[last..]);
    out
}

/// The replacement for one `extern __shared__` declaration (text up to, without, its `;`).
fn dyn_shared_decl(decl: &str, in_func: bool, line_after: usize) -> Option<String> {
    // Drop storage words and attributes; what remains is `TYPE NAME[]REST`.
    let mut t = decl.replace(['\n', '\\'], " ");
    for w in ["extern", "__shared__"] {
        t = remove_word(&t, w);
    }
    for w in ["__align__", "alignas", "__attribute__", "__declspec"] {
        while let Some(p) = t.find(w) {
            let open = t[p..].find('(').map(|o| p + o)?;
            let mut depth = 0;
            let mut end = open;
            for (k, ch) in t[open..].char_indices() {
                match ch {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = open + k + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            t.replace_range(p..end, " ");
        }
    }
    let lb = t.find('[')?;
    let head = t[..lb].trim_end();
    let name_start = head
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map(|p| p + 1)
        .unwrap_or(0);
    let name = &head[name_start..];
    let ty = head[..name_start].trim();
    if name.is_empty() || ty.is_empty() {
        return None;
    }
    let after = t[lb..].trim();
    let rest = after
        .strip_prefix('[')?
        .trim_start()
        .strip_prefix(']')?
        .trim();
    Some(if in_func {
        if rest.is_empty() {
            format!("{ty}* const {name} = ({ty}*)nt_dyn_shared_ptr;")
        } else {
            format!("{ty} (*const {name}){rest} = ({ty} (*){rest})nt_dyn_shared_ptr;")
        }
    } else if rest.is_empty() {
        format!("\n#define {name} (({ty}*)nt_dyn_shared_ptr)\n#line {line_after}\n")
    } else {
        format!("\n#define {name} (({ty} (*){rest})nt_dyn_shared_ptr)\n#line {line_after}\n")
    })
}

fn remove_word(s: &str, w: &str) -> String {
    let pos = find_word(s.as_bytes(), w);
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for p in pos {
        out.push_str(&s[last..p]);
        out.push(' ');
        last = p + w.len();
    }
    out.push_str(&s[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extern_shared_in_a_function_and_at_file_scope() {
        let s = "extern \"C\" __global__ void k(float* y) {\n  extern __shared__ __align__(16) float buf[];\n  buf[0] = 1;\n}\n";
        let r = rewrite_source(s);
        assert!(
            r.contains("float* const buf = (float*)nt_dyn_shared_ptr;"),
            "{r}"
        );
        assert_eq!(r.lines().count(), s.lines().count());
        let f = "// x\nextern __shared__ int sm[];\n__global__ void k() { sm[0] = 1; }\n";
        let r = rewrite_source(f);
        assert!(
            r.contains("#define sm ((int*)nt_dyn_shared_ptr)\n#line 2\n"),
            "{r}"
        );
        let m = "#define K(N) __global__ void N() { \\\n extern __shared__ char c[]; c[0] = 0; }\n";
        assert!(rewrite_source(m).contains("char* const c = (char*)nt_dyn_shared_ptr;"));
        assert!(rewrite_source("void f() { static __shared__ int a[4]; }")
            .contains("      __shared__ int a[4]"));
    }

    #[test]
    fn unsupported_features_are_found_in_code_only() {
        assert!(unsupported_feature("__device__ void f() { asm volatile(\"nop\"); }").is_some());
        assert!(unsupported_feature("// asm(\"x\")\n__device__ void f() {}").is_none());
        assert!(unsupported_feature("#include <cooperative_groups.h>\n").is_some());
        assert_eq!(
            missing_builtin("kernel-source:3:5: error: '__fns' was not declared in this scope"),
            Some("__fns".into())
        );
        assert_eq!(
            missing_builtin(
                "kernel-source:3:5: error: 'undefined_thing' was not declared in this scope"
            ),
            None
        );
    }

    /// Source text comes from users: every truncation of every shipped source, and seeded
    /// random text made of C-ish tokens, goes through the scanners and the rewrite without a
    /// panic (an earlier version sliced past the end of a truncated `extern __shared__`).
    #[test]
    fn hostile_and_truncated_sources_never_panic() {
        let mut texts: Vec<String> = Vec::new();
        for (_, t) in crate::cuda::sources::FILES {
            let cut: Vec<usize> = (0..t.len()).step_by(37).chain([t.len()]).collect();
            for c in cut {
                if t.is_char_boundary(c) {
                    texts.push(t[..c].to_string());
                }
            }
        }
        let tokens = [
            "extern",
            "__shared__",
            "float",
            "x",
            "[",
            "]",
            ";",
            "{",
            "}",
            "(",
            ")",
            "/*",
            "*/",
            "//",
            "\"",
            "'",
            "\\",
            "\n",
            "asm",
            "volatile",
            "__align__(16)",
            "#define",
            "#include",
            "<",
            ">",
            " ",
            "__syncthreads",
            "R\"(",
        ];
        let mut r = crate::rng::Rng::new(7);
        for _ in 0..3000 {
            let n = (r.next_u64() % 40) as usize;
            let t: String = (0..n)
                .map(|_| tokens[(r.next_u64() % tokens.len() as u64) as usize])
                .collect();
            texts.push(t);
        }
        for t in &texts {
            let _ = blank_non_code(t);
            let _ = unsupported_feature(t);
            let _ = missing_builtin(t);
            let _ = rewrite_source(t);
        }
    }
}
