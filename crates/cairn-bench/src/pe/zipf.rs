//! PE's `--valueZipf` value sizes: HBase's `RandomDistribution.Zipf` (sizes `min … max - 1`,
//! size `k` drawn with weight `(k - min + 1)^-sigma`), with its table of cumulative weights
//! thinned geometrically (a point kept where the size has grown by more than `epsilon` since
//! the last one kept) and sizes between two kept points drawn uniformly.

use rand::Rng;

/// HBase's default `epsilon` for the thinning.
const EPSILON: f64 = 0.001;

/// A Zipf distribution over `min .. max`.
#[derive(Debug)]
pub(crate) struct Zipf {
    /// Sizes kept in the table, ascending.
    sizes: Vec<u64>,
    /// The cumulative probability at each kept size; the last is 1.
    cumulative: Vec<f64>,
}

impl Zipf {
    /// `min < max`, `sigma > 1` (HBase's constructor refuses anything else; PE passes 1,
    /// `--valueSize` and 1.2).
    pub(crate) fn new(min: u64, max: u64, sigma: f64) -> Zipf {
        assert!(min < max && sigma > 1.0, "Zipf({min}, {max}, {sigma})");
        let mut sizes = Vec::new();
        let mut cumulative = Vec::new();
        let mut sum = 0.0;
        let mut last: Option<u64> = None;
        for k in min..max {
            sum += ((k - min + 1) as f64).powf(-sigma);
            if last.is_none_or(|l| k as f64 * (1.0 - EPSILON) > l as f64) {
                sizes.push(k);
                cumulative.push(sum);
                last = Some(k);
            }
        }
        if last != Some(max - 1) {
            sizes.push(max - 1);
            cumulative.push(sum);
        }
        for c in &mut cumulative {
            *c /= sum;
        }
        *cumulative.last_mut().expect("at least one size") = 1.0;
        Zipf { sizes, cumulative }
    }

    /// One size.
    pub(crate) fn sample(&self, rng: &mut impl Rng) -> u64 {
        let d: f64 = rng.random();
        let idx = self
            .cumulative
            .partition_point(|&c| c <= d)
            .min(self.sizes.len() - 1);
        if idx == 0 {
            return self.sizes[0];
        }
        let (ceiling, lower) = (self.sizes[idx], self.sizes[idx - 1]);
        ceiling - rng.random_range(0..ceiling - lower)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn sizes_stay_in_range_and_small_ones_dominate_as_zipf_says() {
        let z = Zipf::new(1, 1000, 1.2);
        let mut rng = SmallRng::seed_from_u64(7);
        let n = 200_000;
        let mut counts = vec![0u64; 1000];
        for _ in 0..n {
            let k = z.sample(&mut rng);
            assert!((1..1000).contains(&k), "{k}");
            counts[k as usize] += 1;
        }
        // P(1) = 1 / H where H = sum of k^-1.2 over 1..999 (about 4.3): ~23% of draws.
        let h: f64 = (1..1000).map(|k| (k as f64).powf(-1.2)).sum();
        let p1 = counts[1] as f64 / n as f64;
        assert!((p1 - 1.0 / h).abs() < 0.01, "P(1) = {p1}, want {}", 1.0 / h);
        // P(2) / P(1) = 2^-1.2 (about 0.435).
        let ratio = counts[2] as f64 / counts[1] as f64;
        assert!((ratio - 2f64.powf(-1.2)).abs() < 0.03, "{ratio}");
        // The largest sizes are drawn too, rarely.
        assert!(counts[500..].iter().sum::<u64>() > 0);
    }

    #[test]
    fn wide_ranges_are_thinned_and_still_reach_their_ends() {
        let z = Zipf::new(1, 1_000_000, 1.2);
        // Geometric thinning: every size up to ~1,000, then one per 0.1% of growth: thousands
        // of points, not a million.
        assert!(z.sizes.len() < 10_000, "{}", z.sizes.len());
        assert_eq!(*z.sizes.last().unwrap(), 999_999);
        assert_eq!(*z.cumulative.last().unwrap(), 1.0);
        let mut rng = SmallRng::seed_from_u64(1);
        for _ in 0..10_000 {
            assert!((1..1_000_000).contains(&z.sample(&mut rng)));
        }
    }
}
