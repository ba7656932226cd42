//! Bounded retries with exponential backoff, full jitter, and respect for Retry-After.

use std::time::Duration;

/// How often and how long to wait between attempts.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Base delay (doubled per retry).
    pub base: Duration,
    /// Cap on any single wait, Retry-After included.
    pub max: Duration,
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1-based): the server's Retry-After when given,
    /// else a uniformly jittered delay in [½·d, d] with d = base·2^(retry−1); never above
    /// `max`.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>, jitter: f64) -> Duration {
        if let Some(ra) = retry_after {
            return ra.min(self.max);
        }
        let exp = self.base.saturating_mul(
            1u32.checked_shl(retry.saturating_sub(1))
                .unwrap_or(u32::MAX),
        );
        let d = exp.min(self.max);
        d.mul_f64(0.5 + 0.5 * jitter.clamp(0.0, 1.0))
    }
}

/// Parse a Retry-After header value given in seconds (HTTP dates are treated as absent).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_are_jittered_and_capped() {
        let p = RetryPolicy {
            max_retries: 5,
            base: Duration::from_millis(100),
            max: Duration::from_millis(1000),
        };
        assert_eq!(p.delay(1, None, 1.0), Duration::from_millis(100));
        assert_eq!(p.delay(1, None, 0.0), Duration::from_millis(50));
        assert_eq!(p.delay(3, None, 1.0), Duration::from_millis(400));
        assert_eq!(p.delay(10, None, 1.0), Duration::from_millis(1000));
        assert_eq!(p.delay(40, None, 1.0), Duration::from_millis(1000));
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(7)), 0.3),
            Duration::from_millis(1000)
        );
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
