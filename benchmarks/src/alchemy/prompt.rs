//! What the model is asked: one user message and no system message, in two kinds.
//!
//! - One-shot ([`one_shot_prompt`]): an expert persona asked to design a detailed synthesis
//!   recipe for the given **key contributions**, in the format of one worked example, then
//!   "Now, predict the synthesis recipe for the given key contributions:" and X. The worked
//!   example is ours ([`EXAMPLE_CONTRIBUTION`] → [`EXAMPLE_RECIPE`]: an EDTA–citrate sol–gel
//!   route to an LSCF cathode powder); unlike the reference's it has the "Characterization
//!   Methods and Equipment" and "Product Characteristics" sections, which the judge scores.
//! - Retrieval-augmented ([`rag_prompt`]): the same persona, "Here are recipes from research
//!   papers with similar contributions.", the K neighbours as "# Reference i:" (1-based),
//!   the neighbour's X, a blank line, the neighbour's Y (references separated by a blank
//!   line), then "Based on these references, predict the synthesis recipe for the given key
//!   contributions:" and X.
//!
//! K = 0 is ambiguous upstream (the RAG prompt with an empty reference block, or the plain
//! prediction prompt). Here **K = 0 is the one-shot prompt**: [`prompt`] with no references
//! gives exactly [`one_shot_prompt`], so "RAG K = 0" and "one-shot" are one condition.
//!
//! Texts are passed through unchanged (no trimming), so a transcript shows exactly what the
//! data holds. The persona and instructions are our wording of the protocol;
//! `benchmarks/tests/cases/alchemy/` holds one transcript of each kind, byte for byte.

use super::recipe::Reference;
use crate::task::Message;

/// The persona and task sentence both kinds open with.
pub const PERSONA: &str = "You are an expert in materials science and chemical synthesis. Your task is to design a detailed material synthesis recipe, considering the following **key contributions**.";

/// The worked example's input: key contributions in the data's Markdown layout.
pub const EXAMPLE_CONTRIBUTION: &str = "## Key Contributions
- **Novel materials or compounds**: La0.6Sr0.4Co0.2Fe0.8O3-δ (LSCF) perovskite powder with fine, uniform particles for solid oxide fuel cell cathodes.
- **Unique synthesis methods**: A combined EDTA-citric acid sol-gel route at controlled pH, with self-ignition of the dried gel and a single calcination in air.
- **Specific applications or domains**: Cathodes of intermediate-temperature solid oxide fuel cells (600-800 °C) on gadolinium-doped ceria electrolytes.";

/// The worked example's output: a recipe in the five sections the judge reads.
pub const EXAMPLE_RECIPE: &str = "## Materials
- Lanthanum(III) nitrate hexahydrate, La(NO3)3·6H2O, 99.9 %: 12.99 g (30.0 mmol)
- Strontium nitrate, Sr(NO3)2, 99 %: 4.23 g (20.0 mmol)
- Cobalt(II) nitrate hexahydrate, Co(NO3)2·6H2O, 98 %: 2.91 g (10.0 mmol)
- Iron(III) nitrate nonahydrate, Fe(NO3)3·9H2O, 98 %: 16.16 g (40.0 mmol)
- Ethylenediaminetetraacetic acid (EDTA), 99 %: 29.22 g (100 mmol; 1 mol per mol of metal ions)
- Citric acid monohydrate, 99.5 %: 42.03 g (200 mmol; 2 mol per mol of metal ions)
- Aqueous ammonia, 25-28 wt %: about 80 mL (dissolves the EDTA and sets the pH)
- Deionized water: about 500 mL
- Ethanol, absolute: 50 mL (milling medium)
- Terpineol with 5 wt % ethyl cellulose: ink vehicle for the test electrodes
- Dense Gd0.1Ce0.9O1.95 (GDC) pellets, 20 mm diameter, 1 mm thick: electrolyte of the symmetric cells

## Synthesis Equipment
- 2 L glass beaker, hot plate with magnetic stirrer and thermocouple
- pH meter
- Drying oven (up to 300 °C)
- Alumina crucibles and a box furnace (air, up to 1200 °C, programmable ramps)
- Planetary ball mill with a zirconia jar and 5 mm zirconia balls
- Agate mortar, 200-mesh sieve
- Screen printer (for the test electrodes)

## Synthesis Procedure
1. Dissolve the EDTA in 80 mL of aqueous ammonia diluted with 150 mL of deionized water at 60 °C under stirring until clear.
2. Dissolve the four nitrates in 250 mL of deionized water and pour the solution into the EDTA solution under stirring.
3. Add the citric acid, then adjust the pH to 6.0 with aqueous ammonia.
4. Evaporate at 80-90 °C under stirring for 6-8 h until a viscous, dark purple gel forms.
5. Dry the gel at 250 °C for 5 h; it swells and self-ignites into a black, porous ash.
6. Grind the ash in the agate mortar and calcine it in an alumina crucible at 950 °C for 5 h in static air (5 °C/min up, furnace cooling).
7. Ball-mill the powder in ethanol at 300 rpm for 2 h, dry at 80 °C and sieve (200 mesh). Yield: about 11 g (near quantitative).
8. Test electrodes: mix the powder with the ink vehicle (70:30 by weight), screen-print it on both faces of the GDC pellets and fire at 1000 °C for 2 h.

