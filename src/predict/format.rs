//! Text formats of report figures shared by the CLI tables and the desktop app, so that
//! both show a number the same way (`123,456 IOPS`, `1.234 ± 0.012 ms`).
//!
//! Not here: table layout (the CLI's `output`), plots (`gui::plot`).

use crate::sim::Estimate;

/// 1234567.8 → "1,234,568".
pub fn thousands(v: f64) -> String {
    if !v.is_finite() {
        return "∞".into();
    }
    let s = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if v < -0.5 {
        format!("-{out}")
    } else {
        out
    }
}

/// Seconds → "1.234 ms".
pub fn ms(secs: f64) -> String {
    format!("{:.3} ms", secs * 1e3)
}

/// "1.234 ± 0.012 ms" (the half-width of the estimate's confidence interval).
pub fn ms_ci(e: &Estimate) -> String {
    match e.half_width {
        Some(h) => format!("{:.3} ± {:.3} ms", e.mean * 1e3, h * 1e3),
        None => ms(e.mean),
    }
}

/// "123,456 ± 789".
pub fn count_ci(e: &Estimate) -> String {
    match e.half_width {
        Some(h) => format!("{} ± {}", thousands(e.mean), thousands(h)),
        None => thousands(e.mean),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits_and_keeps_the_sign() {
        assert_eq!(thousands(1_234_567.8), "1,234,568");
        assert_eq!(thousands(999.4), "999");
        assert_eq!(thousands(-1234.0), "-1,234");
        assert_eq!(thousands(f64::INFINITY), "∞");
        assert_eq!(ms(0.0012345), "1.234 ms");
    }

    #[test]
    fn confidence_intervals_read_mean_plus_minus_half_width() {
        let e = Estimate {
            mean: 0.000_834_2,
            half_width: Some(0.000_004_1),
        };
        assert_eq!(ms_ci(&e), "0.834 ± 0.004 ms");
        let n = Estimate {
            mean: 1_668_634.4,
            half_width: Some(6_007.2),
        };
        assert_eq!(count_ci(&n), "1,668,634 ± 6,007");
        let one = Estimate {
            mean: 0.0012345,
            half_width: None,
        };
        assert_eq!(ms_ci(&one), "1.234 ms");
    }
}
