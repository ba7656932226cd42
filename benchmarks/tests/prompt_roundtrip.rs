//! Every rendered prompt parses back to the same action, in every wording (property test).
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test
#![cfg(not(target_arch = "wasm32"))]

use benchmarks::atomworld::{parse_prompt, render_prompt, Action, PromptStyle, Separator, Wording};
use engine::cif::read_cif;
use engine::{Element, Structure};
use proptest::prelude::*;

fn structure() -> Structure {
    let line = include_str!("../../data/structures/minerals.jsonl")
        .lines()
        .find(|l| l.contains("\"n_sites\": 12"))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    read_cif(v["cif"].as_str().unwrap()).unwrap()
}

fn element() -> impl Strategy<Value = Element> {
    (1u32..=118).prop_map(|z| Element::from_z(z).unwrap())
}

fn vec3() -> impl Strategy<Value = [f64; 3]> {
    // Values as a generator prints them: eight decimals at most.
    prop::array::uniform3(-800_000_000i64..800_000_000).prop_map(|a| a.map(|x| x as f64 / 1e8))
}

fn scalar(decimals: u32) -> impl Strategy<Value = f64> {
    let scale = 10f64.powi(decimals as i32);
    (1i64..(10 * scale as i64)).prop_map(move |x| x as f64 / scale)
}

fn action() -> impl Strategy<Value = Action> {
    let i = 0usize..12;
    prop_oneof![
        (i.clone(), element()).prop_map(|(index, element)| Action::Change { index, element }),
        i.clone().prop_map(|index| Action::Remove { index }),
        (element(), vec3()).prop_map(|(element, position)| Action::Add { element, position }),
        (i.clone(), vec3()).prop_map(|(index, displacement)| Action::Move {
            index,
            displacement
        }),
        (i.clone(), i.clone(), scalar(4)).prop_map(|(index, towards, distance)| {
            Action::MoveTowards {
                index,
                towards,
                distance,
            }
        }),
        (element(), i.clone(), i.clone(), scalar(2))
            .prop_filter("distinct", |t| t.1 != t.2)
            .prop_map(|(element, from, to, distance)| Action::InsertBetween {
                element,
                from,
                to,
                distance
            }),
        (i.clone(), i.clone()).prop_map(|(first, second)| Action::Swap { first, second }),
        (i.clone(), any::<bool>()).prop_map(|(index, including_itself)| Action::DeleteBelow {
            index,
            including_itself
        }),
        (
            i.clone(),
            scalar(4),
            (0i64..3_600_000).prop_map(|x| x as f64 / 1e4),
            0usize..6
        )
            .prop_map(|(center, radius, angle, a)| {
                let mut axis = [0.0; 3];
                axis[a % 3] = if a < 3 { 1.0 } else { -1.0 };
                Action::RotateAround {
                    center,
                    radius,
                    angle,
                    axis,
                }
            }),
        prop::array::uniform3(1u32..5).prop_map(|size| Action::SuperCell { size }),
        vec3().prop_map(|displacement| Action::MoveAll { displacement }),
        (i.clone(), scalar(4)).prop_map(|(index, radius)| Action::DeleteAround { index, radius }),
        (prop::collection::vec(i.clone(), 1..5), vec3()).prop_map(|(indices, displacement)| {
            Action::MoveSelected {
                indices,
                displacement,
            }
        }),
        (i, scalar(4), vec3()).prop_map(|(index, radius, displacement)| Action::MoveAround {
            index,
            radius,
            displacement
        }),
    ]
}

fn wording() -> impl Strategy<Value = Wording> {
    prop_oneof![
        Just(Wording::Data2026),
        Just(Wording::FourDecimal),
        Just(Wording::Newest),
        Just(Wording::Oldest)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn rendered_prompts_parse_back(action in action(), wording in wording(), sep in 0usize..5) {
        let s = structure();
        let style = PromptStyle { wording, separator: Separator::ALL[sep] };
        let text = render_prompt(&action, style, &s).unwrap();
        let back = parse_prompt(&text, &s).unwrap();
        match (&action, &back, wording) {
            // The oldest insert_between wording prints a fraction with two decimals.
            (Action::InsertBetween { distance: d0, .. }, Action::InsertBetween { distance: d1, .. }, Wording::Oldest) => {
                let mut a = action.clone();
                if let Action::InsertBetween { distance, .. } = &mut a { *distance = *d1; }
                prop_assert_eq!(&a, &back, "{}", text);
                prop_assert!((d0 - d1).abs() < 0.2, "{} vs {}", d0, d1);
            }
            // The oldest delete_below wording can only say "Including itself" or nothing.
            _ => prop_assert_eq!(&action, &back, "{}", text),
        }
    }
}
