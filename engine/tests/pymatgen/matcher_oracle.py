"""Scaled, stratified reference cases for the StructureMatcher port (everyday and full runs).

Run with the pymatgen venv (scripts/pymatgen-venv.sh makes it):

    ~/.cache/atomworld/venv-pmg/bin/python engine/tests/pymatgen/matcher_oracle.py \
        --pairs 1000 --seed 20260517 --out OUT.json [--jobs 2]

It writes the same JSON layout as matcher_cases.py (which it reuses for the structure edits),
so engine/tests/matcher_vs_pymatgen.rs reads it through ATOMWORLD_MATCHER_CASES. The cases:

- "pool": every structure of data/structures/minerals.jsonl against a permuted, translated
  copy of itself;
- "upstream/...": for every upstream AtomWorld triple (../shared/data/atomworld/
  upstream-tasks.jsonl beside the clone), the target against the input and the target
  against a permuted, translated copy of itself;
- `--pairs` generated pairs. Pair i draws from its own generator seeded with (seed, i) and
  its kind is KINDS[i % len(KINDS)], so the first n pairs of a larger run are exactly the
  pairs of a smaller run with the same seed: the everyday set (1,000) is a fixed subset of
  the full set (10,000);
- "reprinted/6", "reprinted/5": every pool structure against a copy of itself re-printed
  with fewer decimals (last in the file, after the generated pairs);
- "corpus": every file of the real-world corpus (data/cif-corpus) that pymatgen reads into
  at most CORPUS_MAX_SITES sites, each holding one element, against itself (that element
  per site) written by CifWriter, re-parsed, permuted and translated (after the reprinted pairs). Files with
  mixed sites or dummy species are left out and counted (the matcher compares one element
  per site; issue 23).
- "mixed/...": sites shared by two elements (Sn0.5In0.5-style), under the AtomWorld options
  and the CIF-Gen probe's (primitive cells, supercells): pool structures whose sites of one
  element are made mixed, against a permuted, translated copy listing each site's species in
  the other order ("reordered"), the same with one atom moved ("displaced"), with the two
  occupancies swapped ("swapped": another composition), and with the mixed sites moved to
  other sites of that element ("moved": the same composition, other sites); and every corpus
  file with mixed or partly occupied sites (oxidation states dropped) against itself written
  by CifWriter, re-parsed, permuted and translated ("mixed/corpus").

The upstream file is optional unless ATOMWORLD_REQUIRE_SHARED=1 (CI), in which case a missing
file is an error.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import multiprocessing
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from pymatgen.core import Lattice, Structure
from pymatgen.core.structure_matcher import StructureMatcher
from pymatgen.core.periodic_table import DummySpecies
from pymatgen.io.cif import CifParser, CifWriter

sys.path.insert(0, str(Path(__file__).resolve().parent))
import matcher_cases as mc  # noqa: E402  (the shared structure edits)
from cif_oracle import corpus_texts  # noqa: E402  (the corpus, read as pymatgen reads files)

REPO = Path(__file__).resolve().parents[3]
UPSTREAM = REPO.parent / "shared" / "data" / "atomworld" / "upstream-tasks.jsonl"

# Generated pair kinds, cycled through in this order.
KINDS = [
    "identical",
    "displaced1_small",  # one atom, 0.01-0.3 Å
    "displaced1_large",  # one atom, 0.3-3 Å
    "displaced_few",  # two to four atoms, 0.01-3 Å
    "translated",
    "permuted",
    "rescaled",
    "strained",
    "supercell",  # supercell against unit cell (either order)
    "supercell_edit",  # supercell against a rebased, displaced supercell
    "composition",  # substituted, removed or added atom
    "coincident",  # two atoms on one spot
    "triclinic",
    "rebased",
    "polymorph",
]

SUPERCELLS = [[2, 1, 1], [1, 2, 1], [1, 1, 2], [2, 2, 1], [1, 2, 2], [2, 1, 2]]


def symbols(s: Structure) -> list[str]:
    return [x.specie.symbol for x in s]


def added(s: Structure, rng) -> Structure:
    species = symbols(s) + [mc.SUBSTITUTES[int(rng.integers(len(mc.SUBSTITUTES)))]]
    frac = np.vstack([s.frac_coords, rng.uniform(0, 1, size=(1, 3))])
    return Structure(s.lattice, species, frac)


def with_coincident(s: Structure, rng, offset_angstrom: float) -> Structure:
    """A copy of one site placed on (or within `offset_angstrom` of) itself."""
    i = int(rng.integers(len(s)))
    cart = s.cart_coords[i] + unit(rng) * offset_angstrom
    frac = np.vstack([s.frac_coords, s.lattice.get_fractional_coords(cart)[None, :]])
    return Structure(s.lattice, symbols(s) + [symbols(s)[i]], frac)


def unit(rng) -> np.ndarray:
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def supercell(s: Structure, scale) -> Structure:
    t = s.copy()
    t.make_supercell(scale)
    return Structure(Lattice(t.lattice.matrix.copy()), symbols(t), t.frac_coords.copy())


def generated_pair(i: int, seed: int, pool, polymorphs) -> tuple[str, str, Structure, Structure]:
    rng = np.random.default_rng([seed, i])
    kind = KINDS[i % len(KINDS)]

    def pick(max_sites: int = 64):
        while True:
            name, s = pool[int(rng.integers(len(pool)))]
            if len(s) <= max_sites:
                return name, s

    if kind == "identical":
        name, s = pick()
        return kind, name, s, s.copy()
    if kind == "displaced1_small":
        name, s = pick()
        return kind, name, s, mc.displaced(s, rng, 1, 0.01, 0.3)
    if kind == "displaced1_large":
        name, s = pick()
        return kind, name, s, mc.displaced(s, rng, 1, 0.3, 3.0)
    if kind == "displaced_few":
        name, s = pick()
        k = int(rng.integers(2, 5))
        return kind, name, s, mc.displaced(s, rng, k, 0.01, 3.0)
    if kind == "translated":
        name, s = pick()
        return kind, name, s, mc.translated(s, rng)
    if kind == "permuted":
        name, s = pick()
        t = mc.displaced(s, rng, int(rng.integers(0, 3)), 0.01, 0.5)
        return kind, name, s, mc.permuted(mc.translated(t, rng), rng)
    if kind == "rescaled":
        name, s = pick()
        return kind, name, s, mc.rescaled(s, float(rng.uniform(0.8, 1.25)))
    if kind == "strained":
        name, s = pick()
        amount = float(rng.choice([0.02, 0.08, 0.2]))
        return kind, name, s, mc.strained(s, rng, amount)
    if kind == "supercell":
        name, s = pick(16)
        big = supercell(s, SUPERCELLS[int(rng.integers(len(SUPERCELLS)))])
        small = mc.displaced(s, rng, int(rng.integers(0, 2)), 0.01, 0.3)
        return (kind, name, big, small) if rng.random() < 0.5 else (kind, name, small, big)
    if kind == "supercell_edit":
        name, s = pick(16)
        big = supercell(s, SUPERCELLS[int(rng.integers(len(SUPERCELLS)))])
        m = mc.UNIMODULAR[int(rng.integers(len(mc.UNIMODULAR)))]
        t = mc.rebased(mc.displaced(big, rng, int(rng.integers(1, 3)), 0.01, 1.5), m)
        return kind, name, big, mc.permuted(t, rng)
    if kind == "composition":
        name, s = pick()
        op = int(rng.integers(3))
        if op == 0 and len(s) >= 2:
            return kind + "/substituted", name, s, mc.substituted(s, rng)
        if op == 1 and len(s) >= 2:
            return kind + "/removed", name, s, mc.removed(s, rng)
        return kind + "/added", name, s, added(s, rng)
    if kind == "coincident":
        name, s = pick(40)
        offset = float(rng.choice([0.0, 1e-5, 0.01]))
        dup = with_coincident(s, rng, offset)
        if rng.random() < 0.3:
            return kind + "/vs_plain", name, s, dup
        t = mc.permuted(mc.translated(mc.displaced(dup, rng, 1, 0.01, 0.5), rng), rng)
        return kind + "/both", name, dup, t
    if kind == "triclinic":
        name, s = pick(40)
        tri = mc.strained(s, rng, 0.05)
        m = mc.UNIMODULAR[int(rng.integers(len(mc.UNIMODULAR)))]
        t = mc.rebased(mc.displaced(tri, rng, int(rng.integers(1, 3)), 0.01, 0.8), m)
        return kind, name, tri, mc.permuted(t, rng)
    if kind == "rebased":
        name, s = pick(40)
        m = mc.UNIMODULAR[int(rng.integers(len(mc.UNIMODULAR)))]
        t = mc.rebased(mc.translated(mc.displaced(s, rng, 2, 0.01, 0.4), rng), m)
        return kind, name, s, mc.rescaled(t, float(rng.uniform(0.9, 1.1)))
    # polymorph: two different pool structures with one reduced formula (or, when the pool
    # has none, two different structures with the same element set).
    (na, a), (nb, b) = polymorphs[int(rng.integers(len(polymorphs)))]
    if rng.random() < 0.5:
        a, b, na, nb = b, a, nb, na
    return kind, f"{na} | {nb}", a, b


def reprinted_pairs(pool) -> list:
    """Every pool structure against itself with its coordinates re-printed to 6 and to 5
    decimals (appended last, so the generated pairs keep their places). To 6 decimals the
    sites stay within pymatgen's 1e-5 Å site tolerance and pymatgen matches the copy through
    struct1's memoised reduction; to 5 they mostly do not."""
    out = []
    for name, s in pool:
        for digits in (6, 5):
            frac = np.round(s.frac_coords, digits)
            out.append((f"reprinted/{digits}", name, s, Structure(s.lattice, symbols(s), frac)))
    return out


