//! Finding a suite by name.

use std::sync::Arc;

use super::AnySuite;
use crate::atomworld::studies::atom_count::AtomCount;
use crate::atomworld::studies::bravais::Bravais;
use crate::atomworld::studies::position::Position;
use crate::atomworld::studies::Sensitivity;

/// No suite of that name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no suite named '{name}' (available: {available})")]
pub struct UnknownSuite {
    /// The name asked for.
    pub name: String,
    /// The names there are, comma-separated.
    pub available: String,
}

/// The suites a run loop or `atomworld eval` accepts.
#[derive(Clone)]
pub struct Registry {
    suites: Vec<Arc<dyn AnySuite>>,
}

impl Registry {
    /// The suite a command runs when none is named: AtomWorld, the playground's centre.
    pub const DEFAULT: &'static str = <crate::atomworld::suite::AtomWorld as super::Suite>::NAME;

    /// Every suite of the product.
    pub fn standard() -> Self {
        Self {
            suites: vec![
                Arc::new(crate::atomworld::suite::AtomWorld),
                Arc::new(crate::omnimat::OmniMatCal),
                Arc::new(crate::omnimat::OmniMatQa),
                Arc::new(crate::mattools::qa::suite::MatToolsQa),
                Arc::new(crate::mattools::code::MatToolsCode),
                Arc::new(crate::alchemy::Alchemy),
                Arc::new(crate::probes::points::PointWorld),
                Arc::new(crate::probes::cif_repair::CifRepair),
                Arc::new(crate::probes::cif_gen::CifGen),
                Arc::new(crate::probes::struct_prop::StructProp),
                Arc::new(crate::probes::move_all::MoveAll),
                Arc::new(Sensitivity::<AtomCount>::default()),
                Arc::new(Sensitivity::<Bravais>::default()),
                Arc::new(Sensitivity::<Position>::default()),
            ],
        }
    }

    /// This registry with `suite` added (or replacing one of the same name).
    pub fn with(mut self, suite: impl AnySuite + 'static) -> Self {
        self.suites.retain(|s| s.name() != suite.name());
        self.suites.push(Arc::new(suite));
        self
    }

    /// The suite called `name`.
    pub fn get(&self, name: &str) -> Result<Arc<dyn AnySuite>, UnknownSuite> {
        self.suites
            .iter()
            .find(|s| s.name() == name)
            .cloned()
            .ok_or_else(|| UnknownSuite {
                name: name.to_string(),
                available: self.names().join(", "),
            })
    }

    /// Whether some suite reserves `name` for one of its baselines.
    pub fn is_baseline(&self, name: &str) -> bool {
        self.suites.iter().any(|s| s.baselines().contains(&name))
    }

    /// The suites' names.
    pub fn names(&self) -> Vec<&'static str> {
        self.suites.iter().map(|s| s.name()).collect()
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::standard()
    }
}
