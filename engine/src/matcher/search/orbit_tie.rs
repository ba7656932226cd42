//! Settling a tie in the best candidate when the search visits one lattice mapping per symmetry
//! orbit (see [`MatcherOptions::fold_symmetric_mappings`](crate::matcher::MatcherOptions)):
//! symmetric copies of a candidate agree up to rounding, but where the best has an exact tie a
//! skipped copy can break it otherwise, so the best's orbit is searched in full.

use super::{Match, Prepared, Search, Work, RMS_EXACT, TIE_DELTA};
use crate::lattice_mapping::LatticeMapping;
use crate::matcher::MatcherError;

impl Search<'_> {
    /// The best candidate, found at `(mapping, translation)` with the mapping prepared as
    /// `p`, or the copy the reference would return instead. The search tries one mapping per
    /// orbit; the other mappings of an orbit hold copies of its candidates, equal up to
    /// rounding. Where the best candidate has a tie (an assignment as cheap, or two images as
    /// short), a copy can break it otherwise: the same RMS to the last bits but other
    /// distances, so another largest distance than the reference reports. Then the best's
    /// orbit is searched in full, near the best's RMS, and the first candidate in the
    /// reference's order with the smallest RMS is kept. Looking for a tie costs one more
    /// scoring of the best; an orbit is searched only when there is one, which is rare.
    pub(super) fn settle_orbit_tie(
        &self,
        mappings: &[LatticeMapping],
        orbit_of: &[Option<usize>],
        (best, (bm, bs), mut p): (Match, (usize, usize), Prepared),
        work: &mut Work,
    ) -> Result<Match, MatcherError> {
        let Some(orbit) = orbit_of.get(bm).copied().flatten() else {
            return Ok(best);
        };
        if !orbit_of
            .iter()
            .enumerate()
            .any(|(mi, o)| mi != bm && *o == Some(orbit))
        {
            return Ok(best);
        }
        // Score the best again, noting its ties.
        p.note_ties = true;
        if let Some(c) = p.columns.take() {
            p.columns = Some(c.noting_image_ties(TIE_DELTA));
        }
        let tied = match self.score(&mut p, bs, None, work)? {
            Some(m) if m.val.to_bits() == best.val.to_bits() => m.tied,
            _ => false,
        };
        if !tied {
            return Ok(best);
        }
        // Copies differ from the best by rounding: a relative 1e-9 keeps every copy.
        let cap = Some(best.val * (1.0 + 1e-9));
        let mut settled = best;
        for mi in (0..mappings.len()).filter(|&mi| mi != bm && orbit_of[mi] == Some(orbit)) {
            let Some(mut p) = self.prepare(&mappings[mi]).and_then(|mut p| {
                p.lll = self.lll_of(&p.average).ok();
                self.place_sites(&mut p).map(|()| p)
            }) else {
                continue;
            };
            for s1i in self.candidates(&p) {
                let Some(m) = self.score(&mut p, s1i, cap, work)? else {
                    continue;
                };
                // Copies come after their representative, in the reference's order, which
                // returns at once on a near-exact match and otherwise keeps the first of
                // equal values.
                if m.val < RMS_EXACT && m.val < self.opts.stol {
                    return Ok(m);
                }
                if m.val < settled.val {
                    settled = m;
                }
            }
        }
        Ok(settled)
    }
}