def polymorph_pairs(pool) -> list:
    by_formula: dict[str, list] = {}
    for name, s in pool:
        by_formula.setdefault(s.composition.reduced_formula, []).append((name, s))
    out = []
    for items in by_formula.values():
        for x in range(len(items)):
            for y in range(x + 1, len(items)):
                if len(items[x][1]) <= 48 and len(items[y][1]) <= 48:
                    out.append((items[x], items[y]))
    return out


def parse_cif(text: str) -> Structure:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = CifParser.from_str(text).parse_structures(primitive=False, check_occu=False)[0]
    return mc.element_only(s)


def upstream_pairs(seed: int) -> list:
    if not UPSTREAM.exists():
        if os.environ.get("ATOMWORLD_REQUIRE_SHARED") == "1":
            raise SystemExit(f"ATOMWORLD_REQUIRE_SHARED=1 but {UPSTREAM} is missing")
        print(f"notice: {UPSTREAM} not found; upstream pairs left out", file=sys.stderr)
        return []
    out = []
    with UPSTREAM.open() as fh:
        for k, line in enumerate(fh):
            rec = json.loads(line)
            name = f"{k}-{rec.get('action', '?')}"
            try:
                target = parse_cif(rec["target_cif"])
                inp = parse_cif(rec["input_cif"])
            except Exception as exc:  # noqa: BLE001 - reported, never silently dropped
                raise SystemExit(f"upstream triple {k}: pymatgen cannot parse it: {exc}")
            rng = np.random.default_rng([seed, 1_000_000 + k])
            out.append(("upstream/target_vs_input", name, target, inp))
            out.append(
                ("upstream/target_vs_copy", name, target, mc.permuted(mc.translated(target, rng), rng))
            )
    return out


