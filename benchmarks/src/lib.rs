//! Benchmark suites of AtomWorld Playground: tasks, prompts, generators and evaluators.
//!
//! Pure Rust (no I/O, clocks or async) so that the browser and the server compute the same
//! prompts and verdicts. [`atomworld`] is the main benchmark (actions, generator, evaluator);
//! [`probes`] holds its probes (PointWorld, CIF-Repair, CIF-Gen, StructProp); [`omnimat`] is
//! OmniMatBench (CAL and QA); [`alchemy`] is AlchemyBench (synthesis recipes, judged);
//! [`mattools`] is MatTools (pymatgen QA and code tasks); [`task`] is the suite-neutral task
//! model every suite implements; [`retrieval`] the nearest-neighbour and word-piece search the
//! retrieving suites share. The HTTP types live in the `wire` crate, the providers' protocol in
//! `llm-protocol`; see docs/ARCHITECTURE.md.

pub mod alchemy;
pub mod atomworld;
pub mod mattools;
pub mod omnimat;
pub mod probes;
pub mod retrieval;
pub mod task;
