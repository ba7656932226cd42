//! Benchmark suites of AtomWorld Playground: tasks, prompts, generators and evaluators.
//!
//! Pure Rust (no I/O, clocks or async) so that the browser and the server compute the same
//! prompts and verdicts. [`atomworld`] is the main benchmark (actions, generator, evaluator);
//! [`probes`] holds its probes (PointWorld, CIF-Repair, CIF-Gen, StructProp); [`omnimat`] is
//! OmniMatBench (CAL and QA); [`alchemy`] is AlchemyBench (synthesis recipes, judged);
//! [`task`] is the suite-neutral task model every suite implements; [`direct`] asks a model
//! with the user's own key from the page; see docs/ARCHITECTURE.md.

pub mod alchemy;
pub mod atomworld;
pub mod case;
pub mod direct;
pub mod mattools;
pub mod omnimat;
pub mod probes;
pub mod provider;
pub mod retrieval;
pub mod task;
pub mod wire;