# Larger corpus structures are left out of the matcher set (counted), to keep it quick.
CORPUS_MAX_SITES = 500


def one_element_per_site(s: Structure) -> Structure:
    """The structure with each site's one element (occupancy, oxidation state and labels
    dropped), as the matcher test builds it."""
    symbols = [site.species.elements[0].symbol for site in s]
    return Structure(Lattice(s.lattice.matrix.copy()), symbols, s.frac_coords.copy())


def corpus_pairs(seed: int) -> list:
    """Every corpus structure (one element per site, at most CORPUS_MAX_SITES sites), as
    element-only sites, against itself written by CifWriter, read back, translated and
    permuted."""
    out, skipped = [], {"rejected by pymatgen": 0, "mixed site or dummy species": 0,
                        f"more than {CORPUS_MAX_SITES} sites": 0}
    for k, (name, text) in enumerate(corpus_texts()):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                s = CifParser.from_str(text).parse_structures(primitive=False, check_occu=False)[0]
        except Exception:  # noqa: BLE001 - the CIF reader test compares the rejection
            skipped["rejected by pymatgen"] += 1
            continue
        if any(len(site.species) != 1 or isinstance(site.species.elements[0], DummySpecies)
               for site in s):
            skipped["mixed site or dummy species"] += 1
            continue
        if len(s) > CORPUS_MAX_SITES:
            skipped[f"more than {CORPUS_MAX_SITES} sites"] += 1
            continue
        plain = one_element_per_site(s)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            again = parse_cif(str(CifWriter(plain)))
        rng = np.random.default_rng([seed, 3_000_000 + k])
        out.append(("corpus", name, plain, mc.permuted(mc.translated(again, rng), rng)))
    print(f"corpus: {len(out)} matcher pairs; left out: {skipped}", file=sys.stderr)
    return out