## Characterization Methods and Equipment
- X-ray diffraction (Cu Kα, 2θ = 20-80°): phase purity and lattice parameters
- Scanning electron microscopy: particle size and shape, electrode microstructure and adhesion
- N2 physisorption (BET): specific surface area
- Four-probe DC conductivity on bars sintered at 1250 °C for 5 h, 300-800 °C in air
- Dilatometry, 30-900 °C in air: thermal expansion coefficient
- Electrochemical impedance spectroscopy of the symmetric cells (1 MHz-0.1 Hz, 10 mV amplitude, 600-800 °C in air): polarization resistance

## Product Characteristics
- Single-phase rhombohedral perovskite (R-3c), without SrCO3 or La2O3 impurities
- Particles of 0.2-0.5 µm; specific surface area 5-8 m²/g
- Electrical conductivity of about 300 S/cm near 600 °C in air
- Thermal expansion coefficient of about 15-17 × 10^-6 K^-1 (30-800 °C)
- Polarization resistance of about 0.2 Ω cm² at 700 °C on GDC";

/// The line before the task's key contributions in the one-shot prompt.
pub const ONE_SHOT_ASK: &str = "Now, predict the synthesis recipe for the given key contributions:";

/// The sentence that introduces the references in the RAG prompt.
pub const RAG_INTRO: &str = "Here are recipes from research papers with similar contributions.";

/// The line before the task's key contributions in the RAG prompt.
pub const RAG_ASK: &str =
    "Based on these references, predict the synthesis recipe for the given key contributions:";

/// The one-shot prompt for key contributions `contribution` (X).
pub fn one_shot_prompt(contribution: &str) -> String {
    format!(
        "{PERSONA} Write the recipe in the format of the example below: the same Markdown sections in the same order, with amounts, conditions and equipment as specific as you can make them, and \"N/A\" for anything that does not apply.\n\n\
--- Example ---\n\
Key contributions:\n{EXAMPLE_CONTRIBUTION}\n\n\
Recipe:\n{EXAMPLE_RECIPE}\n\
--- End of example ---\n\n\
{ONE_SHOT_ASK}\n{contribution}"
    )
}

/// The reference block: "# Reference i:" (1-based), X, a blank line, Y; references
/// separated by a blank line.
pub fn reference_block(references: &[Reference]) -> String {
    references
        .iter()
        .enumerate()
        .map(|(i, r)| format!("# Reference {}:\n{}\n\n{}", i + 1, r.contribution, r.recipe))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The RAG prompt for `contribution` (X) with its retrieved `references`, nearest first.
/// With no references it is the one-shot prompt (see the module docs).
pub fn rag_prompt(contribution: &str, references: &[Reference]) -> String {
    if references.is_empty() {
        return one_shot_prompt(contribution);
    }
    format!(
        "{PERSONA} Write the recipe in the format of the recipes below: the same Markdown sections in the same order.\n\n\
{RAG_INTRO}\n\n\
{}\n\n\
{RAG_ASK}\n{contribution}",
        reference_block(references)
    )
}

/// The model's messages: one user message, no system message (K = `references.len()`).
pub fn prompt(contribution: &str, references: &[Reference]) -> Vec<Message> {
    vec![Message::user(rag_prompt(contribution, references))]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(x: &str, y: &str) -> Reference {
        Reference {
            contribution: x.into(),
            recipe: y.into(),
        }
    }

    #[test]
    fn k_zero_is_one_shot() {
        assert_eq!(rag_prompt("X", &[]), one_shot_prompt("X"));
        let m = prompt("X", &[]);
        assert_eq!(m.len(), 1);
        assert!(m[0].content.ends_with(&format!("{ONE_SHOT_ASK}\nX")));
    }

    #[test]
    fn references_are_numbered_from_one() {
        let p = rag_prompt("X", &[r("X1", "Y1"), r("X2", "Y2")]);
        assert!(p.contains(&format!(
            "{RAG_INTRO}\n\n# Reference 1:\nX1\n\nY1\n\n# Reference 2:\nX2\n\nY2\n\n{RAG_ASK}\nX"
        )));
        assert!(!p.contains("Reference 0") && !p.contains("Example"));
    }

    #[test]
    fn the_example_has_every_section() {
        for s in [
            "## Materials\n",
            "## Synthesis Equipment\n",
            "## Synthesis Procedure\n",
            "## Characterization Methods and Equipment\n",
            "## Product Characteristics\n",
        ] {
            assert_eq!(EXAMPLE_RECIPE.matches(s).count(), 1, "{s}");
        }
        for b in [
            "**Novel materials or compounds**",
            "**Unique synthesis methods**",
            "**Specific applications or domains**",
        ] {
            assert!(EXAMPLE_CONTRIBUTION.contains(b));
        }
    }
}
