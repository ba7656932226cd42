"""Differential-test oracle: what pymatgen makes of CIF texts.

Run with the pymatgen venv's python:

    ~/.cache/atomworld/venv-pmg/bin/python engine/tests/pymatgen/cif_oracle.py \
        [--out ~/.cache/atomworld/cif-oracle.json] [--seed 20260101]

Cases: every CIF of data/structures/minerals.jsonl and every input_cif / target_cif of the
upstream AtomWorld tasks (../shared/data/atomworld/upstream-tasks.jsonl beside the clone; required
when ATOMWORLD_REQUIRE_SHARED=1) (the "pool"), plus deterministic (seeded) variants of them: CRLF line
endings, uncertainties, exponent notation, stacked duplicate atoms, coordinates near 1/3 and
2/3, no type-symbol column, symmetry-operation CIFs written by CifWriter(symprec=0.1) and
the same without their operation loop (group named by symbol and/or number), files naming
each space group pymatgen knows (and some it does not) by symbol or number, and
broken or unusual files; and every file of the real-world corpus (data/cif-corpus, kind
"corpus"), read the way CifParser(filename) reads a file (UTF-8, undecodable bytes replaced,
universal newlines). For each case the JSON records the text, whether
CifParser.from_str(text).parse_structures(primitive=False, check_occu=False)[0] succeeds and,
if so, the lattice parameters, per-site species, fractional coordinates and labels in
pymatgen's order; for pool cases also str(CifWriter(parsed structure)).

engine/tests/cif_vs_pymatgen.rs reads the file named by ATOMWORLD_CIF_CASES.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import sys
import warnings
from pathlib import Path

import numpy as np
from pymatgen.core import Element, Lattice, Structure
from pymatgen.io.cif import CifParser, CifWriter

ROOT = Path(__file__).resolve().parents[3]
MINERALS = ROOT / "data" / "structures" / "minerals.jsonl"
# Real CIF files from public sources (data/cif-corpus/README.md, SOURCES.tsv), read as-is.
CORPUS = ROOT / "data" / "cif-corpus"
# The shared data directory sits beside the clone (../shared); CI sets ATOMWORLD_REQUIRE_SHARED=1.
UPSTREAM = ROOT.parent / "shared" / "data" / "atomworld" / "upstream-tasks.jsonl"
DEFAULT_OUT = Path.home() / ".cache" / "atomworld" / "cif-oracle.json"


def num(x: float):
    """JSON-safe float (non-finite values as strings)."""
    x = float(x)
    return x if math.isfinite(x) else repr(x)


# pymatgen's warning for a data block it could not read, followed by the block's exception.
SECTION_FAILED = "No structure parsed for section"


def parse(text: str):
    """The structure pymatgen reads, or None with the reason: its exception and, when that is
    the generic "no structures", each block's own exception (from pymatgen's warnings) and how
    many data blocks it found."""
    blocks = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            parser = CifParser.from_str(text)
            blocks = len(parser._cif.data)  # noqa: SLF001 - the oracle pins pymatgen's version
            s = parser.parse_structures(primitive=False, check_occu=False)[0]
        except Exception as exc:  # noqa: BLE001 - any failure is a rejection
            causes = [
                str(w.message).split("\n", 1)[1][:200]
                for w in caught
                if str(w.message).startswith(SECTION_FAILED) and "\n" in str(w.message)
            ]
            reason = {"causes": causes, "blocks": blocks}
            return None, (f"{type(exc).__name__}: {str(exc)[:200]}", reason)
    return s, None


def describe(s: Structure) -> dict:
    species = []
    for site in s:
        entry = []
        for sp, amt in site.species.items():
            oxi = getattr(sp, "oxi_state", None)
            entry.append([sp.symbol, None if oxi is None else num(oxi), num(amt)])
        species.append(entry)
    out = {
        "lattice": [num(v) for v in s.lattice.parameters],
        "species": species,
        "frac": [[num(v) for v in site.frac_coords] for site in s],
        "labels": [site.label for site in s],
    }
    if len(s) and "magmom" in s[0].properties:
        # With check_occu=False pymatgen gives every site the whole list of moments.
        def moment(i):
            p = s[i].properties["magmom"]
            m = p[i] if isinstance(p, list) and len(p) == len(s) else p
            return [num(float(v)) for v in np.asarray(getattr(m, "moment", m), dtype=float)]
        out["magmoms"] = [moment(i) for i in range(len(s))]
    return out


def case(cases: list, kind: str, name: str, text: str, pool: bool = False) -> Structure | None:
    s, err = parse(text)
    rec = {"id": f"{kind}/{name}", "kind": kind, "cif": text, "ok": s is not None}
    if s is None:
        rec["error"], reason = err
        rec.update(reason)
    else:
        rec.update(describe(s))
        if pool:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rec["writer"] = str(CifWriter(s))
    cases.append(rec)
    return s


# --- variants -----------------------------------------------------------------------------

OPS_LOOP = re.compile(r"loop_\n(?:\s*_symmetry_equiv_pos_\w+\n)+(?:(?!loop_|_)[^\n]*\n)*")


def without_ops(text: str, keep_symbol: bool = True, keep_number: bool = True) -> str:
    """A CifWriter(symprec=...) text with its symmetry-operation loop removed: the space group
    is then named only by its symbol and/or number, the way many real files and models write."""
    out = OPS_LOOP.sub("", text)
    if not keep_symbol:
        out = re.sub(r"^_symmetry_space_group_name_H-M.*\n", "", out, flags=re.M)
    if not keep_number:
        out = re.sub(r"^_symmetry_Int_Tables_number.*\n", "", out, flags=re.M)
    return out


SG_CELL = """_cell_length_a 5.1
_cell_length_b 5.1
_cell_length_c 7.3
_cell_angle_alpha 90
_cell_angle_beta 90
_cell_angle_gamma 120
"""
# A general position, a special one, one on a 3-fold axis written to 5 decimals (snapped to
# 1/3, 2/3 by the parser), and one of another element close to a special position.
SG_SITES = """loop_
_atom_site_label
_atom_site_type_symbol
_atom_site_fract_x
_atom_site_fract_y
_atom_site_fract_z
Na1 Na 0.1234 0.3456 0.789
Cl1 Cl 0 0 0
O1 O 0.33333 0.66667 0.25
Si1 Si 0.5 0.00003 0.5
"""


def space_group_texts() -> list[tuple[str, str]]:
    """Files naming their space group without operations: every symbol pymatgen's tables hold
    (as stored and with spaces between the symbol's parts, as CIFs write them), every number,
    and forms pymatgen does not know (short monoclinic symbols, Hall symbols, out of range)."""
    from monty.serialization import loadfn
    from pymatgen.symmetry.groups import SYMM_DATA
    import pymatgen.io.cif as pmg_cif

    cod = loadfn(Path(pmg_cif.__file__).parents[1] / "symmetry" / "symm_ops.json")
    symbols = list(SYMM_DATA["space_group_encoding"])
    symbols += [e["hermann_mauguin"] for e in cod]
    symbols += [" ".join(re.findall(r"-?\d_?\d?(?:/[a-z])?|[A-Za-z](?::\w+)?", k)) for k in SYMM_DATA["space_group_encoding"]]
    symbols += ["P 21/c", "P 21/n", "C 2/c", "-P 2ybc", "-F 4 2 3", "R -3 m :H", "R -3 m :R", "?", "."]
    out = []
    seen = set()
    for tag in ("_symmetry_space_group_name_H-M", "_space_group_name_H-M_alt", "_space_group_name_Hall"):
        for sym in symbols:
            if (tag, sym) in seen:
                continue
            seen.add((tag, sym))
            # Hall and alt tags: a sample, the symbol table is the same lookup.
            if tag != "_symmetry_space_group_name_H-M" and len(seen) % 7:
                continue
            quoted = "'" + sym.replace("'", "") + "'"
            out.append((f"{tag}={sym}", f"data_sg\n{SG_CELL}{tag} {quoted}\n{SG_SITES}"))
    for tag in ("_symmetry_Int_Tables_number", "_space_group_IT_number"):
        for n in list(range(0, 232)) + ["225.7", "14(2)", "-3", "1e2", "abc"]:
            if tag != "_symmetry_Int_Tables_number" and str(n) not in ("1", "14", "166", "225", "225.7"):
                continue
            out.append((f"{tag}={n}", f"data_sg\n{SG_CELL}{tag} {n}\n{SG_SITES}"))
    return out

ROW = re.compile(
    r"^(\s+)(\S+)\s+(\S+)\s+(\S+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(\S+)\s*$", re.M
)


def rows(text: str):
    return list(ROW.finditer(text))


def map_coords(text: str, rng: random.Random, fn) -> str:
    def repl(m):
        xs = [fn(float(m[i]), rng) for i in (5, 6, 7)]
        return f"{m[1]}{m[2]}  {m[3]}  {m[4]}  {xs[0]}  {xs[1]}  {xs[2]}  {m[8]}"

    return ROW.sub(repl, text)


def with_uncertainty(x: float, rng: random.Random) -> str:
    digits = rng.choice([3, 4, 5, 6])
    return f"{x:.{digits}f}({rng.randint(1, 99)})"


def with_exponent(x: float, rng: random.Random) -> str:
    return rng.choice(["{:.7e}", "{:.6E}", "{:.8g}"]).format(x)


def near_thirds(text: str, rng: random.Random) -> str:
    targets = ["0.33333", "0.3333", "0.333", "0.66667", "0.6667", "0.667", "0.66666",
               "0.33336", "0.3334", "0.6666", "0.33330", "-0.33333", "1.33333"]

    def fn(x, rng):
        return rng.choice(targets) if rng.random() < 0.5 else f"{x:.8f}"

    return map_coords(text, rng, fn)


def stacked(text: str, rng: random.Random, offset: float) -> str:
    rs = rows(text)
    if not rs:
        return text
    m = rng.choice(rs)
    xs = [float(m[i]) for i in (5, 6, 7)]
    k = rng.randrange(3)
    xs[k] = xs[k] + rng.choice([-1, 1]) * offset
    dup = f"{m[1]}{m[2]}  {m[3]}x  {m[4]}  {xs[0]:.8f}  {xs[1]:.8f}  {xs[2]:.8f}  {m[8]}"
    end = m.end()
    return text[:end] + "\n" + dup + text[end:]


def stacked_periodic(text: str, rng: random.Random) -> str:
    """A duplicate one lattice vector away (e.g. x and x+1): pymatgen merges it."""
    rs = rows(text)
    if not rs:
        return text
    m = rng.choice(rs)
    xs = [float(m[i]) for i in (5, 6, 7)]
    xs[rng.randrange(3)] += rng.choice([-1.0, 1.0])
    dup = f"{m[1]}{m[2]}  {m[3]}p  {m[4]}  {xs[0]:.8f}  {xs[1]:.8f}  {xs[2]:.8f}  {m[8]}"
    return text[: m.end()] + "\n" + dup + text[m.end():]


def stacked_other_element(text: str, rng: random.Random) -> str:
    rs = rows(text)
    if not rs:
        return text
    m = rng.choice(rs)
    el = rng.choice(["O", "H", "Fe", "Na"])
    dup = f"{m[1]}{el}  {el}99  {m[4]}  {m[5]}  {m[6]}  {m[7]}  {m[8]}"
    return text[: m.end()] + "\n" + dup + text[m.end():]


def drop_type_symbol(text: str) -> str:
    text = text.replace(" _atom_site_type_symbol\n", "")
    return ROW.sub(lambda m: f"{m[1]}{m[3]}  {m[4]}  {m[5]}  {m[6]}  {m[7]}  {m[8]}", text)


def upper_labels(text: str) -> str:
    text = text.replace(" _atom_site_type_symbol\n", "")
    return ROW.sub(lambda m: f"{m[1]}{m[3].upper()}  {m[4]}  {m[5]}  {m[6]}  {m[7]}  {m[8]}", text)


def replace_first_row_field(text: str, field: int, value: str) -> str:
    rs = rows(text)
    if not rs:
        return text
    m = rs[0]
    parts = [m[i] for i in range(2, 9)]
    parts[field - 2] = value
    return text[: m.start()] + m[1] + "  ".join(parts) + text[m.end():]


def broken_variants(text: str, rng: random.Random) -> dict[str, str]:
    """Unusual or broken files, most of which pymatgen rejects."""
    out: dict[str, str] = {}
    out["no_cell_a"] = re.sub(r"_cell_length_a\s+\S+\n", "", text)
    out["unknown_coordinate"] = replace_first_row_field(text, 5, "?")
    out["dot_coordinate"] = replace_first_row_field(text, 6, ".")
    out["word_coordinate"] = replace_first_row_field(text, 7, "abc")
    out["unknown_occupancy"] = replace_first_row_field(text, 8, "?")
    out["dot_occupancy"] = replace_first_row_field(text, 8, ".")
    out["half_occupancy"] = replace_first_row_field(text, 8, "0.5")
    out["negative_occupancy"] = replace_first_row_field(text, 8, "-1")
    out["nan_coordinate"] = replace_first_row_field(text, 5, "nan")
    out["inf_coordinate"] = replace_first_row_field(text, 6, "inf")
    out["paren_only"] = replace_first_row_field(text, 5, "0.5(")
    out["underscore_number"] = replace_first_row_field(text, 5, "0.1_5")
    out["dummy_species"] = replace_first_row_field(replace_first_row_field(text, 2, "M"), 3, "M1")
    out["lowercase_symbol"] = replace_first_row_field(drop_type_symbol(text), 2, "xx1")
    out["water_label"] = replace_first_row_field(drop_type_symbol(text), 2, "Wat1")
    out["oh_label"] = replace_first_row_field(drop_type_symbol(text), 2, "OH1")
    out["deuterium"] = replace_first_row_field(drop_type_symbol(text), 2, "D1")
    out["empty_label"] = replace_first_row_field(drop_type_symbol(text), 2, "''")
    out["missing_row_value"] = text.rstrip("\n").rsplit(" ", 1)[0] + "\n"
    out["no_data_line"] = text.replace("data_", "")
    out["thin_cell"] = re.sub(r"_cell_length_c\s+\S+", "_cell_length_c   0.005", text)
    out["negative_length"] = re.sub(r"_cell_length_b\s+(\S+)", r"_cell_length_b   -\1", text)
    out["impossible_angles"] = re.sub(
        r"_cell_angle_alpha\s+\S+\n_cell_angle_beta\s+\S+\n_cell_angle_gamma\s+\S+",
        "_cell_angle_alpha   10\n_cell_angle_beta   10\n_cell_angle_gamma   170",
        text,
    )
    out["zero_angle"] = re.sub(r"_cell_angle_alpha\s+\S+", "_cell_angle_alpha   0", text)
    out["cell_uncertainty"] = re.sub(r"_cell_length_a\s+(\S+)", r"_cell_length_a   \1(3)", text)
    out["cell_unknown"] = re.sub(r"_cell_length_a\s+(\S+)", r"_cell_length_a   ?", text)
    out["upper_case_tags"] = text.replace("_atom_site_fract_x", "_ATOM_SITE_FRACT_X")
    out["no_label_column"] = text.replace(" _atom_site_label\n", "").replace(
        "_atom_site_type_symbol\n", "_atom_site_type_symbol\n", 1
    )
    out["no_label_column"] = ROW.sub(
        lambda m: f"{m[1]}{m[2]}  {m[4]}  {m[5]}  {m[6]}  {m[7]}  {m[8]}",
        text.replace(" _atom_site_label\n", ""),
    )
    out["empty"] = ""
    out["garbage"] = "this is not a CIF file\n" + "".join(rng.choice("abc_;'\" \n#") for _ in range(200))
    out["truncated"] = text[: rng.randrange(len(text) // 3, len(text))]
    out["unclosed_quote"] = text.replace("'P 1'", "'P 1")
    out["comment_in_quote"] = text.replace("'x, y, z'", "'x, y, z # c'")
    out["comments_and_blank_lines"] = text.replace("\nloop_", "\n# a comment\n\n   \nloop_").replace(
        "_cell_volume", "_cell_volume  # trailing\n_cell_volume"
    )
    out["tabs"] = text.replace("  ", "\t")
    out["no_symops"] = re.sub(
        r"loop_\n _symmetry_equiv_pos_site_id\n _symmetry_equiv_pos_as_xyz\n  1  'x, y, z'\n", "", text
    )
    out["hm_only_fm3m"] = out["no_symops"].replace("'P 1'", "'F m -3 m'")
    out["hm_garbage"] = out["no_symops"].replace("'P 1'", "'?'")
    out["number_only"] = out["no_symops"].replace("'P 1'", "?").replace(
        "_symmetry_Int_Tables_number   1", "_symmetry_Int_Tables_number   225"
    )
    out["number_zero"] = out["no_symops"].replace("'P 1'", "?").replace(
        "_symmetry_Int_Tables_number   1", "_symmetry_Int_Tables_number   0"
    )
    out["bad_symop"] = text.replace("'x, y, z'", "'x, y, z+1/0'")
    out["symop_words"] = text.replace("'x, y, z'", "'a, b, c'")
    out["symop_two_parts"] = text.replace("'x, y, z'", "'x, y'")
    out["symop_inversion"] = text.replace("  1  'x, y, z'", "  1  'x, y, z'\n  2  '-x, -y, -z'")
    out["symop_translation"] = text.replace("  1  'x, y, z'", "  1  'x, y, z'\n  2  'x+1/2, y+1/2, z'")
    out["symop_dotted_tag"] = text.replace("_symmetry_equiv_pos_as_xyz", "_space_group_symop.operation_xyz")
    out["symop_scalar"] = re.sub(
        r"loop_\n _symmetry_equiv_pos_site_id\n _symmetry_equiv_pos_as_xyz\n  1  'x, y, z'\n",
        "_symmetry_equiv_pos_as_xyz   '-x, -y, -z'\n",
        text,
    )
    out["magnetic"] = text.replace("_cell_volume", "_atom_site_moment_label  x\n_cell_volume")
    out["two_blocks"] = text + "\n" + text.replace("data_", "data_second", 1)
    out["second_block_broken"] = text + "\ndata_b\nloop_\n_a\n_b\n1 2 3\n"
    out["first_block_broken"] = re.sub(r"_cell_length_a\s+\S+\n", "", text) + "\n" + text.replace("data_", "data_two", 1)
    out["same_header_twice"] = text + "\n" + re.sub(r"_cell_length_a\s+\S+\n", "", text)
    out["powder_block"] = text.replace("data_", "data_powder_pattern_", 1)
    out["text_field"] = text.replace("_cell_volume", "_publ_section_title\n;\nA title\nover lines\n;\n_cell_volume")
    out["unclosed_text_field"] = text + "_note\n;\nnever closed\n"
    out["non_ascii"] = text.replace("_cell_volume", "_publ_author_name 'Ångström Müller'\n_cell_volume")
    out["cr_only"] = text.replace("\n", "\r")
    out["eof_marker"] = text.replace("loop_\n _atom_site", "_eof\nloop_\n _atom_site", 1)
    out["stray_tokens"] = text.replace("_cell_volume", "stray words here\n_cell_volume")
    out["loop_no_values"] = text + "loop_\n_x\n_y\n"
    out["loop_no_tags"] = text + "loop_\n1 2\n"
    out["tag_without_value_at_end"] = text + "_last_tag\n"
    out["pauling"] = text.replace(" _atom_site_occupancy\n", " _atom_site_occupancy\n", 1)
    rs = rows(text)
    if rs:
        m = rs[0]
        pau = f"{m[1]}'0.8Nb + 0.2Zr'  M1  {m[4]}  {m[5]}  {m[6]}  {m[7]}  {m[8]}"
        out["pauling"] = text[: m.start()] + pau + text[m.end():]
    out["oxidation_states"] = text.replace(
        "loop_\n _atom_site_type_symbol",
        "loop_\n _atom_type_symbol\n _atom_type_oxidation_number\n  X1+  1\nloop_\n _atom_site_type_symbol",
    )
    out["cell_setting_cubic"] = re.sub(
        r"_cell_length_b\s+\S+\n", "", text
    ).replace("_cell_volume", "_symmetry_cell_setting   cubic\n_cell_volume")
    out["cell_setting_missing_a"] = re.sub(r"_cell_length_a\s+\S+\n", "", text).replace(
        "_cell_volume", "_symmetry_cell_setting   cubic\n_cell_volume"
    )
    return out


def mutate(text: str, rng: random.Random) -> str:
    """One random edit of the kinds a language model makes."""
    lines = text.split("\n")
    op = rng.choice(["del_line", "dup_line", "swap_lines", "ins_char", "del_char", "token",
                     "hash", "semicolon", "fence", "oxidation", "no_occupancy", "charge_label"])
    i = rng.randrange(len(lines)) if lines else 0
    if op == "del_line" and lines:
        del lines[i]
    elif op == "dup_line" and lines:
        lines.insert(i, lines[i])
    elif op == "swap_lines" and len(lines) > 1:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif op in ("ins_char", "del_char", "hash", "semicolon"):
        t = "\n".join(lines)
        k = rng.randrange(len(t) + 1)
        if op == "ins_char":
            t = t[:k] + rng.choice("'\"_;#()?.,-+ x0\t") + t[k:]
        elif op == "del_char":
            t = t[:k] + t[k + 1:]
        elif op == "hash":
            t = t[:k] + " # note" + t[k:]
        else:
            t = t[:k] + "\n;" + t[k:]
        return t
    elif op == "token":
        words = list(re.finditer(r"\S+", text))
        if words:
            m = rng.choice(words)
            rep = rng.choice(["?", ".", "''", "x", "1e400", "0.5(", "-", "_tag", "loop_", "data_y"])
            return text[: m.start()] + rep + text[m.end():]
    elif op == "fence":
        return "```cif\n" + text + "```\n"
    elif op == "oxidation":
        return text.replace(
            "loop_\n _atom_site_type_symbol",
            "loop_\n _atom_type_symbol\n _atom_type_oxidation_number\n  X  0\nloop_\n _atom_site_type_symbol",
        )
    elif op == "no_occupancy":
        return ROW.sub(lambda m: f"{m[1]}{m[2]}  {m[3]}  {m[4]}  {m[5]}  {m[6]}  {m[7]}",
                       text.replace(" _atom_site_occupancy\n", ""))
    elif op == "charge_label":
        return ROW.sub(lambda m: f"{m[1]}{m[2]}2+  {m[3]}  {m[4]}  {m[5]}  {m[6]}  {m[7]}  {m[8]}", text)
    return "\n".join(lines)


def pool_texts() -> list[tuple[str, str]]:
    out = []
    with MINERALS.open() as f:
        for i, line in enumerate(f):
            d = json.loads(line)
            out.append((f"mineral/{i}-{d.get('mineral', '')}", d["cif"]))
    if not UPSTREAM.exists():
        if os.environ.get("ATOMWORLD_REQUIRE_SHARED") == "1":
            raise SystemExit(f"ATOMWORLD_REQUIRE_SHARED=1 but {UPSTREAM} is missing")
        print(f"notice: {UPSTREAM} not found; upstream cases left out", file=sys.stderr)
        return out
    with UPSTREAM.open() as f:
        for i, line in enumerate(f):
            d = json.loads(line)
            out.append((f"upstream/{i}-input", d["input_cif"]))
            out.append((f"upstream/{i}-target", d["target_cif"]))
    return out


def magnetic_variants(text: str) -> dict[str, str]:
    """Edits of a magnetic CIF: the interim tag spellings, no moments, the time reversals
    flipped, the group named only by its BNS label, no group at all, two atoms on one spot."""
    ops = re.compile(r"_space_group_symop[._]magn_(operation|centering)[._]xyz")
    out = {
        "interim_keys": ops.sub(lambda m: f"_space_group_symop.magn_{m.group(1)}_xyz", text),
        "no_moments": re.sub(r"_atom_site_moment[._]label", "_atom_site_moment_name", text),
        "flipped_time_reversal": re.sub(r",\s*([+-])1(['\"]?)\s*$",
                                        lambda m: f",{'-' if m.group(1) == '+' else '+'}1{m.group(2)}",
                                        text, flags=re.M),
        "bns_only": ops.sub(lambda m: f"_space_group_symop_magn_{m.group(1)}_unused", text),
        "no_group": re.sub(r"_space_group[._]magn[._](name|number)_BNS", r"_unused_\1",
                           ops.sub(lambda m: f"_space_group_symop_magn_{m.group(1)}_unused", text)),
    }
    lines = text.split("\n")
    for i, line in enumerate(lines):
        # The first atom-site row (after the _atom_site_fract_z header), repeated under
        # another label: two atoms on one spot.
        if line.strip().startswith("_atom_site_fract_z"):
            for j in range(i + 1, len(lines)):
                f = lines[j].split()
                if f and not f[0].startswith("_"):
                    lines.insert(j + 1, " ".join(["X" + f[0]] + f[1:]))
                    out["disordered"] = "\n".join(lines)
                    break
            break
    return out


def corpus_texts() -> list[tuple[str, str]]:
    """Every corpus file (.cif, .mcif), by its path under data/cif-corpus, as text the way
    pymatgen's CifParser(filename) reads it (zopen "rt", UTF-8, errors="replace")."""
    out = []
    for path in sorted(CORPUS.rglob("*")):
        if path.suffix.lower() in (".cif", ".mcif") and path.is_file():
            with path.open("rt", encoding="utf-8", errors="replace") as fh:
                out.append((path.relative_to(CORPUS).as_posix(), fh.read()))
    if not out:
        raise SystemExit(f"no CIF files under {CORPUS}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--seed", type=int, default=20260101)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    cases: list[dict] = []

    pool = pool_texts()
    parsed = []
    for name, text in pool:
        s = case(cases, "pool", name, text, pool=True)
        parsed.append((name, text, s))

    for name, text, s in parsed:
        r = random.Random(f"{args.seed}/{name}")
        case(cases, "crlf", name, text.replace("\n", "\r\n"))
        case(cases, "uncertainty", name, map_coords(text, r, with_uncertainty))
        case(cases, "exponent", name, map_coords(text, r, with_exponent))
        case(cases, "near_thirds", name, near_thirds(text, r))
        case(cases, "stacked", name, stacked(text, r, r.choice([0.0, 1e-6, 5e-5, 9e-5])))
        case(cases, "not_stacked", name, stacked(text, r, r.choice([1.5e-4, 1e-3])))
        case(cases, "stacked_periodic", name, stacked_periodic(text, r))
        case(cases, "stacked_other_element", name, stacked_other_element(text, r))
        case(cases, "no_type_symbol", name, drop_type_symbol(text))
        case(cases, "upper_labels", name, upper_labels(text))
        if s is not None and name.startswith("mineral/"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    sym = str(CifWriter(s, symprec=0.1))
                except Exception:  # noqa: BLE001
                    sym = None
            if sym is not None:
                case(cases, "symmetrized", name, sym)
                case(cases, "symmetrized_crlf", name, sym.replace("\n", "\r\n"))
                case(cases, "symbol_and_number", name, without_ops(sym))
                case(cases, "symbol_only", name, without_ops(sym, keep_number=False))
                case(cases, "number_only", name, without_ops(sym, keep_symbol=False))

    for name, text in space_group_texts():
        case(cases, "space_group", name, text)

    # Broken and unusual files, from a few seeded pool texts.
    for name, text, _ in rng.sample(parsed, 12):
        r = random.Random(f"{args.seed}/broken/{name}")
        for kind, t in broken_variants(text, r).items():
            case(cases, f"broken/{kind}", name, t)

    # Random edits (seeded), one to three per text.
    for n in range(600):
        name, text, _ = parsed[rng.randrange(len(parsed))]
        r = random.Random(f"{args.seed}/mutation/{n}")
        t = text
        for _ in range(r.randint(1, 3)):
            t = mutate(t, r)
        case(cases, "mutation", f"{n}-{name}", t)

    for name, text in corpus_texts():
        case(cases, "corpus", name, text)
        if name.endswith(".mcif"):
            for kind, t in magnetic_variants(text).items():
                if t != text:
                    case(cases, f"magnetic/{kind}", name, t)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"seed": args.seed, "cases": cases}))
    ok = sum(c["ok"] for c in cases)
    print(f"{len(cases)} cases ({ok} accepted by pymatgen) -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