# The option sets of the mixed-site cases (names and arguments as in matcher_cases.py).
MIXED_OPTION_SETS = ("atomworld", "cifgen")


def with_species(s: Structure, species, frac=None) -> Structure:
    return Structure(Lattice(s.lattice.matrix.copy()), species,
                     s.frac_coords.copy() if frac is None else frac)


def species_moved(s: Structure, rng) -> Structure:
    """Translated by a random shift and permuted, each site keeping its full species."""
    shift = rng.uniform(-1.5, 1.5, size=3)
    order = rng.permutation(len(s))
    return with_species(s, [s[i].species for i in order], (s.frac_coords + shift)[order])


def mixed_pairs(pool, seed: int) -> list:
    """Pool structures (at most 24 sites) with every site of their first site's element
    shared with another element; see the module docs for the four variants."""
    out = []
    small = [(name, s) for name, s in pool if len(s) <= 24]
    for k, (name, s) in enumerate(small[:36]):
        rng = np.random.default_rng([seed, 4_000_000 + k])
        host = s[0].specie.symbol
        guest = next(e for e in mc.SUBSTITUTES if e not in {x.specie.symbol for x in s})
        x = [0.5, 0.75, 0.3][k % 3]
        def mix(a, b, sites=None):
            return [({host: a, guest: b} if site.specie.symbol == host and (sites is None or i in sites)
                     else {site.specie.symbol: 1.0}) for i, site in enumerate(s)]
        base = with_species(s, mix(x, 1 - x))
        # The same species, listed guest first.
        reordered = with_species(s, [({guest: 1 - x, host: x} if site.specie.symbol == host
                                      else {site.specie.symbol: 1.0}) for site in s])
        # One atom moved 0.05-0.4 Å, species kept.
        moved_one = reordered.copy()
        i = int(rng.integers(len(moved_one)))
        v = rng.normal(size=3)
        moved_one.translate_sites([i], v / np.linalg.norm(v) * rng.uniform(0.05, 0.4),
                                  frac_coords=False, to_unit_cell=False)
        variants = [("reordered", species_moved(reordered, rng)),
                    ("displaced", species_moved(moved_one, rng))]
        if x != 0.5:
            variants.append(("swapped", species_moved(with_species(s, mix(1 - x, x)), rng)))
        hosts = [i for i, site in enumerate(s) if site.specie.symbol == host]
        if len(hosts) >= 2:
            half = len(hosts) // 2
            first, second = set(hosts[:half]), set(hosts[half:2 * half])
            # Half the host sites mixed (x=0.5 each way) vs the other half: same composition.
            a = with_species(s, [({host: 0.5, guest: 0.5} if i in first else
                                  {host: 1.0} if i in second else {site.specie.symbol: 1.0})
                                 for i, site in enumerate(s)])
            b = with_species(s, [({guest: 0.5, host: 0.5} if i in second else
                                  {host: 1.0} if i in first else {site.specie.symbol: 1.0})
                                 for i, site in enumerate(s)])
            out += [("mixed/moved", name, a, species_moved(b, rng), o) for o in MIXED_OPTION_SETS]
        for variant, s2 in variants:
            out += [(f"mixed/{variant}", name, base, s2, o) for o in MIXED_OPTION_SETS]
    return out


