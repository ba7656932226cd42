//! The two searches over mappings and translations, one per [`Goal`](super::Goal):
//! [`Goal::Fit`](super::Goal::Fit) visits the most promising candidates first and stops at
//! the first fit; [`Goal::SmallestRms`](super::Goal::SmallestRms) keeps the reference's
//! order, capped by one promising candidate scored first.

use super::mapping_bound::Differences;
use super::{
    by_promise, rms, Match, Prepared, Search, Work, BOUNDARY, BOUND_MIN_ROWS_RMS, RMS_EXACT,
};
use crate::lattice_mapping::LatticeMapping;
use crate::matcher::orbits::{Orbit, Symmetries};
use crate::matcher::MatcherError;

#[cfg(test)]
thread_local! {
    /// How many smallest-RMS searches of this thread ran again without their cap: a bound
    /// that wrongly dismissed the best candidate would be hidden by that second search, so
    /// tests check that it did not run.
    pub(in crate::matcher) static UNCAPPED_AGAIN: std::cell::Cell<usize> =
        const { std::cell::Cell::new(0) };
}

impl Search<'_> {
    /// The first candidate found with its largest distance below stol, trying the most
    /// promising mappings and translations first. A candidate whose RMS provably exceeds
    /// stol cannot qualify (the largest distance is at least the RMS) and is not solved.
    pub(super) fn first_fit(
        &self,
        mappings: &[LatticeMapping],
        symmetries: &mut Symmetries,
        fitted: &mut Option<(usize, usize, Match)>,
        work: &mut Work,
    ) -> Result<Option<Match>, MatcherError> {
        // A mapping a point symmetry of struct1 away from one already searched gives the same
        // candidates (see `orbits`), so whether one of them fits is already known: unless a
        // candidate of the representative was ambiguous (another assignment almost as cheap,
        // which the other mapping's column order could have picked, or a largest distance at
        // stol to rounding). Then the mapping is searched too.
        let mut orbits = self.orbits(symmetries);
        let mut clean: Vec<bool> = Vec::new();
        for i in by_promise(mappings) {
            self.check_interrupt()?;
            let Some(mut p) = self.prepare(&mappings[i]) else {
                continue;
            };
            let mut representative = None;
            if let Some(o) = orbits.as_mut() {
                if let Ok(lll) = self.lll_of(&p.average) {
                    match o.classify(&mappings[i].scale, &p.average, &lll.mapping) {
                        Orbit::Of(k) if clean.get(k) == Some(&true) => continue,
                        Orbit::New(k) => {
                            clean.resize(k + 1, true);
                            representative = Some(k);
                            p.note_ties = true;
                        }
                        _ => {}
                    }
                    p.lll = Some(lll);
                }
            }
            if self.place_sites(&mut p).is_none() {
                continue;
            }
            for s1i in self.candidates_by_promise(&p) {
                if let Some(m) = self.score(&mut p, s1i, Some(self.opts.stol), work)? {
                    if m.val < self.opts.stol {
                        *fitted = Some((i, s1i, m.clone()));
                        return Ok(Some(m));
                    }
                    let boundary = (m.val - self.opts.stol).abs() <= BOUNDARY * self.opts.stol;
                    if m.ambiguous || boundary {
                        if let Some(k) = representative {
                            clean[k] = false;
                        }
                    }
                }
            }
        }
        Ok(None)
    }

    /// The smallest-RMS candidate in the reference's order (see the module notes).
    pub(super) fn smallest_rms(
        &self,
        mappings: &[LatticeMapping],
        known: Option<f64>,
        symmetries: &mut Symmetries,
        fitted: &mut Option<(usize, usize, Match)>,
        work: &mut Work,
    ) -> Result<Option<Match>, MatcherError> {
        let stol = self.opts.stol;
        // A cap from a candidate known to exist: the one given, or else the best of the most
        // promising mapping's shortest translations. Its mapping may be folded into an orbit
        // below, whose representative scores the same candidate only to within the orbit
        // tolerance (1e-9 relative), so the cap keeps a 1e-6 relative margin.
        const CAP_MARGIN: f64 = 1.0 + 1e-6;
        let mut cap = stol;
        if let Some(known) = known {
            cap = cap.min(known * CAP_MARGIN);
        } else if let Some(&i) = by_promise(mappings).first() {
            if let Some(mut p) = self
                .prepare(&mappings[i])
                .and_then(|mut p| self.place_sites(&mut p).map(|()| p))
            {
                for s1i in self.candidates_by_promise(&p).into_iter().take(3) {
                    if let Ok(Some(m)) = self.score(&mut p, s1i, Some(cap), work) {
                        cap = cap.min(m.val * CAP_MARGIN);
                    }
                }
            }
        }
        let best = self.smallest_below(mappings, Some(cap), work, symmetries, fitted)?;
        if cap < stol && best.as_ref().is_none_or(|b| b.val > cap.max(RMS_EXACT)) {
            // The capping candidate is not among those visited with its value (it may be one
            // that struct1's own translations thin out, whose equal-cost assignment breaks a
            // tie differently): the cap proved nothing, so search again without it.
            #[cfg(test)]
            UNCAPPED_AGAIN.with(|n| n.set(n.get() + 1));
            return self.smallest_below(mappings, Some(stol), work, symmetries, fitted);
        }
        Ok(best)
    }

    /// The smallest-RMS candidate in the reference's order, skipping candidates that provably
    /// exceed `cap` or the best so far; exact when some visited candidate reaches `cap`.
    /// Without a cap, no candidate is skipped.
    pub(super) fn smallest_below(
        &self,
        mappings: &[LatticeMapping],
        cap: Option<f64>,
        work: &mut Work,
        symmetries: &mut Symmetries,
        fitted: &mut Option<(usize, usize, Match)>,
    ) -> Result<Option<Match>, MatcherError> {
        let stol = self.opts.stol;
        // Looking for the smallest RMS, a mapping a point symmetry of struct1 away from an
        // earlier one gives the same tables (see `orbits`): try the first of each orbit.
        let mut orbits = self.orbits(symmetries);
        let mut best: Option<Match> = None;
        // Each mapping's orbit, and where the best so far was found (mapping, translation).
        let mut orbit_of: Vec<Option<usize>> = vec![None; mappings.len()];
        let mut best_at = (0, 0);
        // The best's mapping, as prepared for the search.
        let mut best_in: Option<Prepared> = None;
        // Struct1's site differences for the mapping bound, when it applies (struct1 the
        // moving structure, a cap to bound against, enough rows for bounds to pay).
        let differences = (cap.is_some() && self.s1_supercell && self.n2 >= BOUND_MIN_ROWS_RMS)
            .then(|| Differences::new(self));
        // What a candidate must provably exceed to be skipped: the cap, or the best so far
        // when smaller (never below the RMS at which the reference stops).
        let bar = |best: &Option<Match>| {
            cap.map(|cap| best.as_ref().map_or(cap, |b| b.val.min(cap)).max(RMS_EXACT))
        };
        for (mi, mapping) in mappings.iter().enumerate() {
            self.check_interrupt()?;
            let Some(mut p) = self.prepare_average(mapping) else {
                continue;
            };
            if let (Some(d), Some(rms)) = (&differences, bar(&best)) {
                let limit = self.sum_limit(&p, rms);
                let leads = (&mut work.reach.mapping_lead, work.reach.lead);
                if self.mapping_exceeds(&p, d, limit, leads) {
                    continue;
                }
            }
            if self.mapped_basis(&mut p).is_none() {
                continue;
            }
            if let Some(o) = orbits.as_mut() {
                // The orbit test also needs the LLL basis the distances are measured in.
                if let Ok(lll) = self.lll_of(&p.average) {
                    match o.classify(&mapping.scale, &p.average, &lll.mapping) {
                        Orbit::Of(k) => {
                            orbit_of[mi] = Some(k);
                            continue;
                        }
                        Orbit::New(k) => orbit_of[mi] = Some(k),
                        Orbit::Alone => {}
                    }
                    p.lll = Some(lll);
                }
            }
            if self.place_sites(&mut p).is_none() {
                continue;
            }
            for s1i in self.candidates(&p) {
                let limit = bar(&best);
                let reuse = matches!(fitted, Some((fm, fs, _)) if *fm == mi && *fs == s1i);
                let cached = if reuse { fitted.take() } else { None };
                let m = match cached {
                    // The fit's candidate: the same distances, valued by their RMS. (Scored
                    // here, it could only be skipped when above the best so far, where it
                    // does not replace it either.)
                    Some((_, _, m)) => Match {
                        val: rms(&m.dist),
                        ambiguous: false,
                        tied: false,
                        ..m
                    },
                    None => match self.score(&mut p, s1i, limit, work)? {
                        Some(m) => m,
                        None => continue,
                    },
                };
                if best.as_ref().is_none_or(|b| m.val < b.val) {
                    let exact = m.val < RMS_EXACT && m.val < stol;
                    best = Some(m);
                    best_at = (mi, s1i);
                    if exact {
                        return Ok(best);
                    }
                }
            }
            if best_at.0 == mi && best.is_some() {
                best_in = Some(p);
            }
        }
        let (best, best_in) = match (best, best_in) {
            (Some(b), Some(p)) if b.val < stol => (b, p),
            _ => return Ok(None),
        };
        if cap.is_some_and(|c| best.val > c.max(RMS_EXACT)) {
            // Above a cap that proved nothing: the caller searches again without it (see
            // `smallest_rms`), and that search settles the tie of its own best.
            return Ok(Some(best));
        }
        self.settle_orbit_tie(mappings, &orbit_of, (best, best_at, best_in), work)
            .map(Some)
    }
}
