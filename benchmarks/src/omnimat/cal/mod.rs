//! CAL scoring: deterministic, pure, never panics.
//!
//! A prediction is cut into slots ([`prediction`]), each slot normalised ([`normalize`]),
//! read as a number where it is one ([`number`], on exact decimals: [`decimal`]) and matched
//! against its gold slot in exact and 10 % threshold mode ([`slot`]); [`score`] pairs the
//! slots and gives the item scores; [`summary`] the tables; [`error_class`] sorts wrong
//! answers into our own mechanical error classes.
//!
//! By default this reproduces the reference scorer, quirks included, so our numbers compare
//! with the paper's; where a quirk decides a slot the slot carries a [`Quirk`] and the
//! verdict a `note`. Where the reference crashes (huge values such as "4.0 × 10^62" against
//! a gold with decimals, `10^b` exponents above 999,999, exponents of more than 4,300
//! digits) ours compares the values unrounded, or as text when a value cannot be held, and
//! flags the slot with [`Quirk::ReferenceCrash`].

pub mod decimal;
pub mod error_class;
pub mod normalize;
pub mod number;
pub mod prediction;
pub mod pyjson;
pub mod score;
pub mod slot;
pub mod summary;

pub use error_class::{error_class, CalErrorClass};
pub use prediction::{
    gold_slots, parse_prediction, parse_prediction_value, prediction_text, reference_drops, Parsed,
    Route,
};
pub use score::{score_parsed, score_response, CalLabel, CalVerdict};
pub use slot::{score_slot, Quirk, SlotVerdict};
pub use summary::{overall, CalSummary};