def corpus_mixed_pairs(seed: int) -> list:
    """Corpus structures (at most CORPUS_MAX_SITES sites, no dummy species) with a mixed or
    partly occupied site, oxidation states dropped, against themselves written by CifWriter,
    re-parsed, permuted and translated."""
    out = []
    for k, (name, text) in enumerate(corpus_texts()):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                s = CifParser.from_str(text).parse_structures(primitive=False, check_occu=False)[0]
        except Exception:  # noqa: BLE001 - the CIF reader test compares the rejection
            continue
        if (len(s) > CORPUS_MAX_SITES or s.is_ordered
                or any(isinstance(sp, DummySpecies) for site in s for sp in site.species)
                or any(sum(site.species.values()) > 1 + 1e-8 for site in s)):
            continue
        s.remove_oxidation_states()
        s = with_species(s, [site.species for site in s])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            again = CifParser.from_str(str(CifWriter(s))).parse_structures(
                primitive=False, check_occu=False)[0]
        again = with_species(again, [site.species for site in again])
        rng = np.random.default_rng([seed, 5_000_000 + k])
        out += [("mixed/corpus", name, s, species_moved(again, rng), o) for o in MIXED_OPTION_SETS]
    print(f"mixed corpus: {len(out)} matcher cases", file=sys.stderr)
    return out


def oxidation_pairs(pool, seed: int) -> list:
    """Pool structures (at most 24 sites) with oxidation states, under the AtomWorld and
    CIF-Gen options: each element's sites split in two halves, +2 and +3 (the first element
    -2 and -1), against
    - moved: the same, translated and permuted (a fit);
    - swapped: the same with the states of one +2 and one +3 site of an element exchanged
      (same composition; the arrangement differs);
    and, with one state per element (+2), plain elements against states and the reverse
    (pymatgen's Composition equality is not symmetric: plain Fe equals Fe2+, not back)."""
    from pymatgen.core import Species

    out = []
    small = [(name, s) for name, s in pool if len(s) <= 24]
    for k, (name, s) in enumerate(small[:24]):
        rng = np.random.default_rng([seed, 6_000_000 + k])
        elements = list(dict.fromkeys(site.specie.symbol for site in s))
        states = {}
        for n, el in enumerate(elements):
            sites = [i for i, site in enumerate(s) if site.specie.symbol == el]
            low, high = (-2.0, -1.0) if n == 0 else (2.0, 3.0)
            for j, i in enumerate(sites):
                states[i] = low if j < (len(sites) + 1) // 2 else high
        ionic = with_species(s, [Species(site.specie.symbol, states[i]) for i, site in enumerate(s)])
        variants = [("moved", species_moved(ionic, rng))]
        pairs = [(el, [i for i in range(len(s)) if s[i].specie.symbol == el]) for el in elements]
        for el, sites in pairs:
            kinds = {states[i] for i in sites}
            if len(kinds) == 2:
                a = next(i for i in sites if states[i] == min(kinds))
                b = next(i for i in sites if states[i] != states[a])
                swapped = dict(states)
                swapped[a], swapped[b] = states[b], states[a]
                other = with_species(s, [Species(site.specie.symbol, swapped[i]) for i, site in enumerate(s)])
                variants.append(("swapped", species_moved(other, rng)))
                break
        one = with_species(s, [Species(site.specie.symbol, 2.0) for site in s])
        plain = with_species(s, [site.specie.symbol for site in s])
        for variant, s2 in variants:
            out += [(f"oxidation/{variant}", name, ionic, s2, o) for o in MIXED_OPTION_SETS]
        out += [("oxidation/plain_vs_ionic", name, plain, species_moved(one, rng), o) for o in MIXED_OPTION_SETS]
        out += [("oxidation/ionic_vs_plain", name, one, species_moved(plain, rng), o) for o in MIXED_OPTION_SETS]
    print(f"oxidation states: {len(out)} matcher cases", file=sys.stderr)
    return out


