//! MatTools: can a model use materials-science software? Code tasks whose generated Python
//! must run against pymatgen and return the right properties ([`code`]);
//! multiple-choice questions on pymatgen's API ([`qa`]).

pub mod code;
pub mod qa;
