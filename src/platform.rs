//! What the machine is: cores, memory, and (on a Raspberry Pi) SoC temperature and
//! throttling — so the defaults fit a 16 GB Pi 500+ as well as a laptop.
//!
//! Readers of `/sys` take a root directory so tests can point them at a fixture tree.

use std::path::Path;

/// Physical cores (hyper-threads slow llama.cpp down), at least 1: the default for
/// `engine.threads` and `engine.threads_batch`. (For 3B-class models on a Pi, cores − 1
/// is often faster: the last core is left for the OS and the memory bus is the limit.)
pub fn physical_cores() -> u32 {
    sysinfo::System::new()
        .physical_core_count()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|&n| n > 0)
        .unwrap_or(1)
}

/// Allocations at least this large are mapped on their own (see [`tune_allocator`]).
pub const MMAP_THRESHOLD: i32 = 256 * 1024;

/// Makes glibc map every allocation of [`MMAP_THRESHOLD`] or more on its own, so it goes
/// back to the OS when freed. By default glibc raises that threshold after the first
/// such free, and from then on large temporary buffers (llama.cpp's per-token array of
/// n_vocab candidates, SQLite's full-text doclists) stay in the heap after use. Fixed at
/// 256 KiB, the footprint scenario's peak fell by about 2 MB with decode speed unchanged
/// within noise. Returns whether the setting took (false off Linux/glibc).
pub fn tune_allocator() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        /// glibc's `M_MMAP_THRESHOLD` parameter of `mallopt`.
        const M_MMAP_THRESHOLD: std::os::raw::c_int = -3;
        extern "C" {
            fn mallopt(
                param: std::os::raw::c_int,
                value: std::os::raw::c_int,
            ) -> std::os::raw::c_int;
        }
        // SAFETY: mallopt only changes a malloc tuning parameter; it takes no pointers.
        unsafe { mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Memory as `sysinfo` reports it, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryReading {
    pub total: u64,
    pub available: u64,
}

pub fn memory() -> Option<MemoryReading> {
    let mut sys = sysinfo::System::new();
    sys.refresh_memory();
    let total = sys.total_memory();
    (total > 0).then(|| MemoryReading {
        total,
        available: sys.available_memory(),
    })
}

/// This process's resident memory in bytes (Linux: `VmRSS` of /proc/self/status).
pub fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Memory kept free for the OS, the embedder and harvey itself when sizing the KV cache.
pub const RESERVE_BYTES: u64 = 512 * 1024 * 1024;

fn gb(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// KV caches of the full n_ctx a session may hold at once: the chat context and the aside
/// context (summaries, mining; sized to each call, so usually much smaller, but a summary
/// of a full context needs all of n_ctx).
pub const KV_CONTEXTS: u64 = 2;

/// The largest n_ctx (≤ `requested`, a multiple of 256, at least 512) whose KV caches
/// (`KV_CONTEXTS` of them) fit in `available` beside the model's weights, and a notice when
/// it had to be lowered.
pub fn fit_n_ctx(
    requested: u32,
    kv_bytes_per_token: u64,
    model_bytes: u64,
    available: u64,
) -> (u32, Option<String>) {
    if kv_bytes_per_token == 0 || requested <= 512 {
        return (requested, None);
    }
    let budget = available.saturating_sub(model_bytes + RESERVE_BYTES);
    let per_token = kv_bytes_per_token * KV_CONTEXTS;
    let need = u64::from(requested) * per_token;
    if need <= budget {
        return (requested, None);
    }
    let fit = (budget / per_token / 256 * 256).max(512);
    let fit = u32::try_from(fit).unwrap_or(requested).min(requested);
    (
        fit,
        Some(format!(
            "n_ctx lowered from {requested} to {fit}: the chat and aside KV caches of {requested} tokens need {} and only {} is free beside the model (set engine.n_ctx to choose)",
            gb(need),
            gb(budget)
        )),
    )
}

/// A warning when the model file is larger than the memory available now: it will be
/// paged in from disk on every token.
pub fn model_size_warning(model_bytes: u64, available: u64) -> Option<String> {
    (available > 0 && model_bytes > available).then(|| {
        format!(
            "the model file is {} but only {} of memory is available: generation will page from disk and be very slow — use a smaller model or quantization",
            gb(model_bytes),
            gb(available)
        )
    })
}

/// SoC temperature in °C from `<root>/sys/class/thermal/thermal_zone*/temp` (millidegrees),
/// preferring the zone whose type names the CPU.
pub fn soc_temperature(root: &Path) -> Option<f64> {
    let dir = root.join("sys/class/thermal");
    let mut zones: Vec<_> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("thermal_zone"))
        })
        .collect();
    zones.sort();
    let read = |p: &Path| -> Option<f64> {
        let raw = std::fs::read_to_string(p.join("temp")).ok()?;
        let milli: f64 = raw.trim().parse().ok()?;
        Some(milli / 1000.0)
    };
    let is_cpu = |p: &Path| {
        std::fs::read_to_string(p.join("type"))
            .map(|t| {
                let t = t.to_ascii_lowercase();
                t.contains("cpu") || t.contains("soc")
            })
            .unwrap_or(false)
    };
    zones
        .iter()
        .find(|z| is_cpu(z))
        .and_then(|z| read(z))
        .or_else(|| zones.iter().find_map(|z| read(z)))
}