_MATCHERS: dict = {}


def evaluate(pair) -> dict:
    kind, name, s1, s2 = pair[:4]
    options = pair[4] if len(pair) > 4 else "atomworld"
    if options not in _MATCHERS:
        _MATCHERS[options] = StructureMatcher(**mc.OPTION_SETS[options])
    matcher = _MATCHERS[options]
    # pymatgen memoises reduced structures process-wide (an lru_cache on
    # StructureMatcher._get_reduced_istructure, keyed by structures equal to 1e-5 Å): without
    # clearing it, a pair can be matched against the reduction of a nearly equal structure of
    # an earlier pair, and its answer depends on what the worker process saw before (measured:
    # 95 of the 10,282 full-run answers moved between two runs, two of them by more than
    # 1e-6). Each answer here is pymatgen's for that pair alone, as a user sees it.
    StructureMatcher._get_reduced_istructure.cache_clear()
    fit = bool(matcher.fit(s1, s2))
    rms = matcher.get_rms_dist(s1, s2)
    return {
        "options": options,
        "kind": kind,
        "mineral": name,
        "s1": mc.plain(s1),
        "s2": mc.plain(s2),
        "fit": fit,
        "rms": None if rms is None else float(rms[0]),
        "max_dist": None if rms is None else float(rms[1]),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=1000, help="generated pairs (beyond pool/upstream)")
    ap.add_argument("--seed", type=int, default=mc.SEED)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()

    pool = mc.load_pool()
    rng = np.random.default_rng([args.seed, 2_000_000])
    pairs = [("pool", name, s, mc.permuted(mc.translated(s, rng), rng)) for name, s in pool]
    pairs += upstream_pairs(args.seed)
    polymorphs = polymorph_pairs(pool)
    pairs += [generated_pair(i, args.seed, pool, polymorphs) for i in range(args.pairs)]
    pairs += reprinted_pairs(pool)
    corpus = corpus_pairs(args.seed)
    pairs += corpus
    mixed = mixed_pairs(pool, args.seed) + corpus_mixed_pairs(args.seed)
    pairs += mixed
    oxidation = oxidation_pairs(pool, args.seed)
    pairs += oxidation

    t0 = time.time()
    if args.jobs > 1:
        with multiprocessing.get_context("fork").Pool(args.jobs) as workers:
            cases = list(workers.imap(evaluate, pairs, chunksize=8))
    else:
        cases = [evaluate(p) for p in pairs]
    elapsed = time.time() - t0

    doc = {
        "generator": "engine/tests/pymatgen/matcher_oracle.py",
        "seed": args.seed,
        "generated_pairs": args.pairs,
        "pymatgen": importlib.metadata.version("pymatgen"),
        "matcher": "StructureMatcher(primitive_cell=False, stol=0.5) unless a case names its options",
        "option_sets": {name: mc.resolved(mc.OPTION_SETS[name]) for name in MIXED_OPTION_SETS},
        "pymatgen_seconds": elapsed,
        "cases": cases,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc))
    os.replace(tmp, args.out)
    n_fit = sum(c["fit"] for c in cases)
    print(
        f"{len(cases)} matcher cases ({n_fit} fit; {len(pool)} pool, "
        f"{len(pairs) - 3 * len(pool) - args.pairs - len(corpus) - len(mixed) - len(oxidation)} upstream, "
        f"{args.pairs} generated, {2 * len(pool)} reprinted, {len(corpus)} corpus, "
        f"{len(mixed)} mixed-site, {len(oxidation)} oxidation-state) -> {args.out}; "
        f"pymatgen {elapsed:.1f}s on {args.jobs} process(es)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
