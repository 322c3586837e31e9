//! Run-time choice of the compiled version of a hot loop.
//!
//! Release binaries target baseline x86-64 (SSE2), which has no 64-bit vector multiply, so
//! the MinHash loop would run scalar. The same portable loop is also compiled for AVX2 and
//! AVX-512 with `#[target_feature]`, and [`SimdLevel::detect`] picks the best one the CPU
//! has. Every version computes the same integers, so signatures never depend on the CPU.

/// Instruction-set level a hot loop is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SimdLevel {
    /// Whatever the build targets (baseline SSE2 on x86-64).
    Portable,
    /// AVX2 (x86-64).
    Avx2,
    /// AVX-512 F, DQ, VL and BW (x86-64), which has a 64-bit vector multiply.
    Avx512,
}

impl SimdLevel {
    /// The best level this CPU supports.
    pub fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512bw")
            {
                return SimdLevel::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return SimdLevel::Avx2;
            }
        }
        SimdLevel::Portable
    }

    /// Every level this CPU supports, lowest first (for tests comparing them).
    pub fn available() -> Vec<SimdLevel> {
        let best = SimdLevel::detect();
        [SimdLevel::Portable, SimdLevel::Avx2, SimdLevel::Avx512]
            .into_iter()
            .filter(|l| *l <= best)
            .collect()
    }
}