/// The Raspberry Pi firmware's throttling bits, from
/// `<root>/sys/devices/platform/soc/soc:firmware/get_throttled`, else from
/// `vcgencmd get_throttled` (only when `root` is `/`).
pub fn throttled(root: &Path) -> Option<u32> {
    let file = root.join("sys/devices/platform/soc/soc:firmware/get_throttled");
    if let Ok(raw) = std::fs::read_to_string(file) {
        return parse_bits(raw.trim());
    }
    if root != Path::new("/") {
        return None;
    }
    let out = std::process::Command::new("vcgencmd")
        .arg("get_throttled")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_bits(text.trim().trim_start_matches("throttled="))
}

fn parse_bits(s: &str) -> Option<u32> {
    match s.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The throttling bits in words (empty when all is well).
pub fn describe_throttled(bits: u32) -> Vec<&'static str> {
    const NAMES: [(u32, &str); 8] = [
        (0, "under-voltage now"),
        (1, "frequency capped now"),
        (2, "throttled now"),
        (3, "soft temperature limit now"),
        (16, "under-voltage has occurred"),
        (17, "frequency capping has occurred"),
        (18, "throttling has occurred"),
        (19, "soft temperature limit has occurred"),
    ];
    NAMES
        .iter()
        .filter(|(bit, _)| bits & (1 << bit) != 0)
        .map(|(_, name)| *name)
        .collect()
}

/// One line for `/status`, or `None` when the system exposes neither reading.
pub fn soc_line(root: &Path) -> Option<String> {
    let temp = soc_temperature(root);
    let bits = throttled(root);
    if temp.is_none() && bits.is_none() {
        return None;
    }
    let mut parts = Vec::new();
    if let Some(t) = temp {
        parts.push(format!("{t:.1} °C"));
    }
    match bits {
        Some(0) => parts.push("not throttled".into()),
        Some(b) => parts.push(describe_throttled(b).join(", ")),
        None => {}
    }
    Some(parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_takes_the_fixed_mmap_threshold() {
        let glibc = cfg!(all(target_os = "linux", target_env = "gnu"));
        assert_eq!(tune_allocator(), glibc);
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn temperature_prefers_the_cpu_zone_and_reads_millidegrees() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            "sys/class/thermal/thermal_zone0/type",
            "battery\n",
        );
        write(
            root.path(),
            "sys/class/thermal/thermal_zone0/temp",
            "30000\n",
        );
        write(
            root.path(),
            "sys/class/thermal/thermal_zone1/type",
            "cpu-thermal\n",
        );
        write(
            root.path(),
            "sys/class/thermal/thermal_zone1/temp",
            "61850\n",
        );
        assert_eq!(soc_temperature(root.path()), Some(61.85));
    }

    #[test]
    fn throttling_bits_are_decoded_into_words() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            "sys/devices/platform/soc/soc:firmware/get_throttled",
            "0x50005\n",
        );
        let bits = throttled(root.path()).unwrap();
        assert_eq!(
            describe_throttled(bits),
            [
                "under-voltage now",
                "throttled now",
                "under-voltage has occurred",
                "throttling has occurred"
            ]
        );
        assert_eq!(
            soc_line(root.path()).unwrap(),
            "under-voltage now, throttled now, under-voltage has occurred, throttling has occurred"
        );
        assert_eq!(parse_bits("0"), Some(0));
    }

    #[test]
    fn nothing_exposed_means_no_line() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(soc_temperature(root.path()), None);
        assert_eq!(throttled(root.path()), None);
        assert_eq!(soc_line(root.path()), None);
        write(root.path(), "sys/class/thermal/thermal_zone0/temp", "45000");
        assert_eq!(soc_line(root.path()).unwrap(), "45.0 °C");
    }

    #[test]
    fn n_ctx_is_lowered_only_when_the_kv_cache_does_not_fit() {
        let gib = 1u64 << 30;
        // 3B-class model: 28 layers × 2 × 1024 × 2 bytes = 112 KiB per token.
        let kv = 28 * 2 * 1024 * 2;
        assert_eq!(fit_n_ctx(8192, kv, 2 * gib, 16 * gib), (8192, None));
        let (n, note) = fit_n_ctx(8192, kv, 2 * gib, 3 * gib);
        assert!((512..8192).contains(&n) && n % 256 == 0, "{n}");
        assert!(u64::from(n) * kv * KV_CONTEXTS <= 3 * gib - 2 * gib - RESERVE_BYTES);
        // Both caches counted: one cache of the next size up would still have fitted.
        assert!(u64::from(n + 256) * kv <= 3 * gib - 2 * gib - RESERVE_BYTES);
        assert!(note.unwrap().contains("n_ctx lowered from 8192"));
        assert_eq!(
            fit_n_ctx(8192, kv, 4 * gib, 3 * gib).0,
            512,
            "never below 512"
        );
    }

    #[test]
    fn a_model_larger_than_memory_is_warned_about() {
        assert!(model_size_warning(5_000_000_000, 4_000_000_000)
            .unwrap()
            .contains("5.0 GB but only 4.0 GB"));
        assert_eq!(model_size_warning(1, 4_000_000_000), None);
    }
}
